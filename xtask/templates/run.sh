#!/usr/bin/env bash
# Runs the rucuda GPU test bundle; written by `cargo xtask gpu-test` / `cargo xtask bench`.
# Needs only bash (4.4 or newer), coreutils, awk and the NVIDIA driver: no Rust. The bundle
# folder is all it reads.
#
#   run.sh                      every test, each in its own process, once per visible GPU
#   run.sh filter PATTERN       only tests whose binary or name contains PATTERN
#   run.sh exclude PATTERN      leaves out the test binaries and examples whose name contains
#                               PATTERN (may be repeated; combines with filter and sanitize)
#   run.sh sanitize [TOOL] [--jobs N]
#                               the GPU tests (those libtest lists as ignored) and the
#                               examples under compute-sanitizer: memcheck (default),
#                               racecheck, initcheck or synccheck; one sanitizer process per
#                               test binary, N of them at once on the GPU (default 4, or
#                               RUCUDA_SANITIZE_JOBS); combines with filter and exclude
#   run.sh list                 the tests, without running them (after sanitize: the GPU
#                               tests and examples it would run)
#   run.sh bench [--quick] [--copy-mib N] [--cases PATTERN] [--no-peers]
#                               the bench binary with its peers (CuPy, NVIDIA's CUDA C++,
#                               PyTorch's all-reduce where 2 or more GPUs are visible)
#
# Results go to $OUT when set, else beside this script: summary.json for tests,
# bench.jsonl and bench.md for the bench. The last line of a test run is
# "N passed, N failed, N skipped". A test that prints a line starting with
# "RUCUDA_SKIPPED: reason" counts as skipped.
# Environment: RUCUDA_TEST_TIMEOUT (seconds per process: 300 for a test; under the
# sanitizer 1200 for a whole test binary, and for each test when one is run alone).
#
# sanitize runs `compute-sanitizer --tool TOOL --error-exitcode 99 --report-api-errors no
# [--track-stream-ordered-races all, for memcheck] BIN --ignored --test-threads=1
# --nocapture` once per test binary that has GPU tests
# (CPU-only tests are CI's) and splits libtest's output into one result per test. It
# passes --report-api-errors no because API errors are not bugs here: the tests provoke
# driver errors on purpose (bad launch shapes, out of memory, invalid handles) and check
# the typed errors, and the driver layer probes the driver (cuFuncGetParamInfo past a
# kernel's last parameter, cuGetProcAddress for functions an older driver lacks). Memory
# access, race, initialization and synchronization errors are still reported, and fail
# the run (exit status 99). A binary with such errors is run again one test per process
# under the sanitizer to name the tests responsible (their results replace the whole
# run's); its full output is kept in sanitizer-logs/. A binary that crashes or times out
# fails its unfinished tests. RUCUDA_SANITIZER=TOOL is exported: tests that provoke traps
# or out-of-memory errors skip, and heavy tests run at smaller sizes (rucuda-testkit).
set -uo pipefail
export LC_ALL=C

HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
RESULTS=${OUT:-$HERE}
MARKER='RUCUDA_SKIPPED:'
US=$'\037' # field separator of the files jobs write: keeps empty fields, unlike a tab
if ! mkdir -p -- "$RESULTS" 2>/dev/null || [[ ! -w $RESULTS ]]; then
    RESULTS=$(mktemp -d /tmp/rucuda-results.XXXXXX)
    echo "run.sh: ${OUT:-$HERE} is not writable; results go to $RESULTS" >&2
fi

# Prints the comment block at the top of this script (the usage).
usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
    exit 2
}

