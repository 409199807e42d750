# run.sh sanitize: `compute-sanitizer --tool TOOL --error-exitcode 99 --report-api-errors no
# [--track-stream-ordered-races all, for memcheck] BIN --ignored --test-threads=1
# --nocapture` once per test binary that has GPU tests (CPU-only tests are CI's), JOBS
# binaries at once, libtest's output split into one result per test (parse_libtest.awk).
#
# --report-api-errors no: API errors are not bugs here. The tests provoke driver errors on
# purpose (bad launch shapes, out of memory, invalid handles) and check the typed errors,
# and the driver layer probes the driver (cuFuncGetParamInfo past a kernel's last
# parameter, cuGetProcAddress for functions an older driver lacks). Memory access, race,
# initialization and synchronization errors are still reported, and fail the run (exit
# status 99). A binary with such errors is run again one test per process under the
# sanitizer to name the tests responsible (their results replace the whole run's); its
# full output is kept in sanitizer-logs/. A binary that crashes or times out fails its
# unfinished tests. RUCUDA_SANITIZER=TOOL is exported: tests that provoke traps or
# out-of-memory errors skip, and heavy tests run at smaller sizes (rucuda-testkit).
#
# Sourced by run.sh after lib/common.sh.

US=$'\037' # field separator of the files jobs write: keeps empty fields, unlike a tab

# Sets PREFIX (the sanitizer command), MODE_LABEL and TIMEOUT for TOOL, and exports
# RUCUDA_SANITIZER; with LIST, a missing compute-sanitizer is no error.
sanitize_setup() {
    local sanitizer
    sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    if ((!LIST)) && [[ ! -x $sanitizer ]]; then
        echo "run.sh: compute-sanitizer not found (PATH, /usr/local/cuda/bin)" >&2
        exit 1
    fi
    PREFIX=("$sanitizer" --tool "$TOOL" --error-exitcode 99 --report-api-errors no)
    # memcheck also checks stream-ordered allocations against work on other streams
    # (a free or reuse while another stream still uses the memory).
    [[ $TOOL == memcheck ]] && PREFIX+=(--track-stream-ordered-races all)
    MODE_LABEL=sanitize:$TOOL
    export RUCUDA_SANITIZER=$TOOL
    TIMEOUT=${RUCUDA_TEST_TIMEOUT:-1200}
    ((LIST)) || rm -rf -- "$RESULTS/sanitizer-logs"
}

# Copies stdin to stdout with each line prefixed by the time it arrived and a tab.
stamp() {
    local line ts
    while IFS= read -r line || [[ -n $line ]]; do
        if [[ -n ${EPOCHREALTIME:-} ]]; then
            ts=$EPOCHREALTIME
        else
            printf -v ts '%(%s)T' -1
        fi
        printf '%s\t%s\n' "$ts" "$line"
    done
}

# One result line of a job: status seconds name reason tail_file (fields separated by US).
result_row() {
    local IFS=$US
    printf '%s\n' "$*" >>"$JOB_DIR/results"
}

# Keeps a whole log under $RESULTS/sanitizer-logs/ (binary, log).
keep_log() {
    mkdir -p -- "$RESULTS/sanitizer-logs" &&
        cp -- "$2" "$RESULTS/sanitizer-logs/$1.device-$JOB_DEVICE.log"
}

# Job: one example in its own process under the sanitizer.
sanitize_example() {
    local bin=$1 name=$2
    run_process "$bin" "$name" "$JOB_DIR/run.log" ''
    [[ $STATUS == failed ]] && keep_log "$bin" "$JOB_DIR/run.log"
    result_row "$STATUS" "$SECS" "$name" "$REASON" "$TAIL"
}

