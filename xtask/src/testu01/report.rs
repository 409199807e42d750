//! Running the cases (`stream GENERATOR SEED STATES | smallcrush NAME`, several at once),
//! reading the p-values the harness prints after TestU01's report, and the results as a
//! markdown table and JSON.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{json, Value};

use super::{Args, Case};
use crate::util::XResult;

/// The statistics SmallCrush computes.
pub(super) const SMALLCRUSH_STATISTICS: usize = 15;

/// One statistic of SmallCrush's report.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Statistic {
    /// Its position in the battery, from 1.
    index: u32,
    /// TestU01's name for it (`MaxOft AD`, `RandomWalk1 H`, ...).
    name: String,
    /// The p-value.
    p: f64,
}

/// What the harness printed after TestU01's report.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Battery {
    /// A statistic fails outside `[suspectp, 1 - suspectp]` (TestU01's `gofw_Suspectp`).
    pub(super) suspectp: f64,
    statistics: Vec<Statistic>,
}

impl Battery {
    pub(super) fn failures(&self) -> impl Iterator<Item = &Statistic> {
        self.statistics
            .iter()
            .filter(|s| !(self.suspectp..=1.0 - self.suspectp).contains(&s.p))
    }

    fn passed(&self) -> usize {
        self.statistics.len() - self.failures().count()
    }
}

/// Reads the `rucuda-smallcrush` lines of the harness's output.
pub(super) fn parse_harness_output(text: &str) -> XResult<Battery> {
    let mut suspectp = None;
    let mut statistics = Vec::new();
    for line in text.lines() {
        let mut fields = line.split('\t');
        if fields.next() != Some("rucuda-smallcrush") {
            continue;
        }
        let bad = || format!("harness line not understood: {line:?}");
        match fields.next() {
            Some("suspectp") => {
                suspectp = Some(fields.next().and_then(|v| v.parse().ok()).ok_or_else(bad)?);
            }
            Some("pvalue") => {
                let index = fields.next().and_then(|v| v.parse().ok()).ok_or_else(bad)?;
                let p: f64 = fields.next().and_then(|v| v.parse().ok()).ok_or_else(bad)?;
                let name = fields.next().ok_or_else(bad)?.trim().to_owned();
                if !(0.0..=1.0).contains(&p) {
                    return Err(bad().into());
                }
                statistics.push(Statistic { index, name, p });
            }
            _ => return Err(bad().into()),
        }
    }
    let suspectp = suspectp.ok_or("the harness printed no results (did SmallCrush finish?)")?;
    if statistics.is_empty() {
        return Err("the harness printed no p-values".into());
    }
    Ok(Battery {
        suspectp,
        statistics,
    })
}

/// A p-value as TestU01's summary writes it: `eps` below 1e-300, `1 - eps1` above
/// 1 - 1e-15, `1 - x` close to 1.
pub(super) fn format_p(p: f64) -> String {
    if p < 1e-300 {
        "eps".to_owned()
    } else if p > 1.0 - 1e-15 {
        "1 - eps1".to_owned()
    } else if p > 0.99 {
        format!("1 - {:.1e}", 1.0 - p)
    } else if p < 0.01 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// One case's result.
pub(super) struct Outcome {
    pub(super) case: Case,
    pub(super) battery: Battery,
    seconds: f64,
    log: PathBuf,
}

/// Runs the cases, `args.jobs` at a time, in the order given.
pub(super) fn run_cases(
    args: &Args,
    stream: &Path,
    harness: &Path,
    dir: &Path,
) -> XResult<Vec<Outcome>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Outcome, String>>>> =
        Mutex::new((0..args.cases.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..args.jobs.min(args.cases.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = args.cases.get(i) else {
                    break;
                };
                let result = run_case(case, args.seed, stream, harness, dir)
                    .map_err(|e| format!("{}: {e}", case.name()));
                if let Ok(o) = &result {
                    let failures: Vec<String> = o
                        .battery
                        .failures()
                        .map(|s| format!("{} ({})", s.name, format_p(s.p)))
                        .collect();
                    eprintln!(
                        "testu01: {:<22} {:>2}/{} passed in {:.1} s{}",
                        case.name(),
                        o.battery.passed(),
                        o.battery.statistics.len(),
                        o.seconds,
                        if failures.is_empty() {
                            String::new()
                        } else {
                            format!("; failed: {}", failures.join(", "))
                        }
                    );
                }
                if let Ok(mut slots) = results.lock() {
                    slots[i] = Some(result);
                }
            });
        }
    });
    let slots = results.into_inner().map_err(|_| "a worker panicked")?;
    let mut outcomes = Vec::new();
    let mut errors = Vec::new();
    for slot in slots {
        match slot {
            Some(Ok(o)) => outcomes.push(o),
            Some(Err(e)) => errors.push(e),
            None => errors.push("a case did not run".to_owned()),
        }
    }
    if errors.is_empty() {
        Ok(outcomes)
    } else {
        Err(errors.join("\n").into())
    }
}