# Prints its argument as a JSON string: quotes, backslashes and control characters escaped.
json_str() {
    local s=$1
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\t'/\\t}
    s=${s//$'\r'/\\r}
    s=${s//$'\n'/\\n}
    printf '"%s"' "$s"
}

# Keeps text JSON-safe: drops control characters other than tab and newline, and bytes
# that are not valid UTF-8.
clean() {
    tr -d '\000-\010\013-\037\177' | { iconv -f UTF-8 -t UTF-8 -c 2>/dev/null || cat; }
}

now() { printf '%s' "${EPOCHREALTIME:-$(date +%s.%N)}"; }

# Seconds from $1 to $2 (timestamps from now), three decimals.
seconds_between() { awk -v a="$1" -v b="$2" 'BEGIN { d = b - a; printf "%.3f", d < 0 ? 0 : d }'; }

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

# The tests of one binary, one "ignored<TAB>name" line each (ignored is true or false).
list_tests() {
    local bin=$1 all ignored line name
    all=$("$HERE/bin/$bin" --list --format terse 2>/dev/null) || return 1
    ignored=$("$HERE/bin/$bin" --list --format terse --ignored 2>/dev/null) || return 1
    declare -A is_ignored=()
    while IFS= read -r line; do
        [[ $line == *': test' ]] && is_ignored[${line%: test}]=1
    done <<<"$ignored"
    while IFS= read -r line; do
        [[ $line == *': test' ]] || continue
        name=${line%: test}
        if [[ -n ${is_ignored[$name]:-} ]]; then
            printf 'true\t%s\n' "$name"
        else
            printf 'false\t%s\n' "$name"
        fi
    done <<<"$all"
}

# True when a binary or example name contains one of the exclude patterns.
excluded() {
    local p
    for p in "${EXCLUDES[@]}"; do
        [[ $1 == *"$p"* ]] && return 0
    done
    return 1
}

# Records one result: binary name device ignored status seconds reason tail_file
RECORDS=()
PASSED=0 FAILED=0 SKIPPED=0
record() {
    local bin=$1 name=$2 dev=$3 ignored=$4 status=$5 secs=$6 reason=$7 tail_file=$8 rec
    rec="{\"binary\":$(json_str "$bin"),\"name\":$(json_str "$name"),\"device\":$(json_str "$dev")"
    rec+=",\"ignored\":$ignored,\"status\":\"$status\",\"seconds\":$secs"
    [[ -n $reason ]] && rec+=",\"reason\":$(json_str "$reason")"
    if [[ -n $tail_file ]]; then
        rec+=",\"output_tail\":$(json_str "$(clean <"$tail_file")")"
    fi
    RECORDS+=("$rec}")
    case $status in
        passed) PASSED=$((PASSED + 1)) ;;
        failed) FAILED=$((FAILED + 1)) ;;
        skipped) SKIPPED=$((SKIPPED + 1)) ;;
    esac
    printf '%-7s %8ss  [%s] %s %s%s\n' "${status^^}" "$secs" "$dev" "$bin" "$name" \
        "${reason:+  ($reason)}"
}

# Keeps a failure's output tail for the report printed at the end:
# binary name device reason tail_file (may be empty).
keep_failure() {
    FAIL_COUNT=$((FAIL_COUNT + 1))
    if [[ -n $5 ]]; then
        cp -- "$5" "$WORK/fail-$FAIL_COUNT.log"
    else
        : >"$WORK/fail-$FAIL_COUNT.log"
    fi
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >"$WORK/fail-$FAIL_COUNT.log.head"
}

write_summary() {
    local file=$RESULTS/summary.json i
    {
        printf '{"mode":%s,"date":%s,"host":%s,' "$(json_str "$MODE_LABEL")" \
            "$(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" "$(json_str "${HOSTNAME:-}")"
        printf '"devices":['
        for i in "${!DEVICE_NAMES[@]}"; do
            ((i)) && printf ','
            json_str "${DEVICE_NAMES[$i]}"
        done
        printf '],"passed":%d,"failed":%d,"skipped":%d,"tests":[\n' "$PASSED" "$FAILED" "$SKIPPED"
        for i in "${!RECORDS[@]}"; do
            ((i)) && printf ',\n'
            printf '%s' "${RECORDS[$i]}"
        done
        printf '\n]}\n'
    } >"$file.tmp" && mv -f -- "$file.tmp" "$file"
}

# Why a process failed, from its exit status.
exit_reason() {
    case $1 in
        124 | 137) printf 'timed out after %ss' "$TIMEOUT" ;;
        *) printf 'exit status %s' "$1" ;;
    esac
}

