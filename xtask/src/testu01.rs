//! `cargo xtask testu01 [--seed N] [--jobs N] [--refetch] [CASE...]`: TestU01's SmallCrush
//! on the CPU reference streams of `rucuda-rand` (`crates/rucuda-rand/testu01/`).
//!
//! 1. TestU01 comes from Debian's `non-free` packages `libtestu01-0-dev` and
//!    `libtestu01-0-dev-common` ([`SUITE`]; bookworm has none): `apt-get download` with a
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

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{json, Value};

use crate::bundle::{self, Workspace};
use crate::util::{run, utc_timestamp, XResult};

/// The Debian suite the packages come from (Debian 13, stable).
pub const SUITE: &str = "trixie";
/// The Debian mirror.
const MIRROR: &str = "http://deb.debian.org/debian";
/// The packages' archive area (TestU01's licence forbids commercial use).
const COMPONENT: &str = "non-free";
/// What is downloaded: the static archives and the headers.
const PACKAGES: &[&str] = &["libtestu01-0-dev", "libtestu01-0-dev-common"];
/// The key that signs the suite's `InRelease` (bookworm's keyring holds trixie's keys).
const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";

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
/// The statistics SmallCrush computes.
const SMALLCRUSH_STATISTICS: usize = 15;

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

/// One statistic of SmallCrush's report.
#[derive(Debug, Clone, PartialEq)]
struct Statistic {
    /// Its position in the battery, from 1.
    index: u32,
    /// TestU01's name for it (`MaxOft AD`, `RandomWalk1 H`, ...).
    name: String,
    /// The p-value.
    p: f64,
}

/// What the harness printed after TestU01's report.
#[derive(Debug, Clone, PartialEq)]
struct Battery {
    /// A statistic fails outside `[suspectp, 1 - suspectp]` (TestU01's `gofw_Suspectp`).
    suspectp: f64,
    statistics: Vec<Statistic>,
}

impl Battery {
    fn failures(&self) -> impl Iterator<Item = &Statistic> {
        self.statistics
            .iter()
            .filter(|s| !(self.suspectp..=1.0 - self.suspectp).contains(&s.p))
    }

    fn passed(&self) -> usize {
        self.statistics.len() - self.failures().count()
    }
}

/// Reads the `rucuda-smallcrush` lines of the harness's output.
fn parse_harness_output(text: &str) -> XResult<Battery> {
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
fn format_p(p: f64) -> String {
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
struct Outcome {
    case: Case,
    battery: Battery,
    seconds: f64,
    log: PathBuf,
}

/// Where TestU01 came from, for the report.
enum Source {
    /// Debian packages: suite, component, (name, version) of each.
    Debian {
        suite: String,
        packages: Vec<(String, String)>,
    },
    /// `TESTU01_CFLAGS`.
    Flags(String),
}

impl Source {
    fn describe(&self) -> String {
        match self {
            Source::Debian { suite, packages } => {
                let list: Vec<String> = packages.iter().map(|(n, v)| format!("{n} {v}")).collect();
                format!("Debian {suite} {COMPONENT}: {}", list.join(", "))
            }
            Source::Flags(flags) => format!("TESTU01_CFLAGS={flags}"),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Source::Debian { suite, packages } => json!({
                "debian_suite": suite,
                "component": COMPONENT,
                "packages": packages.iter()
                    .map(|(n, v)| json!({"name": n, "version": v}))
                    .collect::<Vec<_>>(),
            }),
            Source::Flags(flags) => json!({ "cflags": flags }),
        }
    }
}

/// Compiler flags for the harness: include folders, then the libraries.
struct Toolkit {
    source: Source,
    flags: Vec<String>,
    /// Whether `glibc_compat.c` is linked (Debian's archives, not `TESTU01_CFLAGS`).
    compat: bool,
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

/// The harness's flags: from `TESTU01_CFLAGS`, or Debian's packages (fetched when missing).
fn toolkit(dir: &Path, refetch: bool) -> XResult<Toolkit> {
    if let Ok(flags) = std::env::var("TESTU01_CFLAGS") {
        return Ok(Toolkit {
            flags: flags.split_whitespace().map(str::to_owned).collect(),
            source: Source::Flags(flags),
            compat: false,
        });
    }
    let root = dir.join("root");
    let stamp = dir.join("packages.json");
    if refetch || !stamp.exists() || find_lib_dir(&root).is_none() {
        fetch(dir)?;
    }
    let recorded: Value = serde_json::from_str(&fs::read_to_string(&stamp)?)?;
    let packages = recorded["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["name"].as_str().unwrap_or("?").to_owned(),
                p["version"].as_str().unwrap_or("?").to_owned(),
            )
        })
        .collect();
    let suite = recorded["suite"].as_str().unwrap_or(SUITE).to_owned();
    let lib = find_lib_dir(&root).ok_or_else(|| {
        format!(
            "no libtestu01.a under {}: run with --refetch",
            root.join("usr/lib").display()
        )
    })?;
    let include = root.join("usr/include");
    let mut flags = vec![
        // smallcrush.c includes "bbattery.h" (upstream's flat layout); Debian's headers
        // include <testu01/...>, and gdefconf.h sits in the multiarch folder.
        format!("-I{}", include.join("testu01").display()),
        format!("-I{}", include.display()),
    ];
    if let Some(multiarch) = lib.file_name() {
        flags.push(format!("-I{}", include.join(multiarch).display()));
    }
    for archive in ["libtestu01.a", "libtestu01probdist.a", "libtestu01mylib.a"] {
        flags.push(lib.join(archive).display().to_string());
    }
    Ok(Toolkit {
        source: Source::Debian { suite, packages },
        flags,
        compat: true,
    })
}

/// The folder of `libtestu01.a` under an unpacked root (`usr/lib/<multiarch>`).
fn find_lib_dir(root: &Path) -> Option<PathBuf> {
    let lib = root.join("usr/lib");
    fs::read_dir(&lib)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|dir| dir.join("libtestu01.a").is_file())
}

