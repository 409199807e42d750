//! Results: one [`Record`] per (case, lib), ratios within the run, `bench.jsonl` (one JSON
//! object a line, the format of shared/TARGETS.md) and a markdown table with the libs side
//! by side.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::cuda::{Error, Result};
use crate::harness::units;

/// The case every bandwidth ratio is taken against.
pub const COPY_CASE: &str = "d2d_copy_GBps";

/// The lib name of the floor: the same work through rucuda-driver-sys calls alone.
pub const RAW: &str = "raw";

/// Column order of the table; libs not listed follow in the order seen.
const LIB_ORDER: [&str; 5] = ["raw", "rucuda", "cupy", "pycuda", "nvidia"];

/// One result line of `bench.jsonl`; the fields are written in this order.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Record {
    /// Case name (shared/TARGETS.md).
    pub case: String,
    /// `raw`, `rucuda`, `cupy`, `pycuda` or `nvidia`.
    pub lib: String,
    /// Problem size (see each case).
    pub n: u64,
    /// The median.
    #[serde(serialize_with = "rounded")]
    pub value: f64,
    /// `us`, `GB/s`, ...
    pub unit: String,
    /// To the copy bandwidth of this run (GB/s cases) or to `raw` (other cases).
    #[serde(serialize_with = "rounded_option")]
    pub ratio: Option<f64>,
    /// The device's name.
    pub device: String,
    /// When it was measured (UTC, ISO 8601).
    pub date: String,
}

impl Record {
    /// The JSON line, fields in the documented order (the struct's).
    pub fn to_json_line(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| Error(format!("{}: {e}", self.case)))
    }

    /// A record from a peer's JSON line; `device` and `date` default to this run's.
    pub fn from_peer_line(line: &str, device: &str, date: &str) -> Result<Record> {
        let peer: PeerLine = serde_json::from_str(line)
            .map_err(|e| Error(format!("peer line not understood ({e}): {line}")))?;
        Ok(Record {
            case: peer.case,
            lib: peer.lib,
            n: peer.n.unwrap_or(0),
            value: peer.value,
            unit: peer.unit,
            ratio: None,
            device: peer
                .device
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| device.to_owned()),
            date: peer.date.unwrap_or_else(|| date.to_owned()),
        })
    }
}

/// What a peer writes: this run's fields, `n`, `device` and `date` optional.
#[derive(serde::Deserialize)]
struct PeerLine {
    case: String,
    lib: String,
    n: Option<u64>,
    value: f64,
    unit: String,
    device: Option<String>,
    date: Option<String>,
}

/// Writes a measured value rounded to 4 decimals, and a non-finite one as `null`.
fn rounded<S: serde::Serializer>(x: &f64, s: S) -> std::result::Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(round(*x))
    } else {
        s.serialize_none()
    }
}

/// [`rounded`] for an optional value.
fn rounded_option<S: serde::Serializer>(
    x: &Option<f64>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match x {
        Some(x) => rounded(x, s),
        None => s.serialize_none(),
    }
}

fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// Reads a peer's output: JSON objects one a line; other lines are reported and skipped.
pub fn read_peer_file(path: &Path, device: &str, date: &str) -> Result<Vec<Record>> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Error(format!("{}: {e}", path.display())))?;
    let mut records = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !line.starts_with('{') {
            eprintln!(
                "rucuda-bench: {}: skipping a line that is not JSON: {line}",
                path.display()
            );
            continue;
        }
        records.push(Record::from_peer_line(line, device, date)?);
    }
    Ok(records)
}