# True when compute-sanitizer reported errors: its exit status (--error-exitcode 99) or
# its summary line in the log ("ERROR SUMMARY: N errors", racecheck's "(N errors, ...").
sanitizer_errors() {
    local log=$1 rc=$2
    [[ -n $TOOL ]] || return 1
    ((rc == 99)) && return 0
    grep -qE '^=+ .*(ERROR SUMMARY: [1-9]|\([1-9][0-9]* errors?,)' "$log"
}

# A failure's output tail: the last 40 lines; for a sanitizer failure, the sanitizer's
# report first (its first 60 lines), then the last 15 lines of the rest.
make_tail() {
    local log=$1 sanitizer=$2
    if ((sanitizer)); then
        grep -E '^=+( |$)' "$log" | head -n 60
        echo '...'
        grep -vE '^=+( |$)' "$log" | tail -n 15
    else
        tail -n 40 "$log"
    fi
}

# Runs one command in its own process under the timeout (and the sanitizer), output to
# $1. Sets RC (its exit status) and SECS. With $PID_FILE set, the timeout's process id is
# written there (run.sh stops it when interrupted).
run_logged() {
    local log=$1 t0 t1
    shift
    t0=$(now)
    if [[ -n ${PID_FILE:-} ]]; then
        timeout -k 10 "$TIMEOUT" "${PREFIX[@]}" "$@" >"$log" 2>&1 </dev/null &
        echo "$!" >"$PID_FILE"
        wait "$!"
        RC=$?
    else
        timeout -k 10 "$TIMEOUT" "${PREFIX[@]}" "$@" >"$log" 2>&1 </dev/null
        RC=$?
    fi
    t1=$(now)
    SECS=$(seconds_between "$t0" "$t1")
}

