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
#                               (lib/sanitize.sh says how)
#   run.sh --jobs N             a plain run with N test processes at once on each device
#                               pass (default 1, or RUCUDA_TEST_JOBS): the tests are dealt
#                               round-robin to N workers; results and report as one run;
#                               tests named *out_of_memory* run alone after the workers
#   run.sh list                 the tests, without running them (after sanitize: the GPU
#                               tests and examples it would run)
#   run.sh bench [--quick] [--copy-mib N] [--cases PATTERN] [--no-peers]
#                               the bench binary with its peers (CuPy, NVIDIA's CUDA C++,
#                               PyTorch's all-reduce where 2 or more GPUs are visible)
#   run.sh pycuda-tests [PYTEST_ARGS...]
#                               PyCUDA 2026.1's own test_driver.py, test_gpuarray.py and
#                               test_cumath.py with pytest against the rucuda wheel, in a
#                               fresh virtual environment (`cargo xtask wheel --bundle` adds
#                               them; lib/pycuda.sh says how)
#   run.sh pycuda-control [PYTEST_ARGS...]
#                               the control: PyCUDA 2026.1 built from its source package
#                               (kept in /tmp for the next call), the same tests against it
#   run.sh pycuda-fresh         the wheel and NumPy alone in a fresh virtual environment
#                               (no system packages): imports pycuda.autoinit, adds arrays
#   run.sh pycuda-bench         the Python face's bench cases (py_small_add_us, py_launch_us,
#                               py_prepared_launch_us, py_compile_first_ms) for rucuda, CuPy
#                               and NVIDIA's cuda-bindings
#
# Results go to $OUT when set, else beside this script: summary.json for tests,
# bench.jsonl and bench.md for the bench. The last line of a test run is
# "N passed, N failed, N skipped". A test that prints a line starting with
# "RUCUDA_SKIPPED: reason" counts as skipped.
# Environment: RUCUDA_TEST_TIMEOUT (seconds per process: 300 for a test; under the
# sanitizer 1200 for a whole test binary, and for each test when one is run alone).
set -uo pipefail
export LC_ALL=C

HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
RESULTS=${OUT:-$HERE}
MARKER='RUCUDA_SKIPPED:'
if ! mkdir -p -- "$RESULTS" 2>/dev/null || [[ ! -w $RESULTS ]]; then
    RESULTS=$(mktemp -d /tmp/rucuda-results.XXXXXX)
    echo "run.sh: ${OUT:-$HERE} is not writable; results go to $RESULTS" >&2
fi
# shellcheck source=lib/common.sh
source "$HERE/lib/common.sh"
# shellcheck source=lib/plain.sh
source "$HERE/lib/plain.sh"
# shellcheck source=lib/sanitize.sh
source "$HERE/lib/sanitize.sh"
# shellcheck source=lib/bench.sh
source "$HERE/lib/bench.sh"
# shellcheck source=lib/pycuda.sh
source "$HERE/lib/pycuda.sh"

# Prints the comment block at the top of this script (the usage).
usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
    exit 2
}

MODE=test TOOL='' PATTERN='' LIST=0 JOBS_SET=0
JOBS=
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
        pycuda-tests) shift; run_pycuda_tests "$@"; exit ;;
        pycuda-bench) shift; run_pycuda_bench; exit ;;
        pycuda-fresh) shift; run_pycuda_fresh; exit ;;
        pycuda-control) shift; run_pycuda_control "$@"; exit ;;
        -h | --help | help) usage ;;
        *) echo "run.sh: unknown argument '$1'" >&2; usage ;;
    esac
done
if ((!JOBS_SET)); then
    if [[ $MODE == sanitize ]]; then JOBS=${RUCUDA_SANITIZE_JOBS:-4}; else JOBS=${RUCUDA_TEST_JOBS:-1}; fi
fi
if [[ ! $JOBS =~ ^[1-9][0-9]*$ ]]; then
    echo "run.sh: --jobs (or RUCUDA_SANITIZE_JOBS, RUCUDA_TEST_JOBS) needs a number of 1 or more, not '$JOBS'" >&2
    exit 2
fi

PREFIX=()
MODE_LABEL='test'
TIMEOUT=${RUCUDA_TEST_TIMEOUT:-300}
[[ $MODE == sanitize ]] && sanitize_setup

# The test list: binaries from tests.txt, their tests from libtest, then the examples of
# examples.txt ("NAME ARGS..." a line; arguments are split on spaces, no quoting). Under
# the sanitizer, only the ignored tests (the GPU tests).
BINARIES=() EXAMPLES=()
[[ -f $HERE/tests.txt ]] && mapfile -t BINARIES <"$HERE/tests.txt"
[[ -f $HERE/examples.txt ]] && mapfile -t EXAMPLES <"$HERE/examples.txt"
chmod +x -- "$HERE"/bin/* "$HERE"/examples/* 2>/dev/null
WORK=$(mktemp -d /tmp/rucuda-tests.XXXXXX)
trap 'rm -rf -- "$WORK"' EXIT
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
    run_sanitize
else
    run_plain
fi
write_summary

print_failures
[[ -d $RESULTS/sanitizer-logs ]] && echo "sanitizer logs: $RESULTS/sanitizer-logs" >&2
echo "summary: $RESULTS/summary.json" >&2
echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
((FAILED == 0))
