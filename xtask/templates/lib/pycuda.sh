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
# RUCUDA_PYTEST_WORKERS pytest-xdist workers, default 12, where xdist is installed; with
# work stealing where it is 3.2 or newer); the output goes to $RESULTS/pycuda-tests.txt,
# its last lines and the time are printed. Then rucuda's own GPU tests of the Python face
# (python/face-tests/) run in the same environment, output in $RESULTS/pycuda-face.txt.
# pycuda-control: the control run, PyCUDA itself: its source package (in python/) is built
# in place under /tmp/rucuda-pycuda-control (kept: a second call skips the ~90 s build) in
# a virtual environment with the carried pytools, mako, platformdirs and siphash24, then
# the same three files run against it (output in $RESULTS/pycuda-control.txt).
# pycuda-fresh: the wheel and NumPy (from python/extra/) in a virtual environment with
# nothing else, and `import pycuda.autoinit` there.
# pycuda-bench: py_bench.py for rucuda (in the environment), then CuPy and NVIDIA's
# cuda-bindings (the system's Python) as references, and PyCUDA itself where
# pycuda-control built it on this machine; JSON lines to
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
    pycuda_inherit_paths "$py" "$work/venv/bin/python"
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

# A virtual environment made with --system-site-packages sees the base Python's site
# folders but not its user site (~/.local, where the GPU machine's NumPy, pytest and CuPy
# may live) nor PYTHONPATH: the base's sys.path folders the venv lacks go into a .pth
# file of the venv: pycuda_inherit_paths BASE_PYTHON VENV_PYTHON.
pycuda_inherit_paths() {
    local base=$1 venv=$2 site have
    site=$("$venv" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') || return 0
    have=$("$venv" -c 'import sys; print(*sys.path, sep="\n")') || return 0
    "$base" -c 'import sys; print(*sys.path, sep="\n")' 2>/dev/null | while IFS= read -r p; do
        [[ -n $p && -d $p ]] || continue
        grep -qxF -- "$p" <<<"$have" || printf '%s\n' "$p"
    done >"$site/_rucuda_base_paths.pth"
}

# The acceptance check of a fresh install: a virtual environment with no system packages,
# NumPy from the bundle's extra wheels and the rucuda wheel, nothing else; importing
# pycuda.autoinit there must work (no compiler, no toolkit, no network).
run_pycuda_fresh() {
    local dir=$HERE/python wheel work py=${PYTHON:-python3}
    wheel=$(pycuda_wheel "$dir") || return 2
    work=$(mktemp -d /tmp/rucuda-pycuda-fresh.XXXXXX)
    local rc=0
    if ! "$py" -m venv "$work/venv" >&2 ||
        ! "$work/venv/bin/python" -m pip install --quiet --no-index --disable-pip-version-check \
            --find-links "$dir/extra" numpy "$wheel" >&2; then
        echo "run.sh pycuda-fresh: could not install NumPy and $wheel into a fresh environment" >&2
        rc=1
    else
        "$work/venv/bin/python" -m pip list --disable-pip-version-check 2>/dev/null
        "$work/venv/bin/python" - <<'PY' || rc=1
import pycuda.autoinit, pycuda.driver as drv, pycuda.gpuarray as ga, numpy as np
a = ga.to_gpu(np.arange(8, dtype=np.float32))
assert ((a + a).get() == 2 * np.arange(8, dtype=np.float32)).all()
print("pycuda-fresh: pycuda.autoinit imported on", pycuda.autoinit.device.name(),
      "with only NumPy and rucuda installed; a + a checked")
PY
    fi
    rm -rf -- "$work"
    return $rc
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
    pycuda_pytest "$work" "$work/venv/bin/python" "$RESULTS/pycuda-tests.txt" "$@"
    local rc=$?
    # Then rucuda's own GPU tests of the Python face, in the same environment.
    if compgen -G "$dir/face-tests/*.py" >/dev/null; then
        mkdir -p "$work/face"
        cp -- "$dir"/face-tests/*.py "$work/face/"
        (cd "$work/face" && "$work/venv/bin/python" -m pytest -p no:cacheprovider -rfEs \
            --durations=5 .) >"$RESULTS/pycuda-face.txt" 2>&1
        local frc=$?
        tail -n 25 "$RESULTS/pycuda-face.txt"
        echo "rucuda's Python face tests: exit $frc, full output in $RESULTS/pycuda-face.txt"
        [[ $rc -eq 0 ]] && rc=$frc
    fi
    rm -rf -- "$work"
    return $rc
}

run_pycuda_bench() {
    local dir=$HERE/python wheel work
    wheel=$(pycuda_wheel "$dir") || return 2
    work=$(pycuda_venv "$dir" "$wheel") || return 1
    local out=$RESULTS/pycuda-bench.jsonl all=$RESULTS/pycuda-bench-rounds.jsonl
    : >"$all"
    local rc=0 py=${PYTHON:-python3} impl round
    local control=/tmp/rucuda-pycuda-control src=
    if [[ -f $control/.built ]]; then
        src=$(ls -d "$control"/pycuda-*/ 2>/dev/null | head -n 1)
    fi
    # Host speed differs between processes on one machine (one H200 host ran a + b in
    # 4.2 µs in one process and 5.7 in the next): each implementation runs in
    # PYBENCH_ROUNDS processes (3 by default), the implementations taking turns, and
    # the figure kept is the median over its rounds.
    for ((round = 1; round <= ${PYBENCH_ROUNDS:-3}; round++)); do
        echo "== pycuda-bench round $round" >&2
        "$work/venv/bin/python" "$dir/py_bench.py" --impl pycuda | tee -a "$all" || rc=1
        for impl in cupy raw; do
            "$py" "$dir/py_bench.py" --impl "$impl" | tee -a "$all" ||
                echo "run.sh pycuda-bench: the $impl reference failed (not installed?)" >&2
        done
        # PyCUDA itself, where `run.sh pycuda-control` built it on this machine.
        if [[ -n $src ]]; then
            PYTHONPATH=$src "$control/venv/bin/python" "$dir/py_bench.py" --impl pycuda \
                --label pycuda | tee -a "$all" ||
                echo "run.sh pycuda-bench: PyCUDA's own run failed" >&2
        fi
    done
    "$py" "$dir/py_bench.py" --median-of "$all" >"$out" || rc=1
    cat "$out"
    echo "pycuda-bench: $out (every round: $all)"
    rm -rf -- "$work"
    return $rc
}