/// Downloads Debian's TestU01 packages into `dir/debs` and unpacks them into `dir/root`,
/// then records what it got in `dir/packages.json`.
fn fetch(dir: &Path) -> XResult<()> {
    let mirror = std::env::var("TESTU01_MIRROR").unwrap_or_else(|_| MIRROR.to_owned());
    let suite = std::env::var("TESTU01_SUITE").unwrap_or_else(|_| SUITE.to_owned());
    for tool in ["apt-get", "dpkg-deb"] {
        if Command::new(tool).arg("--version").output().is_err() {
            return Err(format!(
                "{tool} was not found: `cargo xtask testu01` takes TestU01 from Debian's \
                 packages; elsewhere, install TestU01 and set TESTU01_CFLAGS to the flags that \
                 find it (e.g. \"-I/opt/tu/include -L/opt/tu/lib -ltestu01 -lprobdist -lmylib\")"
            )
            .into());
        }
    }
    if !Path::new(KEYRING).is_file() {
        return Err(format!(
            "{KEYRING} is missing (package debian-archive-keyring): it checks the download"
        )
        .into());
    }
    let apt = dir.join("apt");
    let debs = dir.join("debs");
    let root = dir.join("root");
    for d in [&apt, &debs, &root] {
        if d.exists() {
            fs::remove_dir_all(d)?;
        }
    }
    let _ = fs::remove_file(dir.join("packages.json"));
    for d in [
        apt.join("lists/partial"),
        apt.join("cache/archives/partial"),
        apt.join("empty"),
        debs.clone(),
        root.clone(),
    ] {
        fs::create_dir_all(d)?;
    }
    let sources = apt.join("sources.list");
    fs::write(
        &sources,
        format!("deb [signed-by={KEYRING}] {mirror} {suite} {COMPONENT}\n"),
    )?;
    // A private apt: its own lists, cache and sources, none of the system's preferences;
    // nothing is installed. Root's downloads stay root's (no _apt sandbox user).
    let empty = apt.join("empty");
    let options = [
        format!("-oDir::State::Lists={}", apt.join("lists").display()),
        format!("-oDir::Cache={}", apt.join("cache").display()),
        format!("-oDir::Etc::SourceList={}", sources.display()),
        format!("-oDir::Etc::SourceParts={}", empty.display()),
        format!("-oDir::Etc::Preferences={}", empty.join("none").display()),
        format!("-oDir::Etc::PreferencesParts={}", empty.display()),
        "-oAcquire::IndexTargets::deb::DEP-11::DefaultEnabled=false".to_owned(),
        "-oAPT::Sandbox::User=root".to_owned(),
        "-oAPT::Get::List-Cleanup=false".to_owned(),
        "-qq".to_owned(),
    ];
    eprintln!(
        "testu01: downloading {} from {mirror} {suite} {COMPONENT}",
        PACKAGES.join(", ")
    );
    let download_failed = |what: &str, e: Box<dyn std::error::Error>| {
        format!(
            "could not {what} ({e}): TestU01 comes from {mirror} {suite} {COMPONENT} \
             (network access needed once; TESTU01_MIRROR and TESTU01_SUITE choose another \
             source, TESTU01_CFLAGS a TestU01 of your own)"
        )
    };
    run(Command::new("apt-get")
        .args(&options)
        .args(["-oAPT::Update::Error-Mode=any", "update"]))
    .map_err(|e| download_failed("read the package lists", e))?;
    run(Command::new("apt-get")
        .args(&options)
        .arg("download")
        .args(PACKAGES)
        .current_dir(&debs))
    .map_err(|e| download_failed("download the packages", e))?;

    let mut packages = Vec::new();
    let mut files: Vec<PathBuf> = fs::read_dir(&debs)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "deb"))
        .collect();
    files.sort();
    for deb in &files {
        run(Command::new("dpkg-deb").arg("-x").arg(deb).arg(&root))?;
        let out = Command::new("dpkg-deb")
            .arg("-f")
            .arg(deb)
            .args(["Package", "Version"])
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim().to_owned())
                .unwrap_or_default()
        };
        packages.push(json!({
            "name": field("Package:"),
            "version": field("Version:"),
            "file": deb.file_name().map(|f| f.to_string_lossy().into_owned()),
        }));
    }
    if packages.len() != PACKAGES.len() {
        return Err(format!(
            "expected {} packages in {}, found {}",
            PACKAGES.len(),
            debs.display(),
            packages.len()
        )
        .into());
    }
    let record = json!({
        "mirror": mirror,
        "suite": suite,
        "component": COMPONENT,
        "date": utc_timestamp(),
        "packages": packages,
    });
    fs::write(
        dir.join("packages.json"),
        serde_json::to_string_pretty(&record)? + "\n",
    )?;
    Ok(())
}

