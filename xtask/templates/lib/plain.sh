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
# with CUDA_VISIBLE_DEVICES set to it unless the caller set it; JOBS of them at once.
run_plain() {
    local dev
    echo "rucuda bundle: ${#TESTS[@]} tests x ${#DEVICES[@]} device pass(es), mode $MODE_LABEL, timeout ${TIMEOUT}s, $JOBS at once" >&2
    for dev in "${DEVICES[@]}"; do
        if ((JOBS == 1)); then
            run_share "$dev" 0 1
        else
            run_shared_out "$dev"
        fi
    done
}

# Runs the tests of TESTS whose index is K modulo N, on device DEV: run_share DEV K N.
run_share() {
    local dev=$1 k=$2 n=$3 i t bin ignored name
    for ((i = k; i < ${#TESTS[@]}; i += n)); do
        t=${TESTS[$i]}
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
}

# Tests that run the device (or the host) out of memory on purpose carry this in their
# name: a worker's run leaves them out, and they run one at a time after the workers end,
# with the GPU to themselves (run together, the others' contexts fail to start).
ALONE_PATTERN=out_of_memory

# Deals the tests of one device pass to JOBS workers (background subshells, each with its
# own work folder), then takes their records, counts and kept failures in as if one
# process had run them, then runs the ALONE_PATTERN tests by themselves. A worker writes
# no summary.json; the parent does after each pass.
run_shared_out() {
    local dev=$1 k parent_work=$WORK line i p f s c t
    local -a shared=() alone=() all=("${TESTS[@]}")
    for t in "${TESTS[@]}"; do
        if [[ ${t##*$'\t'} == *"$ALONE_PATTERN"* ]]; then alone+=("$t"); else shared+=("$t"); fi
    done
    # Tests that check free device memory or host timings look at this (other test
    # processes use the GPU meanwhile): rucuda_testkit::gpu_shared.
    export RUCUDA_TEST_SHARED_GPU=1
    for ((k = 0; k < JOBS; k++)); do
        mkdir -p -- "$parent_work/worker-$k"
        (
            WORK=$parent_work/worker-$k RECORDS=() PASSED=0 FAILED=0 SKIPPED=0 FAIL_COUNT=0
            TESTS=("${shared[@]}")
            write_summary() { :; }
            run_share "$dev" "$k" "$JOBS"
            printf '%s\n' "${RECORDS[@]}" >"$WORK/records"
            echo "$PASSED $FAILED $SKIPPED $FAIL_COUNT" >"$WORK/counts"
        ) &
    done
    wait
    for ((k = 0; k < JOBS; k++)); do
        local w=$parent_work/worker-$k
        if [[ ! -f $w/counts ]]; then
            record "(worker $k)" "(worker)" "$dev" false failed 0 "a test worker ended without its results" ""
            continue
        fi
        while IFS= read -r line; do
            [[ -n $line ]] && RECORDS+=("$line")
        done <"$w/records"
        read -r p f s c <"$w/counts"
        PASSED=$((PASSED + p)) FAILED=$((FAILED + f)) SKIPPED=$((SKIPPED + s))
        for ((i = 1; i <= c; i++)); do
            FAIL_COUNT=$((FAIL_COUNT + 1))
            mv -- "$w/fail-$i.log" "$parent_work/fail-$FAIL_COUNT.log"
            mv -- "$w/fail-$i.log.head" "$parent_work/fail-$FAIL_COUNT.log.head"
        done
    done
    unset RUCUDA_TEST_SHARED_GPU
    if ((${#alone[@]})); then
        TESTS=("${alone[@]}")
        run_share "$dev" 0 1
        TESTS=("${all[@]}")
    fi
    write_summary
}
