//! `cargo xtask testu01 [--seed N] [--jobs N] [--refetch] [CASE...]`: TestU01's SmallCrush
//! on the CPU reference streams of `rucuda-rand` (`crates/rucuda-rand/testu01/`).
//!
//! 1. TestU01 comes from Debian's `non-free` packages `libtestu01-0-dev` and
//!    `libtestu01-0-dev-common` (`fetch::SUITE`; bookworm has none): `apt-get download` with a
//!    private list folder fetches them (signed by the Debian archive keyring) into
//!    `<target>/testu01/debs`, `dpkg-deb -x` unpacks them into `<target>/testu01/root`, once;
//!    `--refetch` does it again. Nothing is installed. `TESTU01_CFLAGS` (flags that find
//!    another TestU01, libraries included) skips the download; `TESTU01_MIRROR` and
//!    `TESTU01_SUITE` choose another Debian mirror or suite.
//! 2. `smallcrush.c` is compiled against the static archives, with `glibc_compat.c` for the
//!    C23 `scanf` entry points the archives call and older C libraries lack.
//! 3. `rucuda-rand`'s `stream` example (release) writes each case's words into the harness.
//!
//! A case is `GENERATOR` (one state, `curand_init(seed, 0, 0)`) or `GENERATOR@STATES` (the
//! words our fill kernel writes for that many states). The default: all seven generators,
//! then the three pseudo-random ones at 4096 states. Results: a table on stdout,
//! `<target>/testu01/smallcrush.{json,md}`, each case's TestU01 report in
//! `<target>/testu01/logs/`. The command fails when a pseudo-random generator fails a
//! statistic (p-value outside `[0.001, 0.999]`); the Sobol sequences are quasi-random and
//! expected to fail, so they are reported only.
//!
//! The jobs, one file each: `fetch` (Debian's packages, downloaded and unpacked),
//! `harness` (where TestU01 comes from, the compiled harness and the `stream` example),
//! `report` (the cases run, the report parsed and written).

mod fetch;
mod harness;
mod report;

use std::fs;
use std::time::Instant;

use serde_json::json;

use crate::bundle::Workspace;
use crate::util::{utc_timestamp, XResult};

use harness::{build_harness, build_stream, toolkit};
use report::{markdown_table, outcome_json, run_cases};

/// Generators whose failures fail the command.
const PSEUDO: &[&str] = &["philox", "xorwow", "mrg32k3a"];
/// Quasi-random sequences: reported, never a failure.
const QUASI: &[&str] = &[
    "sobol32",
    "scrambled_sobol32",
    "sobol64",
    "scrambled_sobol64",
];
/// The states of the fill-layout cases run by default.
const FILL_STATES: u32 = 4096;

/// One SmallCrush run: a generator's stream with one state or in the fill layout.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Case {
    generator: String,
    states: u32,
}

impl Case {
    /// `philox`, or `philox@4096` for the fill layout.
    fn name(&self) -> String {
        if self.states == 1 {
            self.generator.clone()
        } else {
            format!("{}@{}", self.generator, self.states)
        }
    }

    /// True for the pseudo-random generators, whose failures count.
    fn pseudo(&self) -> bool {
        PSEUDO.contains(&self.generator.as_str())
    }

    /// Parses `GENERATOR` or `GENERATOR@STATES`.
    fn parse(text: &str) -> XResult<Self> {
        let (generator, states) = match text.split_once('@') {
            Some((g, n)) => (
                g,
                n.parse::<u32>()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| format!("{text:?}: STATES must be a positive number"))?,
            ),
            None => (text, 1),
        };
        if !PSEUDO.contains(&generator) && !QUASI.contains(&generator) {
            return Err(format!(
                "unknown generator {generator:?}; generators: {}, {}",
                PSEUDO.join(", "),
                QUASI.join(", ")
            )
            .into());
        }
        Ok(Self {
            generator: generator.to_owned(),
            states,
        })
    }
}

/// The command line.
#[derive(Debug, PartialEq, Eq)]
struct Args {
    seed: u64,
    jobs: usize,
    refetch: bool,
    cases: Vec<Case>,
}

fn default_cases() -> Vec<Case> {
    let one = PSEUDO.iter().chain(QUASI).map(|g| Case {
        generator: (*g).to_owned(),
        states: 1,
    });
    let fill = PSEUDO.iter().map(|g| Case {
        generator: (*g).to_owned(),
        states: FILL_STATES,
    });
    one.chain(fill).collect()
}