/// Compiles `smallcrush.c` into `dir/smallcrush`.
fn build_harness(root: &Path, dir: &Path, toolkit: &Toolkit) -> XResult<PathBuf> {
    let sources = root.join("crates/rucuda-rand/testu01");
    let exe = dir.join("smallcrush");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let mut cmd = Command::new(&cc);
    cmd.args(["-O2", "-o"])
        .arg(&exe)
        .arg(sources.join("smallcrush.c"));
    if toolkit.compat {
        cmd.arg(sources.join("glibc_compat.c"));
    }
    cmd.args(&toolkit.flags).arg("-lm");
    run(&mut cmd).map_err(|e| {
        format!(
            "building the SmallCrush harness with {cc} failed ({e}); with Debian's archives, \
             undefined symbols from a newer C library belong in glibc_compat.c"
        )
    })?;
    Ok(exe)
}

/// Builds `rucuda-rand`'s `stream` example in release and returns its path.
fn build_stream(ws: &Workspace) -> XResult<PathBuf> {
    let built = bundle::build_executables(
        ws,
        bundle::cargo().args([
            "build",
            "--release",
            "-p",
            "rucuda-rand",
            "--example",
            "stream",
        ]),
    )?;
    built
        .into_iter()
        .find(|e| e.kind == "example" && e.target == "stream")
        .map(|e| e.path)
        .ok_or_else(|| "cargo built no `stream` example".into())
}

/// Runs the cases, `args.jobs` at a time, in the order given.
fn run_cases(args: &Args, stream: &Path, harness: &Path, dir: &Path) -> XResult<Vec<Outcome>> {
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
fn run_case(case: &Case, seed: u64, stream: &Path, harness: &Path, dir: &Path) -> XResult<Outcome> {
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
fn markdown_table(outcomes: &[Outcome]) -> String {
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

fn outcome_json(o: &Outcome) -> Value {
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

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

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

    #[test]
    fn the_harness_sources_are_in_place() {
        let dir = crate::util::project_root().join("crates/rucuda-rand/testu01");
        let harness = fs::read_to_string(dir.join("smallcrush.c")).unwrap();
        assert!(harness.contains("rucuda-smallcrush\\tpvalue\\t%d\\t%.17g\\t%s\\n"));
        assert!(dir.join("glibc_compat.c").is_file());
    }
}
