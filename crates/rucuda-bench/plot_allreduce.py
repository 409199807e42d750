#!/usr/bin/env python3
"""Plots the all-reduce bus bandwidth of a bench run (bench.jsonl) as an SVG, one line per
lib (raw NCCL, rucuda, torch), size on a log axis; needs nothing but Python.

    python3 crates/rucuda-bench/plot_allreduce.py OUT/bench.jsonl docs/bench/allreduce.svg

It also prints the markdown table of the same numbers (size, each lib's GB/s, and rucuda
relative to torch) for docs/bench/.
"""

import json
import math
import sys

CASE = "allreduce_busbw_GBps"
LATENCY = "allreduce_latency_us"
COLORS = {"raw": "#888888", "rucuda": "#d62728", "torch": "#1f77b4"}
W, H, LEFT, RIGHT, TOP, BOTTOM = 760, 440, 70, 130, 40, 60


def size_label(n):
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def main(src, dst):
    series, latency, device = {}, {}, ""
    with open(src) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r.get("case") == CASE:
                series.setdefault(r["lib"], {})[int(r["n"])] = float(r["value"])
                device = device or r.get("device", "")
            elif r.get("case") == LATENCY:
                latency[r["lib"]] = float(r["value"])
    if not series:
        sys.exit(f"plot_allreduce: no {CASE} records in {src}")
    sizes = sorted({n for s in series.values() for n in s})
    top = max(v for s in series.values() for v in s.values()) * 1.1
    x0, x1 = math.log2(sizes[0]), math.log2(sizes[-1])
    px = lambda n: LEFT + (math.log2(n) - x0) / max(x1 - x0, 1) * (W - LEFT - RIGHT)
    py = lambda v: H - BOTTOM - v / top * (H - TOP - BOTTOM)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="15">All-reduce bus bandwidth, {device}</text>']
    for k in range(6):
        v = top * k / 5
        out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{LEFT - 8}" y="{py(v) + 4:.1f}" text-anchor="end">{v:.0f}</text>')
    ticks = sizes[:: max(1, len(sizes) // 8)]
    if ticks[-1] != sizes[-1]:
        ticks.append(sizes[-1])
    for n in ticks:
        out.append(f'<text x="{px(n):.1f}" y="{H - BOTTOM + 18}" text-anchor="middle">{size_label(n)}</text>')
    out.append(f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 15}" text-anchor="middle">bytes per GPU</text>')
    out.append(f'<text x="18" y="{H / 2}" text-anchor="middle" transform="rotate(-90 18 {H / 2})">GB/s</text>')
    for i, (lib, points) in enumerate(sorted(series.items())):
        color = COLORS.get(lib, "#2ca02c")
        path = " ".join(f"{'M' if j == 0 else 'L'}{px(n):.1f},{py(v):.1f}" for j, (n, v) in enumerate(sorted(points.items())))
        out.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        label = lib + (f" ({latency[lib]:.1f} us at 8 B)" if lib in latency else "")
        out.append(f'<text x="{W - RIGHT + 10}" y="{TOP + 20 + 18 * i}" fill="{color}">{label}</text>')
    out.append("</svg>")
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")

    libs = sorted(series)
    print(f"| size | {' | '.join(libs)} | rucuda / torch |")
    print(f"|---|{'---:|' * len(libs)}---:|")
    for n in sizes:
        cells = [f"{series[l][n]:.1f}" if n in series[l] else "—" for l in libs]
        r, t = series.get("rucuda", {}).get(n), series.get("torch", {}).get(n)
        ratio = f"{r / t * 100:.1f}%" if r and t else "—"
        print(f"| {size_label(n)} | {' | '.join(cells)} | {ratio} |")
    if latency:
        print("\n8-byte all-reduce latency: " + ", ".join(f"{l} {v:.2f} us" for l, v in sorted(latency.items())))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
