# A plain run (run.sh without sanitize): every test of TESTS, each in its own process, and
# the examples, once per device pass. Sourced by run.sh after lib/common.sh.

# Runs one test, or one example (name "(example) ARGS..."), in its own process and records it.
run_one() {
    local bin=$1 name=$2 dev=$3 ignored=$4
    run_process "$bin" "$name" "$WORK/current.log" --include-ignored
    [[ $STATUS == failed ]] && keep_failure "$bin" "$name" "$dev" "$REASON" "$TAIL"
    record "$bin" "$name" "$dev" "$ignored" "$STATUS" "$SECS" "$REASON" "$TAIL"
    write_summary
}

# Runs every test of TESTS ("binary<TAB>ignored<TAB>name") once per device of DEVICES,
# with CUDA_VISIBLE_DEVICES set to it unless the caller set it.
run_plain() {
    local dev t bin ignored name
    echo "rucuda bundle: ${#TESTS[@]} tests x ${#DEVICES[@]} device pass(es), mode $MODE_LABEL, timeout ${TIMEOUT}s" >&2
    for dev in "${DEVICES[@]}"; do
        for t in "${TESTS[@]}"; do
            IFS=$'\t' read -r bin ignored name <<<"$t"
            if [[ $name == --list ]]; then
                record "$bin" "(listing)" "$dev" false failed 0 "the binary did not list its tests" ""
                continue
            fi
            if [[ $dev == none || ${CUDA_VISIBLE_DEVICES+set} ]]; then
                run_one "$bin" "$name" "$dev" "$ignored"
            else
                CUDA_VISIBLE_DEVICES=$dev run_one "$bin" "$name" "$dev" "$ignored"
            fi
        done
    done
}