# Sets STATUS and REASON for a process that ran one test (kind "test", run with --exact)
# or an example (kind "example"), from its log and exit status.
classify() {
    local log=$1 rc=$2 kind=$3 skip_line
    STATUS=passed REASON=''
    skip_line=$(grep -m1 -E "(^|\\.\\.\\. )$MARKER" "$log" | clean)
    if ((rc == 0)) && [[ -n $skip_line ]]; then
        STATUS=skipped
        REASON=${skip_line#*"$MARKER"}
        REASON=${REASON# }
    elif ((rc == 0)) && [[ $kind == test ]] && ! grep -q '^running 1 test' "$log"; then
        STATUS=failed
        REASON="the binary ran no test of that name"
    elif ((rc != 0)); then
        STATUS=failed
        if sanitizer_errors "$log" "$rc"; then
            REASON="compute-sanitizer ($TOOL) reported errors"
        else
            REASON=$(exit_reason "$rc")
        fi
    fi
}

# Runs one test, or one example (name "(example) ARGS..."), in its own process and records it.
run_one() {
    local bin=$1 name=$2 dev=$3 ignored=$4 log kind=test tail_file=''
    local -a cmd args
    if [[ $name == "(example)"* ]]; then
        read -ra args <<<"${name#"(example)"}"
        cmd=("$HERE/examples/$bin" "${args[@]}")
        kind=example
    else
        cmd=("$HERE/bin/$bin" --exact "$name" --include-ignored --test-threads=1 --nocapture)
    fi
    log=$WORK/current.log
    run_logged "$log" "${cmd[@]}"
    classify "$log" "$RC" "$kind"
    if [[ $STATUS == failed ]]; then
        tail_file=$WORK/current.tail
        make_tail "$log" "$([[ $REASON == compute-sanitizer* ]] && echo 1 || echo 0)" >"$tail_file"
        keep_failure "$bin" "$name" "$dev" "$REASON" "$tail_file"
    fi
    record "$bin" "$name" "$dev" "$ignored" "$STATUS" "$SECS" "$REASON" "$tail_file"
    write_summary
}
# Splits the stamped output of one test binary run by libtest with --test-threads=1 and
# --nocapture into its tests. libtest prints "test NAME ... " when a test starts (or
# "test NAME - should panic ... "), then the
# test's own output, then "ok" or "FAILED" at the end of a line; after the last test a
# "failures:" list of the failed tests' names (indented by 4 spaces) and a line starting
# with "test result:". Input: the stamped log; -v names=FILE: the names asked for, one a
# line.
# Output, one line per name in their order (fields separated by US): status (passed,
# failed, skipped, crashed: running when the output stopped, notrun, noresult), name,
# seconds, first and last line of its output in the log, skip reason; then a last line
# "#", whether libtest finished, whether a sanitizer summary reported errors, the test
# that was running when the output stopped.
# shellcheck disable=SC2016 # an awk program, not shell
PARSE_LIBTEST='
function finish() {
    if (cur != "") { prev = end[cur]; cur = "" }
}
BEGIN {
    n = 0; cur = ""; done = 0; fails = 0; sanerr = 0; prev = t0 + 0
    while ((getline line < names) > 0) if (line != "") { known[line] = 1; order[++n] = line }
    close(names)
}
{
    tab = index($0, "\t")
    ts = substr($0, 1, tab - 1) + 0
    text = substr($0, tab + 1)
    sub(/\r$/, "", text)
    if (text ~ /^=+( |$)/) {
        if (text ~ /ERROR SUMMARY: [1-9]/ || text ~ /\([1-9][0-9]* errors?,/) sanerr = 1
        if (cur != "") { last[cur] = FNR; end[cur] = ts }
        next
    }
    if (fails) {
        if (substr(text, 1, 4) == "    " && (substr(text, 5) in known)) failed[substr(text, 5)] = 1
        if (text ~ /^test result: /) done = 1
        next
    }
    if (substr(text, 1, 5) == "test " && (p = index(text, " ... ")) > 0) {
        nm = substr(text, 6, p - 6)
        # "test NAME - should panic ... ": names have no spaces.
        if ((sp = index(nm, " ")) > 0) nm = substr(nm, 1, sp - 1)
        if ((nm in known) && !(nm in started)) {
            finish()
            cur = nm; started[nm] = 1; first[nm] = FNR; last[nm] = FNR
            begin[nm] = prev; end[nm] = ts
            text = substr(text, p + 5)
            if (text == "") next
        }
    }
    if (text ~ /^test result: /) { finish(); done = 1; next }
    if (text == "failures:") { finish(); fails = 1; next }
    if (cur == "") next
    last[cur] = FNR; end[cur] = ts
    if (index(text, marker) == 1) {
        r = substr(text, length(marker) + 1); sub(/^ +/, "", r); skip[cur] = r
    }
    if (text ~ /FAILED$/) kind[cur] = "FAILED"
    else if (text ~ /ok$/) kind[cur] = "ok"
    else if (text !~ /^[ \t]*$/) kind[cur] = ""
}
END {
    crashed = ""
    if (cur != "" && !done) crashed = cur
    for (i = 1; i <= n; i++) {
        nm = order[i]
        if (!(nm in started)) { st = "notrun"; secs = 0 }
        else {
            e = (nm == crashed) ? tend + 0 : end[nm]
            secs = e - begin[nm]; if (secs < 0) secs = 0
            if (nm == crashed) st = "crashed"
            else if ((nm in failed) || kind[nm] == "FAILED") st = "failed"
            else if (done || kind[nm] == "ok") st = (nm in skip) ? "skipped" : "passed"
            else st = "noresult"
        }
        printf "%s%s%s%s%.3f%s%d%s%d%s%s\n", st, us, nm, us, secs, us, first[nm] + 0, us, \
            last[nm] + 0, us, skip[nm]
    }
    printf "#%s%d%s%d%s%s\n", us, done, us, sanerr, us, crashed
}
'

# One result line of a job: status seconds name reason tail_file (fields separated by US).
result_row() {
    local IFS=$US
    printf '%s\n' "$*" >>"$JOB_DIR/results"
}

# Job: one example in its own process under the sanitizer.
sanitize_example() {
    local bin=$1 name=$2 log=$JOB_DIR/run.log tail_file=''
    local -a args
    read -ra args <<<"${name#"(example)"}"
    run_logged "$log" "$HERE/examples/$bin" "${args[@]}"
    classify "$log" "$RC" example
    if [[ $STATUS == failed ]]; then
        tail_file=$JOB_DIR/tail
        make_tail "$log" "$([[ $REASON == compute-sanitizer* ]] && echo 1 || echo 0)" >"$tail_file"
        keep_log "$bin" "$log"
    fi
    result_row "$STATUS" "$SECS" "$name" "$REASON" "$tail_file"
}

# Keeps a whole log under $RESULTS/sanitizer-logs/ (binary, log).
keep_log() {
    mkdir -p -- "$RESULTS/sanitizer-logs" &&
        cp -- "$2" "$RESULTS/sanitizer-logs/$1.device-$JOB_DEVICE.log"
}

# Job: the GPU tests of one binary (their names in $JOB_DIR/names; $2 is 1 when they are
# all of the binary's ignored tests, so no name filters are needed) in one sanitizer
# process; then, when the sanitizer reported errors, each of them alone again.
sanitize_binary() {
    local bin=$1 whole=$2 dir=$JOB_DIR t0 t1 rc k=0 named=0 errors=0
    local st name secs first last skip finished sanerr crashed why tail_file reason
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
        "$PARSE_LIBTEST" "$dir/stamped.log" >"$dir/parsed"
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
            run_logged "$dir/alone-$k.log" "$HERE/bin/$bin" --exact "$name" --ignored \
                --test-threads=1 --nocapture
            classify "$dir/alone-$k.log" "$RC" test
            tail_file=''
            if [[ $STATUS == failed ]]; then
                tail_file=$dir/tail-$k
                if [[ $REASON == compute-sanitizer* ]]; then
                    named=1
                    make_tail "$dir/alone-$k.log" 1 >"$tail_file"
                else
                    make_tail "$dir/alone-$k.log" 0 >"$tail_file"
                fi
            fi
            again+=("$STATUS$US$SECS$US$name$US$REASON$US$tail_file")
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
            run_logged "$dir/alone-$k.log" "$HERE/bin/$bin" --exact "$name" --ignored \
                --test-threads=1 --nocapture
            classify "$dir/alone-$k.log" "$RC" test
            if [[ $STATUS == failed && $REASON == compute-sanitizer* ]]; then
                reason=$REASON
                make_tail "$dir/alone-$k.log" 1 >"$tail_file"
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
# The number of GPUs a process started here sees: CUDA_VISIBLE_DEVICES when set, else
# the GPUs nvidia-smi lists.
visible_gpus() {
    if [[ -n ${CUDA_VISIBLE_DEVICES+set} ]]; then
        local -a ids
        IFS=, read -ra ids <<<"$CUDA_VISIBLE_DEVICES"
        echo "${#ids[@]}"
    elif command -v nvidia-smi >/dev/null; then
        nvidia-smi -L 2>/dev/null | grep -c '^GPU '
    else
        echo 0
    fi
}

# The GPU peers first (their JSON lines are merged by the bench binary), then the bench.
# NCCL's NVLink multicast stays off for the all-reduce cases (rucuda's and PyTorch's).
run_bench() {
    local bench=$HERE/bin/rucuda-bench peers=1 tmp nvcc rc gpus
    export NCCL_NVLS_ENABLE=0
    local -a peer_args=()
    while (($#)); do
        case $1 in
            --quick) export RUCUDA_BENCH_QUICK=1 ;;
            --copy-mib) export RUCUDA_BENCH_COPY_MIB=${2:?--copy-mib needs a number}; shift ;;
            --cases) export RUCUDA_BENCH_CASES=${2:?--cases needs a pattern}; shift ;;
            --no-peers) peers=0 ;;
            *) echo "run.sh bench: unknown option '$1'" >&2; usage ;;
        esac
        shift
    done
    if [[ ! -x $bench ]]; then
        echo "run.sh: this bundle has no bench binary; build it with 'cargo xtask bench --no-run'" >&2
        return 1
    fi
    tmp=$(mktemp -d /tmp/rucuda-bench.XXXXXX)
    if ((peers)) && [[ -f $HERE/peers/cupy_bench.py ]]; then
        if command -v python3 >/dev/null; then
            echo "== peer cupy: python3 peers/cupy_bench.py" >&2
            python3 "$HERE/peers/cupy_bench.py" >"$tmp/cupy.jsonl" ||
                echo "== peer cupy: some cases failed (see above)" >&2
            [[ -s $tmp/cupy.jsonl ]] && peer_args+=(--peer-results "$tmp/cupy.jsonl")
        else
            echo "== peer cupy skipped: no python3" >&2
        fi
    fi
    gpus=$(visible_gpus)
    if ((peers)) && [[ -f $HERE/peers/torch_allreduce.py ]]; then
        if ((gpus >= 2)) && command -v python3 >/dev/null; then
            echo "== peer torch: python3 peers/torch_allreduce.py ($gpus GPUs)" >&2
            python3 "$HERE/peers/torch_allreduce.py" >"$tmp/torch.jsonl" ||
                echo "== peer torch: some cases failed (see above)" >&2
            [[ -s $tmp/torch.jsonl ]] && peer_args+=(--peer-results "$tmp/torch.jsonl")
        else
            echo "== peer torch skipped: the all-reduce needs python3 and 2 or more GPUs ($gpus visible)" >&2
        fi
    fi
    nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    if ((peers)) && [[ -f $HERE/peers/nvidia_bench.cu ]]; then
        if [[ -x $nvcc ]]; then
            echo "== peer nvidia: $nvcc peers/nvidia_bench.cu -> $tmp/nvidia_bench" >&2
            if "$nvcc" -O3 -std=c++17 -arch=native -o "$tmp/nvidia_bench" "$HERE/peers/nvidia_bench.cu" ||
                "$nvcc" -O3 -std=c++17 -o "$tmp/nvidia_bench" "$HERE/peers/nvidia_bench.cu"; then
                "$tmp/nvidia_bench" >"$tmp/nvidia.jsonl" ||
                    echo "== peer nvidia: some cases failed (see above)" >&2
                [[ -s $tmp/nvidia.jsonl ]] && peer_args+=(--peer-results "$tmp/nvidia.jsonl")
            else
                echo "== peer nvidia: nvcc failed; its cases are left out" >&2
            fi
        else
            echo "== peer nvidia skipped: no nvcc" >&2
        fi
    fi
    rc=0
    "$bench" --out "$RESULTS" "${peer_args[@]}" || rc=$?
    rm -rf -- "$tmp"
    return "$rc"
}

MODE=test TOOL='' PATTERN='' LIST=0 JOBS_SET=0
JOBS=${RUCUDA_SANITIZE_JOBS:-4}
EXCLUDES=()
while (($#)); do
    case $1 in
        all | test) shift ;;
        list) LIST=1; shift ;;
        filter) PATTERN=${2:?filter needs a PATTERN}; shift 2 ;;
        exclude) EXCLUDES+=("${2:?exclude needs a PATTERN}"); shift 2 ;;
        sanitize)
            MODE=sanitize TOOL=memcheck
            shift
            case ${1:-} in memcheck | racecheck | initcheck | synccheck) TOOL=$1; shift ;; esac
            ;;
        --jobs) JOBS=${2:?--jobs needs a number}; JOBS_SET=1; shift 2 ;;
        --jobs=*) JOBS=${1#--jobs=}; JOBS_SET=1; shift ;;
        bench) shift; run_bench "$@"; exit ;;
        -h | --help | help) usage ;;
        *) echo "run.sh: unknown argument '$1'" >&2; usage ;;
    esac
