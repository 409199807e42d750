# shellcheck shell=bash
# `run.sh pycuda-tests [PYTEST_ARGS...]` and `run.sh pycuda-bench`: the rucuda wheel on the
# GPU machine.
#
# The bundle's python/ folder holds the wheel, PyCUDA 2026.1's test files and the bench
# script (added by `cargo xtask wheel --bundle`). A fresh virtual environment sees the
# system's packages (NumPy, pytest, pytest-xdist, CuPy: the GPU machine has no network)
# and gets the wheel with no dependencies from the bundle, so its `pycuda` is rucuda's even
# if a PyCUDA is installed system-wide; pytools (imported by one test) comes from the
# wheels in python/extra/.
#
# pycuda-tests: the three test files run from a scratch copy with pytest (on
# RUCUDA_PYTEST_WORKERS pytest-xdist workers, default 12, where xdist is installed); the
# output goes to $RESULTS/pycuda-tests.txt, its last lines and the time are printed.
# pycuda-bench: py_bench.py for rucuda (in the environment), then CuPy and NVIDIA's
# cuda-bindings (the system's Python) as references; JSON lines to
# $RESULTS/pycuda-bench.jsonl.

# Makes the virtual environment in a new folder whose path it prints; fails saying why.
pycuda_venv() {
    local dir=$1 wheel=$2
    local py=${PYTHON:-python3}
    local work
    work=$(mktemp -d /tmp/rucuda-pycuda.XXXXXX)
    if ! "$py" -m venv --system-site-packages "$work/venv" >&2 ||
        ! "$work/venv/bin/python" -m pip install --quiet --no-index --no-deps \
            --disable-pip-version-check "$wheel" >&2; then
        echo "run.sh: could not make a virtual environment with $wheel" >&2
        rm -rf -- "$work"
        return 1
    fi
    if compgen -G "$dir/extra/*.whl" >/dev/null; then
        "$work/venv/bin/python" -m pip install --quiet --no-index --disable-pip-version-check \
            --find-links "$dir/extra" pytools >&2 ||
            echo "run.sh: could not install pytools from $dir/extra" >&2
    fi
    if ! "$work/venv/bin/python" - >&2 <<'PY'
import pycuda, pycuda.driver as drv
print("pycuda from", pycuda.__file__)
import pycuda.autoinit
print("device:", pycuda.autoinit.device.name(), "driver", drv.get_driver_version())
PY
    then
        echo "run.sh: importing pycuda.autoinit from the wheel failed" >&2
        rm -rf -- "$work"
        return 1
    fi
    echo "$work"
}

# The newest wheel in the bundle, or a message and failure.
pycuda_wheel() {
    local dir=$1 wheel
    wheel=$(ls -t "$dir"/rucuda-*.whl 2>/dev/null | head -n 1)
    if [[ -z $wheel ]]; then
        echo "run.sh: no rucuda wheel in $dir: build with 'cargo xtask wheel --bundle'" >&2
        return 2
    fi
    echo "$wheel"
}

run_pycuda_tests() {
    local dir=$HERE/python wheel work
    wheel=$(pycuda_wheel "$dir") || return 2
    if [[ ! -d $dir/pycuda-tests ]]; then
        echo "run.sh pycuda-tests: no tests in $dir: build with 'cargo xtask wheel --bundle'" >&2
        return 2
    fi
    work=$(pycuda_venv "$dir" "$wheel") || return 1
    cp -- "$dir"/pycuda-tests/*.py "$work/"
    local xdist=()
    if "$work/venv/bin/python" -c 'import xdist' 2>/dev/null; then
        xdist=(-n "${RUCUDA_PYTEST_WORKERS:-12}")
    fi
    local start end
    start=$(date +%s)
    (cd "$work" && "$work/venv/bin/python" -m pytest -p no:cacheprovider -rfE "${xdist[@]}" \
        test_driver.py test_gpuarray.py test_cumath.py "$@") >"$RESULTS/pycuda-tests.txt" 2>&1
    local rc=$?
    end=$(date +%s)
    tail -n 60 "$RESULTS/pycuda-tests.txt"
    echo "pycuda-tests: $((end - start)) s, full output in $RESULTS/pycuda-tests.txt"
    rm -rf -- "$work"
    return $rc
}

run_pycuda_bench() {
    local dir=$HERE/python wheel work
    wheel=$(pycuda_wheel "$dir") || return 2
    work=$(pycuda_venv "$dir" "$wheel") || return 1
    local out=$RESULTS/pycuda-bench.jsonl
    : >"$out"
    local rc=0
    "$work/venv/bin/python" "$dir/py_bench.py" --impl pycuda | tee -a "$out" || rc=1
    local py=${PYTHON:-python3} impl
    for impl in cupy raw; do
        "$py" "$dir/py_bench.py" --impl "$impl" | tee -a "$out" ||
            echo "run.sh pycuda-bench: the $impl reference failed (not installed?)" >&2
    done
    echo "pycuda-bench: $out"
    rm -rf -- "$work"
    return $rc
}
