//! `cargo xtask bench-report [BENCH_JSONL] [--out NAME.md]`: turns a `bench.jsonl` from `run.sh bench`
//! (default `docs/bench/h100.jsonl`) into `docs/bench/README.md` — every row of
//! shared/TARGETS.md with rucuda's figure, its peers, the ratio the target is about and
//! whether it is met — and SVG plots of bandwidth against size (rucuda beside CuPy).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::util::{project_root, XResult};

/// One line of bench.jsonl.
#[derive(Debug, Clone)]
struct Record {
    case: String,
    lib: String,
    n: u64,
    value: f64,
    unit: String,
    device: String,
    date: String,
}

fn parse(path: &Path) -> XResult<Vec<Record>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        let s = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_str())
                .unwrap_or_default()
                .to_string()
        };
        out.push(Record {
            case: s("case"),
            lib: s("lib"),
            n: v.get("n").and_then(|x| x.as_u64()).unwrap_or(0),
            value: v.get("value").and_then(|x| x.as_f64()).unwrap_or(f64::NAN),
            unit: s("unit"),
            device: s("device"),
            date: s("date"),
        });
    }
    Ok(out)
}

/// How a TARGETS.md row is judged.
enum Rule {
    /// rucuda ≥ fraction × the raw device-to-device copy bandwidth of the run.
    CopyFraction(f64),
    /// rucuda ≥ factor × NVIDIA's figure for `case`.
    VsNvidia(&'static str, f64),
    /// rucuda ≤ factor × raw (overheads).
    AtMostRaw(f64),
    /// rucuda ≤ an absolute bound.
    AtMost(f64),
    /// rucuda ≥ factor × the best of CuPy and PyCUDA.
    VsBestPeer(f64),
    /// No target: the reference figure.
    Reference,
    /// No target and no peer: a figure of ours, for the record.
    Record,
}

const ROWS: &[(&str, &str, Rule)] = &[
    (
        "d2d_copy_GBps",
        "device-to-device copy, 1 GiB (read+write)",
        Rule::Reference,
    ),
    (
        "saxpy_GBps",
        "saxpy with an ElementwiseKernel, 2^28 float32",
        Rule::CopyFraction(0.95),
    ),
    (
        "axpy_fused_GBps",
        "`2*x + y` through the fusion API",
        Rule::CopyFraction(0.90),
    ),
    (
        "sum_f32_GBps",
        "sum of 2^28 float32",
        Rule::VsNvidia("sum_f32_GBps", 0.97),
    ),
    (
        "reductionkernel_sum_f32_GBps",
        "ReductionKernel sum",
        Rule::VsNvidia("sum_f32_GBps", 0.95),
    ),
    (
        "dot_f32_GBps",
        "dot of two 2^28 float32 vectors",
        Rule::CopyFraction(0.97),
    ),
    (
        "max_f32_GBps",
        "max of 2^28 float32",
        Rule::VsNvidia("sum_f32_GBps", 0.97),
    ),
    (
        "sum_axis0_f32_GBps",
        "sum over axis 0 (strided) of 16384 x 16384 float32",
        Rule::CopyFraction(0.90),
    ),
    (
        "sum_axis1_f32_GBps",
        "sum over axis 1 (contiguous) of 16384 x 16384 float32",
        Rule::CopyFraction(0.90),
    ),
    (
        "scan_incl_i32_GBps",
        "inclusive scan, 2^28 int32",
        Rule::CopyFraction(0.85),
    ),
    (
        "scan_incl_f32_GBps",
        "inclusive scan, 2^28 float32",
        Rule::CopyFraction(0.85),
    ),
    (
        "rand_uniform_f32_philox_GSps",
        "uniform float32, Philox4x32-10",
        Rule::VsNvidia("rand_uniform_f32_philox_GSps", 0.97),
    ),
    (
        "rand_normal_f32_philox_GSps",
        "normal float32, Philox4x32-10",
        Rule::VsNvidia("rand_normal_f32_philox_GSps", 1.0),
    ),
    (
        "rand_uniform_f32_xorwow_GSps",
        "uniform float32, XORWOW",
        Rule::VsNvidia("rand_uniform_f32_xorwow_GSps", 1.5),
    ),
    (
        "rand_normal_f32_xorwow_GSps",
        "normal float32, XORWOW",
        Rule::VsNvidia("rand_normal_f32_xorwow_GSps", 3.0),
    ),
    (
        "rand_uniform_f32_mrg32k3a_GSps",
        "uniform float32, MRG32k3a",
        Rule::VsNvidia("rand_uniform_f32_mrg32k3a_GSps", 1.5),
    ),
    (
        "rand_normal_f32_mrg32k3a_GSps",
        "normal float32, MRG32k3a",
        Rule::VsNvidia("rand_normal_f32_mrg32k3a_GSps", 1.0),
    ),
    (
        "rand_uniform_f32_sobol32_GSps",
        "uniform float32, Sobol32",
        Rule::VsNvidia("rand_uniform_f32_sobol32_GSps", 0.97),
    ),
    (
        "rand_normal_f32_sobol32_GSps",
        "normal float32, Sobol32",
        Rule::VsNvidia("rand_normal_f32_sobol32_GSps", 1.0),
    ),
    (
        "rand_uniform_f32_sobol32_1024dims_GSps",
        "uniform float32, Sobol32, 1024 dimensions",
        Rule::Record,
    ),
    (
        "rand_normal_f32_sobol32_1024dims_GSps",
        "normal float32, Sobol32, 1024 dimensions",
        Rule::Record,
    ),
    (
        "launch_empty_us",
        "empty kernel launch, host µs",
        Rule::AtMostRaw(1.1),
    ),
    (
        "launch_args4_us",
        "launch with 4 arguments",
        Rule::AtMostRaw(1.1),
    ),
    (
        "launch_prepared_us",
        "prepared launch, 4 arguments",
        Rule::AtMostRaw(1.1),
    ),
    (
        "alloc_free_async_us",
        "allocate + free 1 MiB, stream-ordered",
        Rule::AtMostRaw(1.2),
    ),
    (
        "small_add_us",
        "`a + b`, 1000 float32, result allocated",
        Rule::AtMost(5.0),
    ),
    (
        "compile_first_ms",
        "first compile + load of a small kernel",
        Rule::AtMostRaw(1.3),
    ),
    (
        "compile_disk_hit_ms",
        "the same source again, from the disk cache",
        Rule::AtMost(0.2),
    ),
    (
        "compile_memo_hit_us",
        "again, from the in-process memo",
        Rule::AtMost(5.0),
    ),
    (
        "h2d_pageable_GBps",
        "host-to-device 1 GiB, pageable",
        Rule::VsBestPeer(2.0),
    ),
    (
        "d2h_pageable_GBps",
        "device-to-host 1 GiB, pageable",
        Rule::VsBestPeer(2.0),
    ),
    (
        "h2d_pinned_GBps",
        "host-to-device 1 GiB, pinned",
        Rule::VsBestPeer(1.0),
    ),
    (
        "d2h_pinned_GBps",
        "device-to-host 1 GiB, pinned",
        Rule::VsBestPeer(1.0),
    ),
    (
        "sort_keys_u32_GKps",
        "radix sort, 2^28 uint32 keys",
        Rule::VsNvidia("sort_keys_u32_GKps", 0.95),
    ),
    (
        "sort_keys_f32_GKps",
        "radix sort, 2^28 float32 keys",
        Rule::VsNvidia("sort_keys_f32_GKps", 0.95),
    ),
    (
        "sort_pairs_u32_GKps",
        "radix sort, 2^28 uint32/uint32 pairs",
        Rule::VsNvidia("sort_pairs_u32_GKps", 0.95),
    ),
    (
        "segsort_f32_4096x4096_GKps",
        "each row of 4096 x 4096 float32 sorted",
        Rule::VsNvidia("segsort_f32_4096x4096_GKps", 1.0),
    ),
    (
        "segsort_f32_64x128256_GKps",
        "each row of 64 x 128256 float32 sorted",
        Rule::VsNvidia("segsort_f32_64x128256_GKps", 1.0),
    ),
    (
        "sortrows_f32_64x128256_us",
        "64 x 128256 float32 rows sorted with positions (what top-k beats 2x)",
        Rule::Record,
    ),
    (
        "topk_f32_64x128256_us",
        "top-50 of each row of 64 x 128256 float32",
        Rule::Record,
    ),
    (
        "topk1024_f32_64x128256_us",
        "top-1024 of each row of 64 x 128256 float32",
        Rule::Record,
    ),
    (
        "histogram_u8_256_GBps",
        "histogram of 2^28 uint8 into 256 bins",
        Rule::VsNvidia("histogram_u8_256_GBps", 0.95),
    ),
    (
        "histogram_f32_256_GBps",
        "histogram of 2^28 float32 into 256 bins",
        Rule::VsNvidia("histogram_f32_256_GBps", 0.95),
    ),
    (
        "select_if_f32_GBps",
        "select-if x > 0.5 on 2^28 float32",
        Rule::VsNvidia("select_if_f32_GBps", 0.95),
    ),
    (
        "unique_i32_GKps",
        "unique of 2^28 int32 below 2^20",
        Rule::VsBestPeer(1.0),
    ),
    (
        "searchsorted_f32_GKps",
        "searchsorted, 2^28 queries into 2^28 float32",
        Rule::VsBestPeer(1.0),
    ),
];

/// Sweeps plotted: (case, title, unit).
const PLOTS: &[(&str, &str)] = &[
    ("allreduce_busbw_GBps", "all-reduce bus bandwidth"),
    ("saxpy_sweep_GBps", "elementwise saxpy (12 B/element)"),
    ("sum_f32_sweep_GBps", "sum of float32 (4 B/element)"),
    (
        "scan_incl_i32_sweep_GBps",
        "inclusive scan of int32 (8 B/element)",
    ),
    (
        "rand_uniform_f32_philox_sweep_GSps",
        "uniform float32, Philox4x32-10",
    ),
    ("sort_keys_u32_sweep_GKps", "radix sort of uint32 keys"),
    (
        "sort_pairs_u32_sweep_GKps",
        "radix sort of uint32 keys with uint32 values",
    ),
];

/// Entry point.
pub fn main(args: &[String]) -> XResult<()> {
    let root = project_root();
    let mut input = root.join("docs/bench/h100.jsonl");
    let mut out_name = "README.md".to_string();
    let mut rest = args.iter();
    while let Some(a) = rest.next() {
        match a.as_str() {
            "--out" => out_name = rest.next().ok_or("--out needs a file name")?.clone(),
            path => input = PathBuf::from(path),
        }
    }
    let records = parse(&input)?;
    let out_dir = root.join("docs/bench");
    std::fs::create_dir_all(&out_dir)?;
    let mut md = String::new();
    let device = records
        .first()
        .map(|r| r.device.clone())
        .unwrap_or_default();
    let date = records
        .iter()
        .map(|r| r.date.as_str())
        .find(|d| !d.is_empty())
        .unwrap_or("");
    writeln!(md, "# rucuda benchmarks\n")?;
    writeln!(
        md,
        "Made by `cargo xtask bench-report` from `{}` (`run.sh bench` on {device}, {date}).\n\
         Device work is timed with CUDA events, host overheads with the clock; each figure is a median\n\
         after warm-up; peers (CuPy, NVIDIA's CUB and cuRAND host API, the raw driver) ran in the same run.\n",
        input.strip_prefix(&root).unwrap_or(&input).display()
    )?;
    if ROWS
        .iter()
        .any(|(c, _, _)| records.iter().any(|r| r.case == *c && r.lib == "rucuda"))
    {
        md.push_str(&targets_table(&records));
    }
    md.push_str(&sweep_tables(&records));
    for (case, title) in PLOTS {
        let file = format!(
            "{}.svg",
            case.trim_end_matches("_GBps").trim_end_matches("_GSps")
        );
        if plot(&records, case, title, &out_dir.join(&file))? {
            writeln!(
                md,
                "\n### {title}\n\n![{title}: rucuda and CuPy against size]({file})"
            )?;
        }
    }
    let readme = out_dir.join(&out_name);
    std::fs::write(&readme, md)?;
    println!("wrote {}", readme.display());
    Ok(())
}

fn value(records: &[Record], case: &str, lib: &str) -> Option<f64> {
    records
        .iter()
        .filter(|r| r.case == case && r.lib == lib && r.value.is_finite())
        .map(|r| r.value)
        .next_back()
}

fn targets_table(records: &[Record]) -> String {
    let copy = value(records, "d2d_copy_GBps", "raw");
    let mut s = String::from(
        "| case | what | unit | rucuda | raw | CuPy | NVIDIA | measure | target | met |\n|---|---|---|---:|---:|---:|---:|---:|---|---|\n",
    );
    let fmt = |v: Option<f64>| {
        v.map_or("—".to_string(), |v| {
            if v >= 100.0 {
                format!("{v:.0}")
            } else if v >= 1.0 {
                format!("{v:.2}")
            } else {
                format!("{v:.3}")
            }
        })
    };
    for (case, what, rule) in ROWS {
        let ours = value(records, case, "rucuda");
        let raw = value(records, case, "raw");
        let cupy = value(records, case, "cupy");
        let nvidia = value(records, case, "nvidia");
        let unit = records
            .iter()
            .find(|r| r.case == *case)
            .map(|r| r.unit.clone())
            .unwrap_or_default();
        let (measure, target, met) = match rule {
            Rule::Reference => (None, "the bandwidth limit".to_string(), None),
            Rule::Record => (None, "no target (no peer)".to_string(), None),
            Rule::CopyFraction(f) => {
                let m = ours.zip(copy).map(|(o, c)| o / c);
                (
                    m.map(|m| format!("{:.1}% of copy", 100.0 * m)),
                    format!("≥ {:.0}% of copy", 100.0 * f),
                    m.map(|m| m >= *f),
                )
            }
            Rule::VsNvidia(c, f) => {
                let m = ours.zip(value(records, c, "nvidia")).map(|(o, n)| o / n);
                (
                    m.map(|m| format!("{m:.2}× NVIDIA")),
                    format!("≥ {f}× NVIDIA"),
                    m.map(|m| m >= *f),
                )
            }
            Rule::AtMostRaw(f) => {
                let m = ours.zip(raw).map(|(o, r)| o / r);
                (
                    m.map(|m| format!("{m:.2}× raw")),
                    format!("≤ {f}× raw"),
                    m.map(|m| m <= *f),
                )
            }
            Rule::AtMost(b) => (
                ours.map(|o| format!("{o:.3} {unit}")),
                format!("≤ {b} {unit}"),
                ours.map(|o| o <= *b),
            ),
            Rule::VsBestPeer(f) => {
                let best = [cupy, value(records, case, "pycuda")]
                    .into_iter()
                    .flatten()
                    .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
                let m = ours.zip(best).map(|(o, b)| o / b);
                (
                    m.map(|m| format!("{m:.2}× best peer")),
                    format!("≥ {f}× best peer"),
                    m.map(|m| m >= *f),
                )
            }
        };
        let met = match met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "—",
        };
        let _ = writeln!(
            s,
            "| `{case}` | {what} | {unit} | {} | {} | {} | {} | {} | {target} | {met} |",
            fmt(ours),
            fmt(raw),
            fmt(cupy),
            fmt(nvidia),
            measure.unwrap_or_else(|| "—".into())
        );
    }
    s
}

