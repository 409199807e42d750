#!/usr/bin/env bash
# Runs the rucuda GPU test bundle; written by `cargo xtask gpu-test` / `cargo xtask bench`.
# Needs only bash, coreutils and the NVIDIA driver: no Rust. The bundle folder is all it reads.
#
#   run.sh                      every test, each in its own process, once per visible GPU
#   run.sh filter PATTERN       only tests whose binary or name contains PATTERN
#   run.sh sanitize [TOOL]      the same under compute-sanitizer: memcheck (default),
#                               racecheck, initcheck or synccheck; combines with filter
#   run.sh list                 the tests, without running them
#   run.sh bench [--quick] [--copy-mib N] [--cases PATTERN] [--no-peers]
#                               the bench binary with its peers (CuPy, NVIDIA's CUDA C++,
#                               PyTorch's all-reduce where 2 or more GPUs are visible)
#
# Results go to $OUT when set, else beside this script: summary.json for tests,
# bench.jsonl and bench.md for the bench. The last line of a test run is
# "N passed, N failed, N skipped". A test that prints a line starting with
# "RUCUDA_SKIPPED: reason" counts as skipped.
# Environment: RUCUDA_TEST_TIMEOUT (seconds per test; 300, or 1200 under the sanitizer).
set -uo pipefail
export LC_ALL=C

HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
RESULTS=${OUT:-$HERE}
MARKER='RUCUDA_SKIPPED:'
if ! mkdir -p -- "$RESULTS" 2>/dev/null || [[ ! -w $RESULTS ]]; then
    RESULTS=$(mktemp -d /tmp/rucuda-results.XXXXXX)
    echo "run.sh: ${OUT:-$HERE} is not writable; results go to $RESULTS" >&2
fi

usage() {
    sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
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

# Runs one test, or one example (name "(example) ARGS..."), in its own process and records it.
run_one() {
    local bin=$1 name=$2 dev=$3 ignored=$4 log t0 t1 secs rc status reason='' skip_line tail_file=''
    local -a cmd args
    if [[ $name == "(example)"* ]]; then
        read -ra args <<<"${name#"(example)"}"
        cmd=("$HERE/examples/$bin" "${args[@]}")
    else
        cmd=("$HERE/bin/$bin" --exact "$name" --include-ignored --test-threads=1 --nocapture)
    fi
    log=$WORK/current.log
    t0=$(now)
    timeout -k 10 "$TIMEOUT" "${PREFIX[@]}" "${cmd[@]}" >"$log" 2>&1 </dev/null
    rc=$?
    t1=$(now)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    skip_line=$(grep -m1 -E "(^|\\.\\.\\. )$MARKER" "$log" | clean)
    if ((rc == 0)) && [[ -n $skip_line ]]; then
        status=skipped
        reason=${skip_line#*"$MARKER"}
        reason=${reason# }
    elif ((rc == 0)) && [[ $name != "(example)"* ]] && ! grep -q '^running 1 test' "$log"; then
        status=failed
        reason="the binary ran no test of that name"
    elif ((rc == 0)); then
        status=passed
    else
        status=failed
        case $rc in
            124 | 137) reason="timed out after ${TIMEOUT}s" ;;
            99) reason="compute-sanitizer ($TOOL) reported errors" ;;
            *) reason="exit status $rc" ;;
        esac
    fi
    if [[ $status == failed ]]; then
        FAIL_COUNT=$((FAIL_COUNT + 1))
        tail_file=$WORK/fail-$FAIL_COUNT.log
        tail -n 40 "$log" >"$tail_file"
        printf '%s\t%s\t%s\t%s\n' "$bin" "$name" "$dev" "$reason" >"$tail_file.head"
    fi
    record "$bin" "$name" "$dev" "$ignored" "$status" "$secs" "$reason" "$tail_file"
    write_summary
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

MODE=test TOOL='' PATTERN=''
while (($#)); do
    case $1 in
        all | test) shift ;;
        list) MODE=list; shift ;;
        filter) PATTERN=${2:?filter needs a PATTERN}; shift 2 ;;
        sanitize)
            MODE=sanitize TOOL=memcheck
            shift
            case ${1:-} in memcheck | racecheck | initcheck | synccheck) TOOL=$1; shift ;; esac
            ;;
        bench) shift; run_bench "$@"; exit ;;
        -h | --help | help) usage ;;
        *) echo "run.sh: unknown argument '$1'" >&2; usage ;;
    esac
done

PREFIX=()
MODE_LABEL='test'
TIMEOUT=${RUCUDA_TEST_TIMEOUT:-300}
if [[ $MODE == sanitize ]]; then
    sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    if [[ ! -x $sanitizer ]]; then
        echo "run.sh: compute-sanitizer not found (PATH, /usr/local/cuda/bin)" >&2
        exit 1
    fi
    PREFIX=("$sanitizer" --tool "$TOOL" --error-exitcode 99)
    MODE_LABEL=sanitize:$TOOL
    # Tests that provoke driver errors on purpose (out of memory, a trap) skip themselves.
    export RUCUDA_SANITIZER=$TOOL
    TIMEOUT=${RUCUDA_TEST_TIMEOUT:-1200}
fi

# The test list: binaries from tests.txt, their tests from libtest, then the examples of
# examples.txt ("NAME ARGS..." a line; arguments are split on spaces, no quoting).
BINARIES=() EXAMPLES=()
[[ -f $HERE/tests.txt ]] && mapfile -t BINARIES <"$HERE/tests.txt"
[[ -f $HERE/examples.txt ]] && mapfile -t EXAMPLES <"$HERE/examples.txt"
chmod +x -- "$HERE"/bin/* "$HERE"/examples/* 2>/dev/null
WORK=$(mktemp -d /tmp/rucuda-tests.XXXXXX)
trap 'rm -rf -- "$WORK"' EXIT
FAIL_COUNT=0
TESTS=() # "binary<TAB>ignored<TAB>name"; an example's name is "(example) ARGS..."
for bin in "${BINARIES[@]}"; do
    [[ -n $bin ]] || continue
    if ! listed=$(list_tests "$bin"); then
        [[ -z $PATTERN || $bin == *"$PATTERN"* ]] && TESTS+=("$bin"$'\tfalse\t'"--list")
        continue
    fi
    while IFS=$'\t' read -r ignored name; do
        [[ -n $name ]] || continue
        [[ -z $PATTERN || $bin == *"$PATTERN"* || $name == *"$PATTERN"* ]] && TESTS+=("$bin"$'\t'"$ignored"$'\t'"$name")
    done <<<"$listed"
done
for line in "${EXAMPLES[@]}"; do
    read -r example args <<<"$line"
    [[ -n $example && $example != '#'* ]] || continue
    [[ -z $PATTERN || $example == *"$PATTERN"* ]] && TESTS+=("$example"$'\tfalse\t'"(example)${args:+ $args}")
done

if [[ $MODE == list ]]; then
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

echo "rucuda bundle: ${#TESTS[@]} tests x ${#DEVICES[@]} device pass(es), mode $MODE_LABEL, timeout ${TIMEOUT}s" >&2
export RUST_BACKTRACE=${RUST_BACKTRACE:-1}
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
write_summary

for ((i = 1; i <= FAIL_COUNT; i++)); do
    IFS=$'\t' read -r bin name dev reason <"$WORK/fail-$i.log.head"
    printf '\n---- FAILED %s %s [device %s]: %s ----\n' "$bin" "$name" "$dev" "$reason"
    cat -- "$WORK/fail-$i.log"
    echo
done
echo "summary: $RESULTS/summary.json" >&2
echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
((FAILED == 0))
