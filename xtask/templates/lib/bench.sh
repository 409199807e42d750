# run.sh bench: the peers (CuPy, NVIDIA's CUDA C++, PyTorch's all-reduce) and the bench
# binary, which merges their results into bench.jsonl and bench.md. Sourced by run.sh.

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

# Runs peer NAME (the command after it) into $tmp/NAME.jsonl and passes its results on to
# the bench binary (run_bench's tmp and peer_args).
run_peer() {
    local name=$1
    shift
    "$@" >"$tmp/$name.jsonl" || echo "== peer $name: some cases failed (see above)" >&2
    [[ -s $tmp/$name.jsonl ]] && peer_args+=(--peer-results "$tmp/$name.jsonl")
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
            run_peer cupy python3 "$HERE/peers/cupy_bench.py"
        else
            echo "== peer cupy skipped: no python3" >&2
        fi
    fi
    gpus=$(visible_gpus)
    if ((peers)) && [[ -f $HERE/peers/torch_allreduce.py ]]; then
        if ((gpus >= 2)) && command -v python3 >/dev/null; then
            echo "== peer torch: python3 peers/torch_allreduce.py ($gpus GPUs)" >&2
            run_peer torch python3 "$HERE/peers/torch_allreduce.py"
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
                run_peer nvidia "$tmp/nvidia_bench"
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