done
if [[ ! $JOBS =~ ^[1-9][0-9]*$ ]]; then
    echo "run.sh: --jobs (or RUCUDA_SANITIZE_JOBS) needs a number of 1 or more, not '$JOBS'" >&2
    exit 2
fi
if ((JOBS_SET)) && [[ $MODE != sanitize ]]; then
    echo "run.sh: --jobs is for sanitize; a plain run takes one test at a time" >&2
    exit 2
fi

PREFIX=()
MODE_LABEL='test'
TIMEOUT=${RUCUDA_TEST_TIMEOUT:-300}
if [[ $MODE == sanitize ]]; then
    sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    if ((!LIST)) && [[ ! -x $sanitizer ]]; then
        echo "run.sh: compute-sanitizer not found (PATH, /usr/local/cuda/bin)" >&2
        exit 1
    fi
    # API errors are left out on purpose: see the top of this script.
    PREFIX=("$sanitizer" --tool "$TOOL" --error-exitcode 99 --report-api-errors no)
    # memcheck also checks stream-ordered allocations against work on other streams
    # (a free or reuse while another stream still uses the memory).
    [[ $TOOL == memcheck ]] && PREFIX+=(--track-stream-ordered-races all)
    MODE_LABEL=sanitize:$TOOL
    # Tests that provoke driver errors on purpose (out of memory, a trap) skip themselves;
    # heavy ones run smaller (rucuda_testkit::under_sanitizer).
    export RUCUDA_SANITIZER=$TOOL
    TIMEOUT=${RUCUDA_TEST_TIMEOUT:-1200}
    ((LIST)) || rm -rf -- "$RESULTS/sanitizer-logs"