/// `stream GENERATOR SEED STATES | smallcrush NAME`, the report into `dir/logs/NAME.txt`.
pub(super) fn run_case(
    case: &Case,
    seed: u64,
    stream: &Path,
    harness: &Path,
    dir: &Path,
) -> XResult<Outcome> {
    let started = Instant::now();
    let log = dir.join("logs").join(format!("{}.txt", case.name()));
    let mut words = Command::new(stream)
        .arg(&case.generator)
        .arg(seed.to_string())
        .arg(case.states.to_string())
        .stdout(Stdio::piped())
        .spawn()?;
    let pipe = words.stdout.take().ok_or("no pipe from the stream")?;
    let out = File::create(&log)?;
    let status = Command::new(harness)
        .arg(case.name())
        .stdin(Stdio::from(pipe))
        .stdout(out.try_clone()?)
        .stderr(out)
        .status();
    // The stream stops at the closed pipe by itself; make sure of it.
    let _ = words.kill();
    let _ = words.wait();
    let status = status?;
    if !status.success() {
        return Err(format!("the harness failed ({status}); see {}", log.display()).into());
    }
    let battery = parse_harness_output(&fs::read_to_string(&log)?)
        .map_err(|e| format!("{e}; see {}", log.display()))?;
    if battery.statistics.len() != SMALLCRUSH_STATISTICS {
        eprintln!(
            "testu01: {}: {} statistics, not SmallCrush's {SMALLCRUSH_STATISTICS}",
            case.name(),
            battery.statistics.len()
        );
    }
    Ok(Outcome {
        case: case.clone(),
        battery,
        seconds: started.elapsed().as_secs_f64(),
        log,
    })
}

/// The results as a markdown table.
pub(super) fn markdown_table(outcomes: &[Outcome]) -> String {
    let mut s = String::from(
        "| generator | states | kind | passed | failed statistics (p-value) | nearest the edge |\n\
         |---|---:|---|---:|---|---|\n",
    );
    for o in outcomes {
        let failures: Vec<String> = o
            .battery
            .failures()
            .map(|f| format!("{} ({})", f.name, format_p(f.p)))
            .collect();
        let edge = o
            .battery
            .statistics
            .iter()
            .min_by(|a, b| a.p.min(1.0 - a.p).total_cmp(&b.p.min(1.0 - b.p)))
            .map_or(String::new(), |e| format!("{} ({})", e.name, format_p(e.p)));
        s += &format!(
            "| {} | {} | {} | {}/{} | {} | {edge} |\n",
            o.case.generator,
            o.case.states,
            if o.case.pseudo() {
                "pseudo-random"
            } else {
                "quasi-random"
            },
            o.battery.passed(),
            o.battery.statistics.len(),
            if failures.is_empty() {
                "none".to_owned()
            } else {
                failures.join(", ")
            }
        );
    }
    s
}

pub(super) fn outcome_json(o: &Outcome) -> Value {
    let statistic = |s: &Statistic| json!({"index": s.index, "test": s.name, "p": s.p});
    json!({
        "case": o.case.name(),
        "generator": o.case.generator,
        "states": o.case.states,
        "kind": if o.case.pseudo() { "pseudo-random" } else { "quasi-random" },
        "statistics": o.battery.statistics.len(),
        "passed": o.battery.passed(),
        "failures": o.battery.failures().map(statistic).collect::<Vec<_>>(),
        "p_values": o.battery.statistics.iter().map(statistic).collect::<Vec<_>>(),
        "suspectp": o.battery.suspectp,
        "seconds": o.seconds,
        "log": o.log.display().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harness_output() {
        let text = "\
========= Summary results of SmallCrush =========\n\
 All tests were passed\n\
rucuda-smallcrush\tsuspectp\t0.001\n\
rucuda-smallcrush\tpvalue\t1\t0.5\tBirthdaySpacings\n\
rucuda-smallcrush\tpvalue\t6\t0.00050000000000000001\tMaxOft\n\
rucuda-smallcrush\tpvalue\t7\t1\tMaxOft AD\n\
rucuda-smallcrush\tpvalue\t8\t0.999\tWeightDistrib\n";
        let b = parse_harness_output(text).unwrap();
        assert_eq!(b.suspectp, 0.001);
        assert_eq!(b.statistics.len(), 4);
        assert_eq!(b.statistics[2].name, "MaxOft AD");
        let failed: Vec<u32> = b.failures().map(|f| f.index).collect();
        assert_eq!(failed, vec![6, 7]);
        assert_eq!(b.passed(), 2);

        assert!(parse_harness_output("no results\n").is_err());
        assert!(parse_harness_output("rucuda-smallcrush\tsuspectp\t0.001\n").is_err());
        assert!(parse_harness_output("rucuda-smallcrush\tpvalue\tx\t1\tGap\n").is_err());
        assert!(parse_harness_output(
            "rucuda-smallcrush\tsuspectp\t0.001\nrucuda-smallcrush\tpvalue\t1\t2\tGap\n"
        )
        .is_err());
    }

    #[test]
    fn p_values_as_testu01_writes_them() {
        assert_eq!(format_p(0.0), "eps");
        assert_eq!(format_p(1.0), "1 - eps1");
        assert_eq!(format_p(0.99995), "1 - 5.0e-5");
        assert_eq!(format_p(2.5e-4), "2.5e-4");
        assert_eq!(format_p(0.5), "0.500");
    }
}