fn parse_args(args: &[String]) -> XResult<Args> {
    let mut out = Args {
        seed: 1234,
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        refetch: false,
        cases: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seed" => {
                out.seed = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--seed needs a number")?;
            }
            "--jobs" => {
                out.jobs = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&n| n > 0)
                    .ok_or("--jobs needs a positive number")?;
            }
            "--refetch" => out.refetch = true,
            flag if flag.starts_with('-') => {
                return Err(format!(
                    "unknown flag {flag:?}; usage: testu01 [--seed N] [--jobs N] [--refetch] \
                     [GENERATOR[@STATES]...]"
                )
                .into())
            }
            case => out.cases.push(Case::parse(case)?),
        }
    }
    if out.cases.is_empty() {
        out.cases = default_cases();
    }
    Ok(out)
}

/// Entry point.
pub fn main(args: &[String]) -> XResult<()> {
    let args = parse_args(args)?;
    let started = Instant::now();
    let ws = Workspace::load()?;
    let dir = ws.target_dir.join("testu01");
    fs::create_dir_all(dir.join("logs"))?;

    let toolkit = toolkit(&dir, args.refetch)?;
    eprintln!("testu01: TestU01 from {}", toolkit.source.describe());
    let harness = build_harness(&ws.root, &dir, &toolkit)?;
    let stream = build_stream(&ws)?;

    let outcomes = run_cases(&args, &stream, &harness, &dir)?;
    let seconds = started.elapsed().as_secs_f64();

    let table = markdown_table(&outcomes);
    println!("\n{table}");
    let date = utc_timestamp();
    let md = format!(
        "# TestU01 SmallCrush on rucuda-rand's CPU reference streams\n\n\
         {date}, seed {}, {seconds:.0} s in all; TestU01 from {}.\n\
         A statistic fails outside [{}, {}].\n\n{table}",
        args.seed,
        toolkit.source.describe(),
        outcomes.first().map_or(0.001, |o| o.battery.suspectp),
        1.0 - outcomes.first().map_or(0.001, |o| o.battery.suspectp),
    );
    fs::write(dir.join("smallcrush.md"), md)?;
    let report = json!({
        "date": date,
        "seed": args.seed,
        "seconds": seconds,
        "testu01": toolkit.source.to_json(),
        "cases": outcomes.iter().map(outcome_json).collect::<Vec<_>>(),
    });
    fs::write(
        dir.join("smallcrush.json"),
        serde_json::to_string_pretty(&report)? + "\n",
    )?;
    eprintln!(
        "testu01: {seconds:.0} s; wrote {} and smallcrush.md",
        dir.join("smallcrush.json").display()
    );

    let failed: Vec<String> = outcomes
        .iter()
        .filter(|o| o.case.pseudo() && o.battery.failures().next().is_some())
        .map(|o| o.case.name())
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "pseudo-random generators failed SmallCrush statistics: {} (reports in {})",
            failed.join(", "),
            dir.join("logs").display()
        )
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::strings as s;

    #[test]
    fn arguments() {
        let a = parse_args(&[]).unwrap();
        assert_eq!(a.seed, 1234);
        assert!(!a.refetch);
        let names: Vec<String> = a.cases.iter().map(Case::name).collect();
        assert_eq!(names.len(), 10);
        assert_eq!(names[0], "philox");
        assert_eq!(names[9], "mrg32k3a@4096");

        let a = parse_args(&s(&[
            "--seed",
            "7",
            "--jobs",
            "1",
            "--refetch",
            "xorwow@16",
        ]))
        .unwrap();
        assert_eq!((a.seed, a.jobs, a.refetch), (7, 1, true));
        assert_eq!(
            a.cases,
            vec![Case {
                generator: "xorwow".into(),
                states: 16
            }]
        );
        assert!(Case::parse("sobol64").is_ok_and(|c| !c.pseudo()));
        assert!(parse_args(&s(&["mt19937"])).is_err());
        assert!(parse_args(&s(&["philox@0"])).is_err());
        assert!(parse_args(&s(&["--jobs", "0"])).is_err());
        assert!(parse_args(&s(&["--quick"])).is_err());
    }
}
