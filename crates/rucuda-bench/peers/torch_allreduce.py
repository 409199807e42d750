#!/usr/bin/env python3
"""PyTorch peer of rucuda-bench's all-reduce cases: torch.distributed with the NCCL backend.

One process per visible GPU, started by this script itself (torch.multiprocessing, rendezvous
through environment variables on 127.0.0.1 and a free port). Each size is measured as
rucuda-bench's crates/rucuda-bench/src/cases/nccl.rs measures it (keep the two in step): the
host clock around `iters` back-to-back in-place float32 sums and a device synchronisation,
divided by `iters`; the slowest rank's time; the median over samples after one untimed one.

Prints one JSON object a line on stdout for `run.sh bench` to merge:
  {"case": "allreduce_busbw_GBps", "lib": "torch", "n": <bytes per GPU>, "value": GB/s, ...}
  {"case": "allreduce_latency_us", "lib": "torch", "n": 8, "value": microseconds, ...}
Progress and errors go to stderr. Without torch, or with fewer than two GPUs, it says so and
prints nothing. NCCL_NVLS_ENABLE=0 and TORCH_SYMM_MEM_DISABLE_MULTICAST=1 are set for every
process: NVLink multicast stays off on the machines this project runs on.

Environment, as for rucuda-bench:
  RUCUDA_BENCH_QUICK=1     fewer sizes and repetitions
  RUCUDA_BENCH_CASES=a,b   only cases whose name contains one of the substrings
"""

import json
import os
import socket
import statistics
import sys
import tempfile
import time

os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
except ImportError as error:  # the peer is optional
    print(f"torch_allreduce: PyTorch is not available ({error}); skipping the torch peer", file=sys.stderr)
    sys.exit(0)

QUICK = os.environ.get("RUCUDA_BENCH_QUICK", "") not in ("", "0")
PATTERNS = [p.strip() for p in os.environ.get("RUCUDA_BENCH_CASES", "").split(",") if p.strip()]
BUSBW = "allreduce_busbw_GBps"
LATENCY = "allreduce_latency_us"


def selected(case):
    return not PATTERNS or any(p in case for p in PATTERNS)


def sizes():
    if QUICK:
        return [1 << k for k in (10, 14, 18, 22, 26, 30)]
    return [1 << k for k in range(10, 31)]


def iters(nbytes):
    small, medium, large = (50, 20, 5) if QUICK else (200, 50, 20)
    if nbytes <= 8:
        return 200 if QUICK else 1000
    if nbytes <= 1 << 16:
        return small
    if nbytes <= 1 << 24:
        return medium
    return large


REPS = 3 if QUICK else 7


def seconds_per_op(buffer, nbytes, rank):
    """The slowest rank's host seconds per all-reduce of the first nbytes of buffer."""
    view = buffer[: nbytes // 4]
    n = iters(nbytes)
    samples = []
    for rep in range(REPS + 1):
        torch.cuda.synchronize()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(n):
            dist.all_reduce(view, op=dist.ReduceOp.SUM)
        torch.cuda.synchronize()
        elapsed = torch.tensor([(time.perf_counter() - start) / n], device=f"cuda:{rank}", dtype=torch.float64)
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        if rep > 0:
            samples.append(elapsed.item())
    return statistics.median(samples)


def worker(rank, world, port, out_path):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world))
    torch.cuda.set_device(rank)
    try:  # device_id (torch 2.3 and newer) makes the NCCL communicator at once
        dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device(f"cuda:{rank}"))
    except TypeError:
        dist.init_process_group("nccl", rank=rank, world_size=world)
    lines = []
    device = torch.cuda.get_device_name(rank)
    largest = max(sizes())
    buffer = torch.zeros(largest // 4, dtype=torch.float32, device=f"cuda:{rank}")
    if selected(BUSBW):
        for nbytes in sizes():
            seconds = seconds_per_op(buffer, nbytes, rank)
            busbw = nbytes / seconds / 1e9 * 2 * (world - 1) / world
            lines.append({"case": BUSBW, "lib": "torch", "n": nbytes, "value": busbw, "unit": "GB/s", "device": device})
            if rank == 0:
                print(f"torch_allreduce: {nbytes:>11} bytes  {busbw:8.2f} GB/s", file=sys.stderr)
    if selected(LATENCY):
        seconds = seconds_per_op(buffer, 8, rank)
        lines.append({"case": LATENCY, "lib": "torch", "n": 8, "value": seconds * 1e6, "unit": "us", "device": device})
        if rank == 0:
            print(f"torch_allreduce: 8 bytes  {seconds * 1e6:.2f} us", file=sys.stderr)
    if rank == 0:
        with open(out_path, "w") as out:
            for line in lines:
                out.write(json.dumps(line) + "\n")
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    if not torch.cuda.is_available() or not dist.is_nccl_available():
        print("torch_allreduce: torch has no CUDA or no NCCL; skipping the torch peer", file=sys.stderr)
        return 0
    world = torch.cuda.device_count()
    if world < 2:
        print(f"torch_allreduce: all-reduce needs 2 or more GPUs, {world} visible; skipping", file=sys.stderr)
        return 0
    if not (selected(BUSBW) or selected(LATENCY)):
        return 0
    print(f"torch_allreduce: torch {torch.__version__}, NCCL {torch.cuda.nccl.version()}, {world} GPUs", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "torch.jsonl")
        mp.spawn(worker, args=(world, free_port(), out_path), nprocs=world, join=True)
        with open(out_path) as f:
            sys.stdout.write(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