/// Draws one sweep; false when the records hold no points of it.
fn plot(records: &[Record], case: &str, title: &str, path: &Path) -> XResult<bool> {
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| r.case == case && r.n > 0 && r.value.is_finite())
    {
        series
            .entry(r.lib.clone())
            .or_default()
            .push((r.n as f64, r.value));
    }
    if series.is_empty() {
        return Ok(false);
    }
    let unit = records
        .iter()
        .find(|r| r.case == case)
        .map(|r| r.unit.clone())
        .unwrap_or_default();
    let (mut xmin, mut xmax, mut ymax) = (f64::MAX, 0f64, 0f64);
    for pts in series.values_mut() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        for &(x, y) in pts.iter() {
            xmin = xmin.min(x);
            xmax = xmax.max(x);
            ymax = ymax.max(y);
        }
    }
    let root = SVGBackend::new(path, (720, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((xmin..xmax).log_scale(), 0f64..ymax * 1.1)?;
    chart
        .configure_mesh()
        .x_desc("elements")
        .y_desc(unit.as_str())
        .x_label_formatter(&|x| format!("2^{}", x.log2().round() as i32))
        .draw()?;
    let colors = [RED, BLUE, GREEN, MAGENTA];
    for (i, (lib, pts)) in series.iter().enumerate() {
        let color = colors[i % colors.len()];
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?
            .label(lib.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(true)
}

/// Cases measured at several sizes, one table each: size by size, every lib side by side.
fn sweep_tables(records: &[Record]) -> String {
    let mut by_case: BTreeMap<&str, BTreeMap<u64, BTreeMap<&str, f64>>> = BTreeMap::new();
    for r in records {
        by_case
            .entry(r.case.as_str())
            .or_default()
            .entry(r.n)
            .or_default()
            .insert(r.lib.as_str(), r.value);
    }
    let mut s = String::new();
    for (case, sizes) in by_case.iter().filter(|(_, sizes)| sizes.len() > 2) {
        let libs: std::collections::BTreeSet<&str> =
            sizes.values().flat_map(|m| m.keys().copied()).collect();
        let unit = records
            .iter()
            .find(|r| r.case == *case)
            .map(|r| r.unit.as_str())
            .unwrap_or("");
        let _ = writeln!(s, "\n### `{case}` ({unit})\n");
        let _ = writeln!(
            s,
            "| n | {} |",
            libs.iter().copied().collect::<Vec<_>>().join(" | ")
        );
        let _ = writeln!(s, "|---:|{}", "---:|".repeat(libs.len()));
        for (n, vals) in sizes {
            let cells: Vec<String> = libs
                .iter()
                .map(|l| vals.get(l).map_or("—".into(), |v| format!("{v:.3}")))
                .collect();
            let _ = writeln!(s, "| {n} | {} |", cells.join(" | "));
        }
    }
    s
}