# Job: the GPU tests of one binary (their names in $JOB_DIR/names; $2 is 1 when they are
# all of the binary's ignored tests, so no name filters are needed) in one sanitizer
# process; then, when the sanitizer reported errors, each of them alone again.
sanitize_binary() {
    local bin=$1 whole=$2 dir=$JOB_DIR t0 t1 rc k=0 named=0 errors=0
    local st name secs first last skip finished sanerr crashed why tail_file reason row
    local -a names filters=() rows=()
    mapfile -t names <"$dir/names"
    ((whole)) || filters=(--exact "${names[@]}")
    t0=$(now)
    {
        timeout -k 10 "$TIMEOUT" "${PREFIX[@]}" "$HERE/bin/$bin" "${filters[@]}" \
            --ignored --test-threads=1 --nocapture </dev/null 2>&1 &
        echo "$!" >"$PID_FILE"
        wait "$!"
        echo "$?" >"$dir/rc"
    } | stamp >"$dir/stamped.log"
    t1=$(now)
    rc=$(<"$dir/rc")
    cut -f2- "$dir/stamped.log" >"$dir/run.log"
    awk -v names="$dir/names" -v t0="$t0" -v tend="$t1" -v marker="$MARKER" -v us="$US" \
        -f "$HERE/lib/parse_libtest.awk" "$dir/stamped.log" >"$dir/parsed"
    IFS=$US read -r _ finished sanerr crashed < <(grep '^#' "$dir/parsed")
    if ((rc == 99 || sanerr)) && [[ -n $TOOL ]]; then
        errors=1
    fi
    # Why tests did not finish: the binary crashed, timed out or stopped early.
    if ((rc == 124 || rc == 137)); then
        why="the whole binary timed out after ${TIMEOUT}s"
    else
        why="the binary stopped with exit status $rc"
    fi
    while IFS=$US read -r st name secs first last skip; do
        [[ $st == '#' ]] && continue
        tail_file='' reason=''
        case $st in
            passed) ;;
            skipped) reason=$skip ;;
            failed | noresult)
                reason="test failed"
                [[ $st == noresult ]] && reason="no result in libtest's output"
                st=failed
                tail_file=$dir/tail-$((k += 1))
                sed -n "${first},${last}p" "$dir/run.log" | tail -n 40 >"$tail_file"
                ;;
            crashed)
                reason="$why while this test ran"
                st=failed
                tail_file=$dir/tail-$((k += 1))
                sed -n "${first},\$p" "$dir/run.log" | tail -n 40 >"$tail_file"
                ;;
            notrun)
                st=failed
                if [[ -n $crashed ]]; then
                    reason="not run: $why in $crashed"
                elif ((finished)); then
                    reason="not run: libtest did not run it"
                else
                    reason="not run: $why before its first test"
                    if ((${#rows[@]} == 0)); then
                        tail_file=$dir/tail-$((k += 1))
                        tail -n 40 "$dir/run.log" >"$tail_file"
                    fi
                fi
                ;;
        esac
        rows+=("$st$US$secs$US$name$US$reason$US$tail_file")
    done <"$dir/parsed"
    if ((errors)); then
        # The sanitizer's errors belong to some of these tests: run each alone (skipped
        # ones stay skipped); their results replace the whole run's.
        keep_log "$bin" "$dir/run.log"
        local -a again=()
        for row in "${rows[@]}"; do
            IFS=$US read -r st secs name reason tail_file <<<"$row"
            if [[ $st == skipped ]]; then
                again+=("$row")
                continue
            fi
            k=$((k + 1))
            run_process "$bin" "$name" "$dir/alone-$k.log" --ignored
            [[ $REASON == compute-sanitizer* ]] && named=1
            again+=("$STATUS$US$SECS$US$name$US$REASON$US$TAIL")
        done
        rows=("${again[@]}")
        if ((!named)); then
            tail_file=$dir/tail-whole
            make_tail "$dir/run.log" 1 >"$tail_file"
            rows+=("failed${US}0$US(whole binary)$US$(
                printf 'compute-sanitizer (%s) reported errors in the run of the whole binary; no test alone reproduced them' "$TOOL"
            )$US$tail_file")
        fi
    else
        # A test that failed among the binary's other tests runs again alone (the suites
        # were written for a process per test): the reason says whether it fails alone too.
        local i failed_any=0
        for i in "${!rows[@]}"; do
            IFS=$US read -r st secs name reason tail_file <<<"${rows[$i]}"
            [[ $st == failed ]] && failed_any=1
            [[ $st == failed && $reason == "test failed" ]] || continue
            k=$((k + 1))
            run_process "$bin" "$name" "$dir/alone-$k.log" --ignored
            if [[ $STATUS == failed && $REASON == compute-sanitizer* ]]; then
                reason=$REASON
                tail_file=$TAIL
            elif [[ $STATUS == failed ]]; then
                reason="test failed (alone too: $REASON)"
            else
                reason="test failed among the binary's other tests; alone it $STATUS"
            fi
            rows[i]="failed$US$secs$US$name$US$reason$US$tail_file"
        done
        # compute-sanitizer exits 255 when the process made no CUDA call at all (every
        # test skipped itself): nothing was checked, nothing failed.
        if ((rc == 255)) && [[ -n $TOOL ]] &&
            grep -q 'terminated before first instrumented API call' "$dir/run.log"; then
            rc=0
        fi
        if ((finished && rc != 0 && !failed_any)); then
            # Every test has a result and none failed, yet the process did (at exit).
            tail_file=$dir/tail-whole
            tail -n 40 "$dir/run.log" >"$tail_file"
            rows+=("failed${US}0$US(whole binary)$US$(exit_reason "$rc") after all its tests$US$tail_file")
        fi
        ((finished)) || keep_log "$bin" "$dir/run.log"
    fi
    for row in "${rows[@]}"; do
        printf '%s\n' "$row" >>"$dir/results"
    done
}

# Starts job $1 in the background: "binary|example<US>bin<US>device<US>whole or name".
start_job() {
    local k=$1 kind bin dev arg
    IFS=$US read -r kind bin dev arg <<<"${JOBS_LIST[$k]}"
    mkdir -p "$WORK/job-$k"
    (
        trap - EXIT INT TERM
        JOB_DIR=$WORK/job-$k JOB_DEVICE=$dev PID_FILE=$WORK/job-$k/pid
        if [[ $dev != none && -z ${CUDA_VISIBLE_DEVICES+set} ]]; then
            PREFIX=(env "CUDA_VISIBLE_DEVICES=$dev" "${PREFIX[@]}")
        fi
        : >"$JOB_DIR/results"
        if [[ $kind == binary ]]; then
            sanitize_binary "$bin" "$arg"
        else
            sanitize_example "$bin" "$arg"
        fi
        : >"$JOB_DIR/done"
    ) &
}

# Records the results of every finished job among RUNNING; true when there was one.
collect_jobs() {
    local k kind bin dev arg st secs name reason tail_file any=1 ignored
    local -a still=()
    for k in "${RUNNING[@]}"; do
        if [[ ! -e $WORK/job-$k/done ]]; then
            still+=("$k")
            continue
        fi
        any=0
        IFS=$US read -r kind bin dev arg <<<"${JOBS_LIST[$k]}"
        ignored=true
        [[ $kind == example ]] && ignored=false
        while IFS=$US read -r st secs name reason tail_file; do
            [[ -n $st ]] || continue
            record "$bin" "$name" "$dev" "$ignored" "$st" "$secs" "$reason" "$tail_file"
            [[ $st == failed ]] && keep_failure "$bin" "$name" "$dev" "$reason" "$tail_file"
        done <"$WORK/job-$k/results"
        write_summary
    done
    RUNNING=("${still[@]}")
    return "$any"
}

# Waits for some job to finish and records it.
wait_jobs() {
    collect_jobs && return
    wait -n 2>/dev/null
    collect_jobs || sleep 0.2
}

# Stops the running jobs' processes (on an interrupt), keeping the results so far.
stop_jobs() {
    local k
    local -a pids
    mapfile -t pids < <(jobs -p)
    ((${#pids[@]})) && kill -TERM "${pids[@]}" 2>/dev/null
    for k in "${RUNNING[@]}"; do
        [[ -f $WORK/job-$k/pid ]] && kill -TERM "$(<"$WORK/job-$k/pid")" 2>/dev/null
    done
    wait
    write_summary
    echo "run.sh: interrupted; results so far in $RESULTS/summary.json" >&2
    exit 130
}

# Runs every job of JOBS_LIST, JOBS at a time.
run_jobs() {
    local k
    RUNNING=()
    trap stop_jobs INT TERM
    for k in "${!JOBS_LIST[@]}"; do
        while ((${#RUNNING[@]} >= JOBS)); do
            wait_jobs
        done
        start_job "$k"
        RUNNING+=("$k")
    done
    while ((${#RUNNING[@]})); do
        wait_jobs
    done
    trap - INT TERM
}

# Runs TESTS under the sanitizer: one job per binary (its GPU tests in one sanitizer
# process; the binaries with the most tests first) and one per example, for every device
# pass.
run_sanitize() {
    local t bin ignored name dev k whole
    local -A group=()
    local -a bin_order=() example_tests=() unlisted=()
    for t in "${TESTS[@]}"; do
        IFS=$'\t' read -r bin ignored name <<<"$t"
        if [[ $name == --list ]]; then
            unlisted+=("$bin")
        elif [[ $name == "(example)"* ]]; then
            example_tests+=("$bin$US$name")
        else
            [[ -n ${group[$bin]+set} ]] || bin_order+=("$bin")
            group[$bin]+=$name$'\n'
        fi
    done
    mapfile -t bin_order < <(
        for bin in "${bin_order[@]}"; do
            printf '%s\t%s\n' "$(printf '%s' "${group[$bin]}" | grep -c .)" "$bin"
        done | sort -t $'\t' -k1,1nr -s | cut -f2-
    )
    JOBS_LIST=()
    for dev in "${DEVICES[@]}"; do
        for bin in "${unlisted[@]}"; do
            record "$bin" "(listing)" "$dev" false failed 0 "the binary did not list its tests" ""
            keep_failure "$bin" "(listing)" "$dev" "the binary did not list its tests" ""
        done
        for bin in "${bin_order[@]}"; do
            k=${#JOBS_LIST[@]}
            mkdir -p "$WORK/job-$k"
            printf '%s' "${group[$bin]}" >"$WORK/job-$k/names"
            whole=0
            [[ -z $PATTERN || $bin == *"$PATTERN"* ]] && whole=1
            JOBS_LIST+=("binary$US$bin$US$dev$US$whole")
        done
        for t in "${example_tests[@]}"; do
            IFS=$US read -r bin name <<<"$t"
            JOBS_LIST+=("example$US$bin$US$dev$US$name")
        done
    done
    echo "rucuda bundle: $((${#TESTS[@]} - ${#unlisted[@]} - ${#example_tests[@]})) GPU tests in" \
        "${#bin_order[@]} binaries and ${#example_tests[@]} examples x ${#DEVICES[@]} device pass(es)," \
        "mode $MODE_LABEL, $JOBS at once, timeout ${TIMEOUT}s per process;" \
        "$CPU_ONLY CPU-only tests left to CI" >&2
    write_summary
    run_jobs
}
