# shellcheck shell=bash
# `run.sh pycuda-tests [PYTEST_ARGS...]`: PyCUDA's own tests against the rucuda wheel.
#
# The bundle's python/ folder holds the wheel and PyCUDA 2026.1's test files (added by
# `cargo xtask wheel --bundle`). A fresh virtual environment sees the system's packages
# (NumPy, pytest, pytest-xdist: the GPU machine has no network) and gets the wheel with
# no dependencies from the bundle, so its `pycuda` is rucuda's even if a PyCUDA is
# installed system-wide. The tests run from a scratch copy; pytest's output goes to
# $RESULTS/pycuda-tests.txt and its summary line is printed last. pytools (imported by
# one test) comes from the wheels in python/extra/. With pytest-xdist
# installed the tests run on RUCUDA_PYTEST_WORKERS processes (default 12).

run_pycuda_tests() {
    local dir=$HERE/python
    local wheel
    wheel=$(ls -t "$dir"/rucuda-*.whl 2>/dev/null | head -n 1)
    if [[ -z $wheel || ! -d $dir/pycuda-tests ]]; then
        echo "run.sh pycuda-tests: no wheel or tests in $dir: build with 'cargo xtask wheel --bundle'" >&2
        return 2
    fi
    local py=${PYTHON:-python3}
    local work
    work=$(mktemp -d /tmp/rucuda-pycuda.XXXXXX)
    "$py" -m venv --system-site-packages "$work/venv" || return 1
    "$work/venv/bin/python" -m pip install --quiet --no-index --no-deps --disable-pip-version-check "$wheel" || return 1
    # pytools (test_gpuarray imports it) and its dependencies, carried as wheels.
    if compgen -G "$dir/extra/*.whl" >/dev/null; then
        "$work/venv/bin/python" -m pip install --quiet --no-index --disable-pip-version-check \
            --find-links "$dir/extra" pytools ||
            echo "run.sh pycuda-tests: could not install pytools from $dir/extra" >&2
    fi
    cp -- "$dir"/pycuda-tests/*.py "$work/"
    "$work/venv/bin/python" - <<'PY' || return 1
import pycuda, pycuda.driver as drv
print("pycuda from", pycuda.__file__)
import pycuda.autoinit
print("device:", pycuda.autoinit.device.name(), "driver", drv.get_driver_version())
PY
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