fi

# The test list: binaries from tests.txt, their tests from libtest, then the examples of
# examples.txt ("NAME ARGS..." a line; arguments are split on spaces, no quoting). Under
# the sanitizer, only the ignored tests (the GPU tests).
BINARIES=() EXAMPLES=()
[[ -f $HERE/tests.txt ]] && mapfile -t BINARIES <"$HERE/tests.txt"
[[ -f $HERE/examples.txt ]] && mapfile -t EXAMPLES <"$HERE/examples.txt"
chmod +x -- "$HERE"/bin/* "$HERE"/examples/* 2>/dev/null
WORK=$(mktemp -d /tmp/rucuda-tests.XXXXXX)
trap 'rm -rf -- "$WORK"' EXIT
FAIL_COUNT=0
CPU_ONLY=0
TESTS=() # "binary<TAB>ignored<TAB>name"; an example's name is "(example) ARGS..."
for bin in "${BINARIES[@]}"; do
    [[ -n $bin ]] || continue
    excluded "$bin" && continue
    if ! listed=$(list_tests "$bin"); then
        [[ -z $PATTERN || $bin == *"$PATTERN"* ]] && TESTS+=("$bin"$'\tfalse\t'"--list")
        continue
    fi
    while IFS=$'\t' read -r ignored name; do
        [[ -n $name ]] || continue
        if [[ $MODE == sanitize && $ignored != true ]]; then
            CPU_ONLY=$((CPU_ONLY + 1))
            continue
        fi
        [[ -z $PATTERN || $bin == *"$PATTERN"* || $name == *"$PATTERN"* ]] && TESTS+=("$bin"$'\t'"$ignored"$'\t'"$name")
    done <<<"$listed"
done
for line in "${EXAMPLES[@]}"; do
    read -r example args <<<"$line"
    [[ -n $example && $example != '#'* ]] || continue
    excluded "$example" && continue
    [[ -z $PATTERN || $example == *"$PATTERN"* ]] && TESTS+=("$example"$'\tfalse\t'"(example)${args:+ $args}")
done

if ((LIST)); then
    for t in "${TESTS[@]}"; do
        IFS=$'\t' read -r bin ignored name <<<"$t"
        printf '%s %s%s\n' "$bin" "$name" "$([[ $ignored == true ]] && echo '  [ignored]')"
    done
    echo "${#TESTS[@]} tests"
    exit 0
fi

# One pass per visible GPU (CUDA_VISIBLE_DEVICES=i), or one pass as the caller set it up.
DEVICES=() DEVICE_NAMES=()
if [[ -z ${CUDA_VISIBLE_DEVICES+set} ]] && command -v nvidia-smi >/dev/null; then
    while IFS= read -r line; do
        if [[ $line =~ ^GPU\ ([0-9]+):\ (.*)$ ]]; then
            DEVICES+=("${BASH_REMATCH[1]}")
            DEVICE_NAMES+=("${BASH_REMATCH[2]}")
        fi
    done < <(nvidia-smi -L 2>/dev/null)
fi
if ((${#DEVICES[@]} == 0)); then
    DEVICES=("${CUDA_VISIBLE_DEVICES:-none}")
    DEVICE_NAMES=("${CUDA_VISIBLE_DEVICES:+CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES}")
    [[ -n ${DEVICE_NAMES[0]} ]] || DEVICE_NAMES=("no GPU found by nvidia-smi")
fi

export RUST_BACKTRACE=${RUST_BACKTRACE:-1}
if [[ $MODE == sanitize ]]; then
    # One job per binary (its GPU tests in one sanitizer process; the binaries with the
    # most tests first) and one per example, for every device pass.
    declare -A GROUP=()
    BIN_ORDER=() EXAMPLE_TESTS=() UNLISTED=()
    for t in "${TESTS[@]}"; do
        IFS=$'\t' read -r bin ignored name <<<"$t"
        if [[ $name == --list ]]; then
            UNLISTED+=("$bin")
        elif [[ $name == "(example)"* ]]; then
            EXAMPLE_TESTS+=("$bin$US$name")
        else
            [[ -n ${GROUP[$bin]+set} ]] || BIN_ORDER+=("$bin")
            GROUP[$bin]+=$name$'\n'
        fi
    done
    mapfile -t BIN_ORDER < <(
        for bin in "${BIN_ORDER[@]}"; do
            printf '%s\t%s\n' "$(printf '%s' "${GROUP[$bin]}" | grep -c .)" "$bin"
        done | sort -t $'\t' -k1,1nr -s | cut -f2-
    )
    JOBS_LIST=()
    for dev in "${DEVICES[@]}"; do
        for bin in "${UNLISTED[@]}"; do
            record "$bin" "(listing)" "$dev" false failed 0 "the binary did not list its tests" ""
            keep_failure "$bin" "(listing)" "$dev" "the binary did not list its tests" ""
        done
        for bin in "${BIN_ORDER[@]}"; do
            k=${#JOBS_LIST[@]}
            mkdir -p "$WORK/job-$k"
            printf '%s' "${GROUP[$bin]}" >"$WORK/job-$k/names"
            whole=0
            [[ -z $PATTERN || $bin == *"$PATTERN"* ]] && whole=1
            JOBS_LIST+=("binary$US$bin$US$dev$US$whole")
        done
        for t in "${EXAMPLE_TESTS[@]}"; do
            IFS=$US read -r bin name <<<"$t"
            JOBS_LIST+=("example$US$bin$US$dev$US$name")
        done
    done
    echo "rucuda bundle: $((${#TESTS[@]} - ${#UNLISTED[@]} - ${#EXAMPLE_TESTS[@]})) GPU tests in" \
        "${#BIN_ORDER[@]} binaries and ${#EXAMPLE_TESTS[@]} examples x ${#DEVICES[@]} device pass(es)," \
        "mode $MODE_LABEL, $JOBS at once, timeout ${TIMEOUT}s per process;" \
        "$CPU_ONLY CPU-only tests left to CI" >&2
    write_summary
    run_jobs
else
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
fi
write_summary

for ((i = 1; i <= FAIL_COUNT; i++)); do
    IFS=$'\t' read -r bin name dev reason <"$WORK/fail-$i.log.head"
    printf '\n---- FAILED %s %s [device %s]: %s ----\n' "$bin" "$name" "$dev" "$reason"
    cat -- "$WORK/fail-$i.log"
    echo
done
[[ -d $RESULTS/sanitizer-logs ]] && echo "sanitizer logs: $RESULTS/sanitizer-logs" >&2
echo "summary: $RESULTS/summary.json" >&2
echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
((FAILED == 0))