/// Fills every record's ratio: GB/s cases to the raw copy bandwidth of this run (or, with no
/// raw copy, the best copy of any lib), other cases to the raw value of the same case, or,
/// where there is no raw one (the random-number cases), NVIDIA's.
pub fn fill_ratios(records: &mut [Record]) {
    let copies = records
        .iter()
        .filter(|r| r.case == COPY_CASE && r.unit == units::GBPS);
    let copy = records
        .iter()
        .find(|r| r.case == COPY_CASE && r.lib == RAW)
        .map(|r| r.value)
        .or_else(|| copies.map(|r| r.value).reduce(f64::max));
    let raw: BTreeMap<String, f64> = records
        .iter()
        .filter(|r| r.lib == RAW)
        .map(|r| (r.case.clone(), r.value))
        .collect();
    // Cases that sweep sizes compare each size with the raw value at the same size.
    let raw_sized: BTreeMap<(String, u64), f64> = records
        .iter()
        .filter(|r| r.lib == RAW)
        .map(|r| ((r.case.clone(), r.n), r.value))
        .collect();
    // Cases with no raw floor (the RNGs) compare with NVIDIA's own.
    let nvidia: BTreeMap<String, f64> = records
        .iter()
        .filter(|r| r.lib == "nvidia")
        .map(|r| (r.case.clone(), r.value))
        .collect();
    // Swept cases (sort sizes) compare each size with NVIDIA's at the same size.
    let nvidia_sized: BTreeMap<(String, u64), f64> = records
        .iter()
        .filter(|r| r.lib == "nvidia")
        .map(|r| ((r.case.clone(), r.n), r.value))
        .collect();
    for r in records.iter_mut() {
        let reference = if r.unit == units::GBPS {
            copy
        } else {
            raw_sized
                .get(&(r.case.clone(), r.n))
                .or_else(|| raw.get(&r.case))
                .or_else(|| nvidia_sized.get(&(r.case.clone(), r.n)))
                .or_else(|| nvidia.get(&r.case))
                .copied()
        };
        r.ratio = reference.filter(|&x| x > 0.0).map(|x| r.value / x);
    }
}

/// Writes `bench.jsonl` (one record a line).
pub fn write_jsonl(path: &Path, records: &[Record]) -> Result<()> {
    let mut text = String::new();
    for r in records {
        text += &r.to_json_line()?;
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| Error(format!("{}: {e}", path.display())))
}

/// The table: one row per case (in first-seen order), one column per lib. A case measured
/// at several sizes (`n`) gets a row per size, labelled with it.
pub fn table(records: &[Record], device: &str, date: &str) -> String {
    let mut rows: Vec<(&str, Option<u64>, &str)> = Vec::new();
    let mut libs: Vec<&str> = LIB_ORDER
        .iter()
        .copied()
        .filter(|l| records.iter().any(|r| r.lib == *l))
        .collect();
    let swept = |case: &str| {
        let mut sizes = records.iter().filter(|r| r.case == case).map(|r| r.n);
        let first = sizes.next();
        sizes.any(|n| Some(n) != first)
    };
    for r in records {
        let size = swept(&r.case).then_some(r.n);
        if !rows.iter().any(|(c, n, _)| *c == r.case && *n == size) {
            rows.push((&r.case, size, &r.unit));
        }
        if !libs.contains(&r.lib.as_str()) {
            libs.push(&r.lib);
        }
    }
    // The sizes of a swept case in increasing order, each case's rows together.
    let order: Vec<&str> = rows.iter().fold(Vec::new(), |mut seen, (c, _, _)| {
        if !seen.contains(c) {
            seen.push(c);
        }
        seen
    });
    rows.sort_by_key(|(c, n, _)| (order.iter().position(|o| o == c), *n));
    let mut out = String::new();
    let _ = writeln!(out, "rucuda-bench on {device}, {date}");
    let _ = writeln!(
        out,
        "(GB/s cases: % of the raw device-to-device copy bandwidth of this run; us cases: x raw; \
         GS/s cases: x NVIDIA's cuRAND host API; GK/s cases: x CUB)\n"
    );
    let _ = writeln!(out, "| case | unit | {} |", libs.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---:|".repeat(libs.len()));
    for (case, size, unit_name) in rows {
        let cells: Vec<String> = libs
            .iter()
            .map(|lib| {
                match records
                    .iter()
                    .find(|r| r.case == case && r.lib == *lib && size.is_none_or(|n| r.n == n))
                {
                    Some(r) => cell(r),
                    None => "—".to_owned(),
                }
            })
            .collect();
        let label = match size {
            Some(n) => format!("{case} @ {}", bytes_label(n)),
            None => case.to_owned(),
        };
        let _ = writeln!(out, "| {label} | {unit_name} | {} |", cells.join(" | "));
    }
    out
}

/// `1024` as `1 KiB`, `3 << 30` as `3 GiB`; other numbers as they are.
pub fn bytes_label(n: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n % (1 << shift) == 0 {
            return format!("{} {unit}", n >> shift);
        }
    }
    n.to_string()
}