# The shared pytest run: the three files copied to $1 and run there with $2 (a Python);
# the output goes to $3 (with the reason of every failure, error and skip: -rfEs, and the
# 15 slowest tests, so that runs under rucuda and under PyCUDA compare test by test); the
# remaining arguments go to pytest.
pycuda_pytest() {
    local work=$1 python=$2 out=$3
    shift 3
    cp -- "$HERE"/python/pycuda-tests/*.py "$work/"
    # The minutes-long cuRAND tests start first, on two workers (see the plugin's text).
    cp -- "$HERE"/lib/pycuda_long_first.py "$work/"
    local xdist=()
    if "$python" -c 'import xdist' 2>/dev/null; then
        xdist=(-n "${RUCUDA_PYTEST_WORKERS:-12}")
        # Idle workers take queued tests from busy ones (pytest-xdist 3.2+): the two
        # cuRAND tests on 8 and 16 GB arrays, minutes each, then need not queue on one
        # worker. Both runs, rucuda's and the control, get the same options.
        if "$python" -c 'import sys, xdist; v = xdist.__version__.split(".")
sys.exit(0 if (int(v[0]), int(v[1])) >= (3, 2) else 1)' 2>/dev/null; then
            xdist+=(--dist worksteal)
        fi
    fi
    local start end rc
    start=$(date +%s)
    # The plugin is imported from $work, by the workers too.
    (cd "$work" && PYTHONPATH="$work${PYTHONPATH:+:$PYTHONPATH}" \
        "$python" -m pytest -p no:cacheprovider -p pycuda_long_first -rfEs \
        --durations=15 "${xdist[@]}" \
        test_driver.py test_gpuarray.py test_cumath.py "$@") >"$out" 2>&1
    rc=$?
    end=$(date +%s)
    tail -n 60 "$out"
    echo "pytest: $((end - start)) s, full output in $out"
    return $rc
}

run_pycuda_control() {
    local dir=$HERE/python
    local sdist
    sdist=$(ls "$dir"/pycuda-*.tar.gz 2>/dev/null | head -n 1)
    if [[ -z $sdist ]]; then
        echo "run.sh pycuda-control: no PyCUDA source package in $dir: 'cargo xtask wheel --bundle'" >&2
        return 2
    fi
    local base=/tmp/rucuda-pycuda-control py=${PYTHON:-python3}
    local src=$base/$(basename "$sdist" .tar.gz)
    if [[ ! -f $base/.built ]]; then
        rm -rf -- "$base"
        mkdir -p "$base"
        tar -xzf "$sdist" -C "$base" || return 1
        if ! "$py" -m venv --system-site-packages "$base/venv" >&2 ||
            ! pycuda_inherit_paths "$py" "$base/venv/bin/python" ||
            ! "$base/venv/bin/python" -m pip install --quiet --no-index \
                --disable-pip-version-check --find-links "$dir/extra" pytools mako setuptools >&2; then
            echo "run.sh pycuda-control: could not set up the build environment" >&2
            return 1
        fi
        local start=$SECONDS
        if ! (cd "$src" && "$base/venv/bin/python" configure.py --cuda-root=/usr/local/cuda &&
            "$base/venv/bin/python" setup.py build_ext --inplace -j 16) >"$RESULTS/pycuda-control-build.txt" 2>&1; then
            tail -n 20 "$RESULTS/pycuda-control-build.txt"
            echo "run.sh pycuda-control: building PyCUDA failed" >&2
            return 1
        fi
        echo "pycuda-control: PyCUDA built in $((SECONDS - start)) s"
        touch "$base/.built"
    fi
    local work
    work=$(mktemp -d /tmp/rucuda-pycuda-tests.XXXXXX)
    PYTHONPATH=$src pycuda_pytest "$work" "$base/venv/bin/python" "$RESULTS/pycuda-control.txt" "$@"
    local rc=$?
    rm -rf -- "$work"
    return $rc
}
