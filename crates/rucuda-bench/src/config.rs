//! What to run and how long: flags, with environment variables as defaults so that
//! `run.sh bench` can hand the same settings to the peers.

use std::path::PathBuf;

use crate::harness::Sampling;

/// The command line, parsed by clap; an unset flag falls back to its environment
/// variable, so `run.sh bench` can hand the same settings to the peers.
#[derive(Debug, clap::Parser)]
#[command(
    name = "rucuda-bench",
    about = "rucuda's benchmarks against the raw driver, CuPy and NVIDIA's own code",
    after_help = "environment: RUCUDA_BENCH_SCAN_SWEEP=1 adds the scan tuning sweep (scan_tune_*)"
)]
struct Cli {
    /// Fewer repetitions and 64 MiB copies (the variable: anything but empty, 0, false,
    /// no or off).
    #[arg(long, env = "RUCUDA_BENCH_QUICK", action = clap::ArgAction::SetTrue,
          value_parser = clap::builder::FalseyValueParser::new())]
    quick: bool,
    /// Size of the copy cases in MiB [default: 1024, 64 with --quick].
    #[arg(long, value_name = "N", env = "RUCUDA_BENCH_COPY_MIB",
          value_parser = clap::value_parser!(u64).range(1..))]
    copy_mib: Option<u64>,
    /// Comma-separated substrings of case names (all cases when empty).
    #[arg(
        long,
        value_name = "PATTERNS",
        env = "RUCUDA_BENCH_CASES",
        value_delimiter = ','
    )]
    cases: Vec<String>,
    /// Device ordinal.
    #[arg(long, value_name = "N", env = "RUCUDA_BENCH_DEVICE", default_value_t = 0,
          value_parser = clap::value_parser!(i32).range(0..))]
    device: i32,
    /// Where bench.jsonl and bench.md go (an empty OUT means the default).
    // A String: clap's PathBuf parser refuses the empty value of an `OUT=` environment.
    #[arg(long = "out", value_name = "DIR", env = "OUT", default_value = ".")]
    out_dir: String,
    /// JSON lines from a peer (cupy_bench.py, nvidia_bench) to merge; repeatable.
    #[arg(long = "peer-results", value_name = "FILE")]
    peer_results: Vec<PathBuf>,
    /// Print the cases and exit.
    #[arg(long)]
    list: bool,
}

/// The bench's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Fewer repetitions, smaller copies.
    pub quick: bool,
    /// Bytes moved by each copy case.
    pub copy_bytes: usize,
    /// Substrings; a case runs when its name contains one (all run when empty).
    pub cases: Vec<String>,
    /// Device ordinal.
    pub device: i32,
    /// Output folder.
    pub out_dir: PathBuf,
    /// Peer result files to merge.
    pub peer_results: Vec<PathBuf>,
    /// Only list the cases.
    pub list: bool,
}