fn cell(r: &Record) -> String {
    let value = match r.value.abs() {
        v if v >= 100.0 => format!("{:.1}", r.value),
        v if v >= 1.0 => format!("{:.2}", r.value),
        _ => format!("{:.3}", r.value),
    };
    match (r.ratio, r.unit == units::GBPS) {
        (Some(ratio), true) => format!("{value} ({:.1}%)", ratio * 100.0),
        (Some(ratio), false) => format!("{value} ({ratio:.2}x)"),
        (None, _) => value,
    }
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339, whole seconds).
pub fn utc_timestamp() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn rec(case: &str, lib: &str, value: f64, unit_name: &str) -> Record {
        Record {
            case: case.into(),
            lib: lib.into(),
            n: 1,
            value,
            unit: unit_name.into(),
            ratio: None,
            device: "GPU".into(),
            date: "2026-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn ratios_use_raw_copy_and_raw_case() {
        let mut records = vec![
            rec(COPY_CASE, "raw", 3000.0, units::GBPS),
            rec(COPY_CASE, "cupy", 2700.0, units::GBPS),
            rec("h2d_pinned_GBps", "raw", 30.0, units::GBPS),
            rec("launch_empty_us", "raw", 4.0, units::MICROS),
            rec("launch_empty_us", "cupy", 5.0, units::MICROS),
            rec("sum_f32_GBps", "nvidia", 3030.0, units::GBPS),
            rec("compile_first_ms", "cupy", 450.0, "ms"),
        ];
        fill_ratios(&mut records);
        let ratios: Vec<Option<f64>> = records.iter().map(|r| r.ratio).collect();
        assert_eq!(
            ratios,
            [
                Some(1.0),
                Some(0.9),
                Some(0.01),
                Some(1.0),
                Some(1.25),
                Some(1.01),
                None
            ]
        );
    }

    #[test]
    fn random_number_cases_compare_with_nvidia() {
        let mut records = vec![
            rec("rand_uniform_f32_philox_GSps", "rucuda", 740.0, units::GSPS),
            rec(
                "rand_uniform_f32_philox_GSps",
                "nvidia",
                740.0 / 0.98,
                units::GSPS,
            ),
            rec("rand_normal_f32_xorwow_GSps", "rucuda", 200.0, units::GSPS),
        ];
        fill_ratios(&mut records);
        assert!((records[0].ratio.unwrap() - 0.98).abs() < 1e-12);
        assert_eq!(records[1].ratio, Some(1.0));
        assert_eq!(records[2].ratio, None);
    }

    #[test]
    fn without_raw_copy_the_best_copy_is_the_reference() {
        let mut records = vec![
            rec(COPY_CASE, "cupy", 2000.0, units::GBPS),
            rec(COPY_CASE, "nvidia", 2500.0, units::GBPS),
        ];
        fill_ratios(&mut records);
        assert_eq!(records[0].ratio, Some(0.8));
    }

    #[test]
    fn json_lines_have_the_documented_fields_in_order() {
        let mut r = rec("launch_empty_us", "raw", 4.123456789, units::MICROS);
        r.ratio = Some(1.0);
        assert_eq!(
            r.to_json_line().unwrap(),
            "{\"case\":\"launch_empty_us\",\"lib\":\"raw\",\"n\":1,\"value\":4.1235,\"unit\":\"us\",\
             \"ratio\":1.0,\"device\":\"GPU\",\"date\":\"2026-01-01T00:00:00Z\"}"
        );
        let back: Value = serde_json::from_str(&r.to_json_line().unwrap()).unwrap();
        assert_eq!(back["value"], 4.1235);
        r.value = f64::NAN;
        r.ratio = None;
        assert!(r
            .to_json_line()
            .unwrap()
            .contains("\"value\":null,\"unit\":\"us\",\"ratio\":null,"));
    }

    #[test]
    fn peer_lines_parse_with_defaults() {
        let r = Record::from_peer_line(
            r#"{"case":"d2d_copy_GBps","lib":"cupy","n":8,"value":2.5,"unit":"GB/s"}"#,
            "H100",
            "D",
        )
        .unwrap();
        assert_eq!(
            (r.lib.as_str(), r.n, r.device.as_str(), r.date.as_str()),
            ("cupy", 8, "H100", "D")
        );
        assert!(
            Record::from_peer_line(r#"{"case":"x","lib":"cupy","unit":"us"}"#, "", "").is_err()
        );
        assert!(Record::from_peer_line("not json", "", "").is_err());
    }

    #[test]
    fn table_puts_libs_side_by_side() {
        let mut records = vec![
            rec(COPY_CASE, "raw", 3000.0, units::GBPS),
            rec("launch_empty_us", "cupy", 5.0, units::MICROS),
            rec("launch_empty_us", "raw", 4.0, units::MICROS),
            rec("cub_thing", "mylib", 0.5, "ms"),
        ];
        fill_ratios(&mut records);
        let t = table(&records, "GPU", "today");
        assert!(t.contains("| case | unit | raw | cupy | mylib |"), "{t}");
        assert!(
            t.contains("| d2d_copy_GBps | GB/s | 3000.0 (100.0%) | — | — |"),
            "{t}"
        );
        assert!(
            t.contains("| launch_empty_us | us | 4.00 (1.00x) | 5.00 (1.25x) | — |"),
            "{t}"
        );
        assert!(t.contains("| cub_thing | ms | — | — | 0.500 |"), "{t}");
    }

    #[test]
    fn swept_cases_get_a_row_per_size() {
        let mut records = Vec::new();
        for (lib, scale) in [("rucuda", 1.0), ("torch", 0.9)] {
            for n in [1u64 << 30, 1 << 10, 1 << 20] {
                let mut r = rec(
                    "allreduce_busbw_GBps",
                    lib,
                    scale * (n as f64).log2(),
                    units::GBPS,
                );
                r.n = n;
                records.push(r);
            }
        }
        records.push(rec("allreduce_latency_us", "rucuda", 20.0, units::MICROS));
        let t = table(&records, "GPU", "today");
        let rows: Vec<&str> = t.lines().filter(|l| l.starts_with("| allreduce")).collect();
        assert_eq!(rows.len(), 4, "{t}");
        assert!(
            rows[0].starts_with("| allreduce_busbw_GBps @ 1 KiB | GB/s | 10.00 | 9.00 |"),
            "{t}"
        );
        assert!(
            rows[1].starts_with("| allreduce_busbw_GBps @ 1 MiB |"),
            "{t}"
        );
        assert!(
            rows[2].starts_with("| allreduce_busbw_GBps @ 1 GiB | GB/s | 30.00 | 27.00 |"),
            "{t}"
        );
        assert!(
            rows[3].starts_with("| allreduce_latency_us | us | 20.00 | — |"),
            "{t}"
        );
        assert_eq!(bytes_label(8), "8");
        assert_eq!(bytes_label(3 << 20), "3 MiB");
    }

    #[test]
    fn raw_ratios_match_sizes_where_a_case_sweeps() {
        let mut records = Vec::new();
        for (lib, v) in [("raw", 10.0), ("rucuda", 12.0)] {
            for n in [8u64, 1024] {
                let mut r = rec("allreduce_latency_us", lib, v * n as f64, units::MICROS);
                r.n = n;
                records.push(r);
            }
        }
        fill_ratios(&mut records);
        assert_eq!(records[2].ratio, Some(1.2));
        assert_eq!(records[3].ratio, Some(1.2));
    }

    #[test]
    fn timestamps_look_right() {
        let t = utc_timestamp();
        assert_eq!(
            (t.len(), &t[4..5], &t[10..11], &t[19..]),
            (20, "-", "T", "Z")
        );
        assert!(t.as_str() > "2025");
    }
}
