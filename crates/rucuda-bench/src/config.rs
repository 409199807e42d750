//! What to run and how long: flags, with environment variables as defaults so that
//! `run.sh bench` can hand the same settings to the peers.

use std::path::PathBuf;

use crate::harness::Sampling;

/// Usage text.
pub const USAGE: &str = "\
usage: rucuda-bench [--quick] [--copy-mib N] [--cases PATTERNS] [--device N] [--out DIR]
                    [--peer-results FILE]... [--list]
  --quick            fewer repetitions and 64 MiB copies     (env RUCUDA_BENCH_QUICK=1)
  --copy-mib N       size of the copy cases in MiB (1024)    (env RUCUDA_BENCH_COPY_MIB)
  --cases PATTERNS   comma-separated substrings of case names (env RUCUDA_BENCH_CASES)
  --device N         device ordinal (0)                      (env RUCUDA_BENCH_DEVICE)
  --out DIR          where bench.jsonl and bench.md go       (env OUT, else .)
  --peer-results F   JSON lines from a peer (cupy_bench.py, nvidia_bench) to merge
  --list             print the cases and exit
environment: RUCUDA_BENCH_SCAN_SWEEP=1 adds the scan tuning sweep (scan_tune_*)";

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
    /// Only print the usage.
    pub help: bool,
}

impl Config {
    /// Reads the environment, then the flags (which win).
    pub fn parse(
        args: impl IntoIterator<Item = String>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, String> {
        let quick = env("RUCUDA_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0");
        let mut config = Config {
            quick,
            copy_bytes: 0,
            cases: env("RUCUDA_BENCH_CASES")
                .map(|p| split_patterns(&p))
                .unwrap_or_default(),
            device: 0,
            out_dir: env("OUT")
                .filter(|o| !o.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| ".".into()),
            peer_results: Vec::new(),
            list: false,
            help: false,
        };
        let mut copy_mib = env("RUCUDA_BENCH_COPY_MIB")
            .map(|v| parse_number("RUCUDA_BENCH_COPY_MIB", &v))
            .transpose()?;
        if let Some(device) = env("RUCUDA_BENCH_DEVICE") {
            config.device = parse_number("RUCUDA_BENCH_DEVICE", &device)? as i32;
        }
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let mut value = |flag: &str| args.next().ok_or_else(|| format!("{flag} needs a value"));
            match arg.as_str() {
                "--quick" => config.quick = true,
                "--copy-mib" => copy_mib = Some(parse_number("--copy-mib", &value("--copy-mib")?)?),
                "--cases" => config.cases = split_patterns(&value("--cases")?),
                "--device" => config.device = parse_number("--device", &value("--device")?)? as i32,
                "--out" => config.out_dir = value("--out")?.into(),
                "--peer-results" => config.peer_results.push(value("--peer-results")?.into()),
                "--list" => config.list = true,
                "-h" | "--help" => config.help = true,
                other => return Err(format!("unknown argument {other}")),
            }
        }
        let mib = copy_mib.unwrap_or(if config.quick { 64 } else { 1024 });
        if mib == 0 {
            return Err("the copy size must be at least 1 MiB".into());
        }
        config.copy_bytes = usize::try_from(mib).map_err(|_| "copy size too large")? << 20;
        Ok(config)
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

fn split_patterns(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

fn parse_number(what: &str, text: &str) -> Result<u64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("{what}: not a number: {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str], env: &[(&str, &str)]) -> Result<Config, String> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::parse(args.iter().map(|a| a.to_string()), |key| {
            env.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn defaults_env_and_flags() {
        let c = parse(&[], &[]).unwrap();
        assert_eq!((c.quick, c.copy_bytes, c.device), (false, 1 << 30, 0));
        assert!(c.selects("anything"));
        let c = parse(
            &[],
            &[
                ("RUCUDA_BENCH_QUICK", "1"),
                ("OUT", "/o"),
                ("RUCUDA_BENCH_CASES", "launch, d2d"),
            ],
        )
        .unwrap();
        assert_eq!((c.quick, c.copy_bytes), (true, 64 << 20));
        assert_eq!(c.out_dir, PathBuf::from("/o"));
        assert!(
            c.selects("launch_empty_us")
                && c.selects("d2d_copy_GBps")
                && !c.selects("alloc_free_us")
        );
        let c = parse(
            &[
                "--copy-mib",
                "8",
                "--peer-results",
                "a.jsonl",
                "--device",
                "1",
            ],
            &[("RUCUDA_BENCH_COPY_MIB", "2")],
        )
        .unwrap();
        assert_eq!((c.copy_bytes, c.device), (8 << 20, 1));
        assert_eq!(c.peer_results, [PathBuf::from("a.jsonl")]);
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert!(parse(&["--bogus"], &[]).is_err());
        assert!(parse(&["--copy-mib"], &[]).is_err());
        assert!(parse(&["--copy-mib", "x"], &[]).is_err());
        assert!(parse(&["--copy-mib", "0"], &[]).is_err());
    }
}
