# What every mode of run.sh shares: JSON text, the test list, running one process under
# the timeout (and the sanitizer), telling its result, and the results kept for
# summary.json and the report at the end. Sourced by run.sh, which sets HERE, RESULTS,
# MARKER, WORK, TIMEOUT, PREFIX, TOOL, EXCLUDES, MODE_LABEL and DEVICE_NAMES.

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
FAIL_COUNT=0
keep_failure() {
    FAIL_COUNT=$((FAIL_COUNT + 1))
    if [[ -n $5 ]]; then
        cp -- "$5" "$WORK/fail-$FAIL_COUNT.log"
    else
        : >"$WORK/fail-$FAIL_COUNT.log"
    fi
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >"$WORK/fail-$FAIL_COUNT.log.head"
}

# Prints the kept failures: a header and the output tail of each.
print_failures() {
    local i bin name dev reason
    for ((i = 1; i <= FAIL_COUNT; i++)); do
        IFS=$'\t' read -r bin name dev reason <"$WORK/fail-$i.log.head"
        printf '\n---- FAILED %s %s [device %s]: %s ----\n' "$bin" "$name" "$dev" "$reason"
        cat -- "$WORK/fail-$i.log"
        echo
    done
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

# Runs one test alone (BIN --exact NAME SELECT, SELECT being --include-ignored or
# --ignored) or one example (name "(example) ARGS...") in its own process, output to LOG.
# Sets STATUS, REASON, SECS and TAIL: the output tail of a failure (LOG with .tail for
# .log), or empty.
run_process() {
    local bin=$1 name=$2 log=$3 selector=$4 kind=test
    local -a cmd args
    if [[ $name == "(example)"* ]]; then
        read -ra args <<<"${name#"(example)"}"
        cmd=("$HERE/examples/$bin" "${args[@]}")
        kind=example
    else
        cmd=("$HERE/bin/$bin" --exact "$name" "$selector" --test-threads=1 --nocapture)
    fi
    run_logged "$log" "${cmd[@]}"
    classify "$log" "$RC" "$kind"
    TAIL=''
    if [[ $STATUS == failed ]]; then
        TAIL=${log%.log}.tail
        make_tail "$log" "$([[ $REASON == compute-sanitizer* ]] && echo 1 || echo 0)" >"$TAIL"
    fi
}
