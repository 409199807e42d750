//! `cargo xtask fuzz [--seconds N] [--driver auto|libfuzzer|stable] [TARGET...]`: runs
//! each fuzz target of `fuzz/` for a fixed time (default 30 s) and prints the executions
//! per target and what was found.
//!
//! Drivers:
//! - `libfuzzer`: `cargo fuzz run` (coverage-guided libFuzzer with AddressSanitizer). It
//!   needs cargo-fuzz (`cargo install cargo-fuzz`) and a nightly toolchain (`cargo
//!   +nightly`); without nightly it tries the stable compiler with `RUSTC_BOOTSTRAP=1`
//!   and no sanitizer.
//! - `stable`: our own driver (`fuzz/src/bin/stable_fuzz.rs`): seeded AFL-style
//!   mutation of the seed corpus, no coverage feedback, any stable toolchain.
//! - `auto` (the default): `libfuzzer` when cargo-fuzz is installed, else `stable`.
//!
//! Inputs that crash land in `fuzz/artifacts/TARGET/`; the command then fails. Keep a
//! fixed one as a regression: copy it to `fuzz/regressions/TARGET/` (replayed by `cargo
//! test --manifest-path fuzz/Cargo.toml --no-default-features`) and add a unit test with
//! the input to the crate where the bug was.

use std::path::Path;
use std::process::Command;

use crate::util::{project_root, XResult};

/// The targets, as in `fuzz/src/targets.rs` (`ALL`).
const TARGETS: &[&str] = &[
    "arg_strings",
    "elementwise_spec",
    "operation_analysis",
    "cache_entry",
    "include_scan",
    "compile_options",
    "driver_options",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Driver {
    Auto,
    LibFuzzer,
    Stable,
}

#[derive(Debug, PartialEq, Eq)]
struct Args {
    seconds: u64,
    driver: Driver,
    targets: Vec<String>,
}

fn parse_args(args: &[String]) -> XResult<Args> {
    let mut out = Args {
        seconds: 30,
        driver: Driver::Auto,
        targets: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => {
                out.seconds = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&s| s > 0)
                    .ok_or("--seconds needs a positive number")?;
            }
            "--driver" => {
                out.driver = match it.next().map(String::as_str) {
                    Some("auto") => Driver::Auto,
                    Some("libfuzzer") => Driver::LibFuzzer,
                    Some("stable") => Driver::Stable,
                    other => {
                        return Err(format!("--driver auto|libfuzzer|stable, not {other:?}").into())
                    }
                };
            }
            t if TARGETS.contains(&t) => out.targets.push(t.to_string()),
            other => {
                return Err(format!(
                    "unknown argument {other:?}; targets: {}",
                    TARGETS.join(", ")
                )
                .into())
            }
        }
    }
    if out.targets.is_empty() {
        out.targets = TARGETS.iter().map(|t| t.to_string()).collect();
    }
    Ok(out)
}

/// `cargo` through rustup's proxy (so `+nightly` works), without the toolchain that
/// `cargo xtask` itself runs under.
fn rustup_cargo() -> Command {
    let mut c = Command::new("cargo");
    c.env_remove("RUSTUP_TOOLCHAIN").env_remove("RUSTC");
    c
}

fn works(cmd: &mut Command) -> bool {
    cmd.output().is_ok_and(|o| o.status.success())
}

/// Entry point.
pub fn main(args: &[String]) -> XResult<()> {
    let args = parse_args(args)?;
    let root = project_root();
    let have_fuzz = works(rustup_cargo().args(["fuzz", "--version"]));
    let have_nightly = works(rustup_cargo().args(["+nightly", "--version"]));
    let driver = match args.driver {
        Driver::Auto if have_fuzz => Driver::LibFuzzer,
        Driver::Auto => {
            eprintln!(
                "fuzz: cargo-fuzz is not installed (`cargo install cargo-fuzz`); using the \
                 stable mutation driver"
            );
            Driver::Stable
        }
        Driver::LibFuzzer if !have_fuzz => {
            return Err("cargo-fuzz is not installed: `cargo install cargo-fuzz`".into())
        }
        d => d,
    };
    match driver {
        Driver::LibFuzzer => libfuzzer(&root, &args, have_nightly),
        _ => stable(&root, &args),
    }
}

fn stable(root: &Path, args: &Args) -> XResult<()> {
    let status = rustup_cargo()
        .args(["run", "--release", "--manifest-path"])
        .arg(root.join("fuzz/Cargo.toml"))
        .args(["--no-default-features", "--bin", "stable-fuzz", "--"])
        .args(["--seconds", &args.seconds.to_string()])
        .args(&args.targets)
        .current_dir(root)
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err("the stable fuzz driver found crashes (see above and fuzz/artifacts/)".into())
    }
}