impl Config {
    /// Reads the flags (`args` starts with the program name), each unset one from its
    /// environment variable. `--help` and bad arguments come back as clap's error, which
    /// prints the usage and exits (0 for help, 2 for a bad argument) through `exit()`.
    pub fn parse<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let cli = <Cli as clap::Parser>::try_parse_from(args)?;
        let mib = cli.copy_mib.unwrap_or(if cli.quick { 64 } else { 1024 });
        let copy_bytes = usize::try_from(mib)
            .ok()
            .and_then(|m| m.checked_mul(1 << 20))
            .ok_or_else(|| {
                clap::Error::raw(
                    clap::error::ErrorKind::ValueValidation,
                    format!("--copy-mib {mib}: too large\n"),
                )
            })?;
        Ok(Config {
            quick: cli.quick,
            copy_bytes,
            cases: cli
                .cases
                .iter()
                .map(|p| p.trim())
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect(),
            device: cli.device,
            out_dir: PathBuf::from(if cli.out_dir.is_empty() {
                "."
            } else {
                &cli.out_dir
            }),
            peer_results: cli.peer_results,
            list: cli.list,
        })
    }

    /// True when the case is selected by `--cases`.
    pub fn selects(&self, case: &str) -> bool {
        self.cases.is_empty() || self.cases.iter().any(|p| case.contains(p.as_str()))
    }

    /// Launches timed together in one host-time sample.
    pub fn launches_per_batch(&self) -> usize {
        if self.quick {
            1_000
        } else {
            10_000
        }
    }

    /// Allocate-and-free pairs timed together in one sample.
    pub fn allocs_per_batch(&self) -> usize {
        if self.quick {
            200
        } else {
            1_000
        }
    }

    /// Batches for the overhead cases (launch, allocation).
    pub fn overhead_sampling(&self) -> Sampling {
        if self.quick {
            Sampling { warmup: 1, reps: 5 }
        } else {
            Sampling {
                warmup: 3,
                reps: 25,
            }
        }
    }

    /// Host-device transfers.
    pub fn transfer_sampling(&self) -> Sampling {
        if self.quick {
            Sampling { warmup: 1, reps: 3 }
        } else {
            // PCIe bandwidth dips now and then by ~4% (seen on the H100 for raw and
            // rucuda alike): enough samples that the median ignores a dip.
            Sampling {
                warmup: 3,
                reps: 31,
            }
        }
    }

    /// Device-to-device copies.
    pub fn device_copy_sampling(&self) -> Sampling {
        if self.quick {
            Sampling { warmup: 1, reps: 5 }
        } else {
            Sampling {
                warmup: 3,
                reps: 40,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VARS: [&str; 5] = [
        "RUCUDA_BENCH_QUICK",
        "RUCUDA_BENCH_COPY_MIB",
        "RUCUDA_BENCH_CASES",
        "RUCUDA_BENCH_DEVICE",
        "OUT",
    ];

    fn parse(args: &[&str]) -> Result<Config, clap::Error> {
        Config::parse(std::iter::once("rucuda-bench").chain(args.iter().copied()))
    }

    // The one test that reads or sets the environment: tests run in parallel, and the
    // others only check what their flags set (flags win over the environment).
    #[test]
    fn defaults_then_environment_then_flags() {
        for v in VARS {
            std::env::remove_var(v);
        }
        let c = parse(&[]).unwrap();
        assert_eq!((c.quick, c.copy_bytes, c.device), (false, 1 << 30, 0));
        assert_eq!(c.out_dir, PathBuf::from("."));
        assert!(c.selects("anything"));

        std::env::set_var("RUCUDA_BENCH_QUICK", "1");
        std::env::set_var("OUT", "/o");
        std::env::set_var("RUCUDA_BENCH_CASES", "launch, d2d");
        let c = parse(&[]).unwrap();
        assert_eq!((c.quick, c.copy_bytes), (true, 64 << 20));
        assert_eq!(c.out_dir, PathBuf::from("/o"));
        assert!(
            c.selects("launch_empty_us")
                && c.selects("d2d_copy_GBps")
                && !c.selects("alloc_free_us")
        );

        std::env::set_var("OUT", "");
        std::env::set_var("RUCUDA_BENCH_QUICK", "0");
        std::env::set_var("RUCUDA_BENCH_COPY_MIB", "2");
        let c = parse(&["--copy-mib", "8"]).unwrap();
        assert_eq!((c.quick, c.copy_bytes), (false, 8 << 20));
        assert_eq!(c.out_dir, PathBuf::from("."));
        for v in VARS {
            std::env::remove_var(v);
        }
    }

    #[test]
    fn flags() {
        let c = parse(&[
            "--quick",
            "--copy-mib",
            "8",
            "--peer-results",
            "a.jsonl",
            "--peer-results",
            "b.jsonl",
            "--device",
            "1",
            "--cases",
            "scan,,reduce",
            "--out",
            "/tmp/x",
            "--list",
        ])
        .unwrap();
        assert_eq!((c.quick, c.copy_bytes, c.device), (true, 8 << 20, 1));
        assert_eq!(
            c.peer_results,
            [PathBuf::from("a.jsonl"), PathBuf::from("b.jsonl")]
        );
        assert_eq!(c.cases, ["scan", "reduce"]);
        assert_eq!(c.out_dir, PathBuf::from("/tmp/x"));
        assert!(c.list);
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert!(parse(&["--bogus"]).is_err());
        assert!(parse(&["--copy-mib"]).is_err());
        assert!(parse(&["--copy-mib", "x"]).is_err());
        assert!(parse(&["--copy-mib", "0"]).is_err());
        assert!(parse(&["--device", "-1"]).is_err());
        let help = parse(&["--help"]).unwrap_err();
        assert_eq!(help.kind(), clap::error::ErrorKind::DisplayHelp);
        assert!(help.to_string().contains("RUCUDA_BENCH_COPY_MIB"));
    }
}