/// What libFuzzer said at the end of a run.
#[derive(Debug, Default, PartialEq, Eq)]
struct RunStats {
    executions: Option<u64>,
    artifacts: Vec<String>,
}

fn parse_libfuzzer_output(text: &str) -> RunStats {
    let mut s = RunStats::default();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("stat::number_of_executed_units:") {
            s.executions = v.trim().parse().ok();
        } else if let Some(rest) = line.strip_prefix("Done ") {
            if s.executions.is_none() {
                s.executions = rest.split_whitespace().next().and_then(|n| n.parse().ok());
            }
        }
        if let Some((_, path)) = line.split_once("Test unit written to ") {
            s.artifacts.push(path.trim().to_string());
        }
    }
    s
}

fn libfuzzer(root: &Path, args: &Args, nightly: bool) -> XResult<()> {
    if !nightly {
        eprintln!(
            "fuzz: no nightly toolchain; building with the stable compiler, RUSTC_BOOTSTRAP=1 \
             and no sanitizer (coverage guidance still works)"
        );
    }
    let mut rows: Vec<(String, String, String)> = Vec::new();
    let mut failed = false;
    for target in &args.targets {
        let corpus = root.join("fuzz/corpus").join(target);
        std::fs::create_dir_all(&corpus)?;
        let mut cmd = rustup_cargo();
        if nightly {
            cmd.arg("+nightly");
        } else {
            cmd.env("RUSTC_BOOTSTRAP", "1");
        }
        cmd.args(["fuzz", "run", "-O"]);
        if !nightly {
            cmd.args(["-s", "none"]);
        }
        cmd.arg(target).arg(&corpus);
        for extra in ["seeds", "regressions"] {
            let dir = root.join("fuzz").join(extra).join(target);
            if dir.is_dir() {
                cmd.arg(dir);
            }
        }
        cmd.arg("--").args([
            format!("-max_total_time={}", args.seconds),
            "-max_len=4096".into(),
            "-timeout=10".into(),
            "-rss_limit_mb=2048".into(),
            "-print_final_stats=1".into(),
        ]);
        cmd.current_dir(root);
        println!("fuzz: {target} for {} s (libFuzzer)", args.seconds);
        let out = cmd.output()?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let stats = parse_libfuzzer_output(&text);
        let execs = stats
            .executions
            .map_or_else(|| "?".to_string(), |n| n.to_string());
        let found = if out.status.success() {
            "nothing".to_string()
        } else {
            failed = true;
            let tail: Vec<&str> = text.lines().rev().take(40).collect();
            eprintln!("{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
            if stats.artifacts.is_empty() {
                format!("failed ({})", out.status)
            } else {
                format!("crash: {}", stats.artifacts.join(", "))
            }
        };
        println!("  {target}: {execs} executions, {found}");
        rows.push((target.clone(), execs, found));
    }
    println!("\n| target | executions | found |\n|---|---|---|");
    for (t, e, f) in &rows {
        println!("| {t} | {e} | {f} |");
    }
    if failed {
        Err("fuzzing found crashes (fuzz/artifacts/)".into())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::strings as s;

    #[test]
    fn arguments() {
        let a = parse_args(&s(&["--seconds", "5", "cache_entry"])).unwrap();
        assert_eq!(a.seconds, 5);
        assert_eq!(a.targets, ["cache_entry"]);
        assert_eq!(a.driver, Driver::Auto);
        let a = parse_args(&s(&["--driver", "stable"])).unwrap();
        assert_eq!(a.targets.len(), TARGETS.len());
        assert_eq!(a.driver, Driver::Stable);
        assert!(parse_args(&s(&["--seconds", "0"])).is_err());
        assert!(parse_args(&s(&["nope"])).is_err());
        assert!(parse_args(&s(&["--driver", "afl"])).is_err());
    }

    #[test]
    fn libfuzzer_stats() {
        let text = "#1234 DONE cov: 10\nDone 98765 runs in 31 second(s)\n\
                    stat::number_of_executed_units: 98766\n\
                    artifact_prefix='fuzz/artifacts/x/'; Test unit written to fuzz/artifacts/x/crash-ab\n";
        let s = parse_libfuzzer_output(text);
        assert_eq!(s.executions, Some(98766));
        assert_eq!(s.artifacts, ["fuzz/artifacts/x/crash-ab"]);
        assert_eq!(
            parse_libfuzzer_output("Done 7 runs in 1 second(s)").executions,
            Some(7)
        );
    }

    #[test]
    fn the_target_list_matches_the_fuzz_crate() {
        let src = std::fs::read_to_string(project_root().join("fuzz/src/targets.rs")).unwrap();
        for t in TARGETS {
            assert!(src.contains(&format!("(\"{t}\", {t})")), "{t}");
        }
        let n = src.matches("\", ").count();
        assert!(n >= TARGETS.len());
    }
}
