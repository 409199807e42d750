//! The disk cache survives writers killed with SIGKILL: a child process compiles new
//! sources in a loop (each compile stores an entry) and is killed at a random moment,
//! twenty times over one cache folder; after each kill a fresh process compiles every
//! source the killed one had reached, and must get a hit or a clean rebuild, never an
//! error or a damaged entry. No GPU: NVRTC compiles (CI installs NVIDIA's wheel).
//!
//! Entries are written to a temporary file and renamed, so a kill leaves either the
//! whole entry or none, plus possibly a temporary file that later sweeps remove. The
//! kill lands anywhere (loading NVRTC, compiling, writing, renaming, evicting); the
//! write itself is a short window, so the last test also builds, by hand, the worst
//! state a kill mid-write can leave and checks the next process copes.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::temp_dir;
use rucuda_jit::cache::DiskCache;
use rucuda_jit::{compile, Arch, CacheStatus, CompileOptions};

const CHILD_ENV: &str = "RUCUDA_JIT_KILL_CHILD";
const CACHE_ENV: &str = "RUCUDA_JIT_KILL_CACHE";
const FROM_ENV: &str = "RUCUDA_JIT_KILL_FROM";
const COUNT_ENV: &str = "RUCUDA_JIT_KILL_COUNT";
/// Kills per run; `RUCUDA_JIT_KILL_ITERATIONS` overrides.
const ITERATIONS: u32 = 20;

fn source(i: u32) -> String {
    format!(
        "__global__ void kill{i}(float *x, int n) {{\n  int t = blockIdx.x * blockDim.x + threadIdx.x;\n  \
         if (t < n) x[t] = x[t] * {i}.0f - 3.0f;\n}}\n"
    )
}

fn options(cache: &Path) -> CompileOptions {
    CompileOptions::new()
        .arch(Arch::SM_90)
        .cache_dir(Some(cache.to_path_buf()))
}

/// Child processes only: compiles sources FROM, FROM+1, ... (COUNT of them, or until
/// killed), printing `DONE i status` after each.
#[test]
fn kill_child_worker() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    // The library logs its cache warnings; the parent reads them off stderr.
    rucuda_testkit::log_to_stderr();
    let cache = std::path::PathBuf::from(std::env::var_os(CACHE_ENV).expect("cache"));
    let from: u32 = std::env::var(FROM_ENV).unwrap().parse().unwrap();
    let count: u32 = std::env::var(COUNT_ENV).unwrap().parse().unwrap();
    for i in from..from + count {
        let c = compile(&source(i), &options(&cache)).expect("compile");
        let status = match c.cache {
            CacheStatus::Hit(_) => "hit",
            CacheStatus::Stored(_) => "stored",
            CacheStatus::NotStored => "notstored",
            CacheStatus::Off => "off",
        };
        println!("DONE {i} {status}");
    }
}

fn child(cache: &Path, from: u32, count: u32) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        "kill_child_worker",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD_ENV, "1")
    .env(CACHE_ENV, cache)
    .env(FROM_ENV, from.to_string())
    .env(COUNT_ENV, count.to_string())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c
}

fn done_lines(stdout: &[u8]) -> Vec<(u32, String)> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| l.find("DONE ").map(|at| &l[at + 5..]))
        .filter_map(|l| {
            let mut f = l.split(' ');
            Some((f.next()?.parse().ok()?, f.next()?.to_string()))
        })
        .collect()
}

/// A fresh process compiles `from..from + count`: every one a hit or a clean rebuild,
/// nothing reported corrupt or unwritable. Returns the statuses.
fn check_fresh_process(cache: &Path, from: u32, count: u32) -> Vec<String> {
    let out = child(cache, from, count).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the process after a kill failed: {}\n{}\n{stderr}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        !stderr.contains("corrupt"),
        "a damaged entry was served or found:\n{stderr}"
    );
    assert!(!stderr.contains("cannot be written"), "{stderr}");
    let done = done_lines(&out.stdout);
    assert_eq!(done.len(), count as usize, "{done:?}");
    for (i, status) in &done {
        assert!(
            status == "hit" || status == "stored",
            "source {i}: {status}"
        );
    }
    done.into_iter().map(|(_, s)| s).collect()
}

/// Random bits, fresh per run (`RUCUDA_TEST_SEED` replays), from the testkit.
fn rng() -> impl FnMut() -> u64 {
    let mut rng = rucuda_testkit::TestRng::fresh();
    move || rng.next_u64()
}

#[test]
fn writers_killed_at_random_points_leave_a_cache_the_next_process_uses() {
    rucuda_testkit::nvrtc_or_skip!();
    let dir = temp_dir("sigkill");
    let iterations = std::env::var("RUCUDA_JIT_KILL_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ITERATIONS);
    let mut next = rng();
    // How long one compile takes here, so kills spread over whole compiles.
    let t0 = std::time::Instant::now();
    let warm = child(dir.path(), 1_000_000, 2).output().unwrap();
    assert!(
        warm.status.success(),
        "{}",
        String::from_utf8_lossy(&warm.stderr)
    );
    let per_run_ms = (t0.elapsed().as_millis() as u64).max(50);
    let (mut killed_mid_run, mut rebuilt) = (0, 0);
    for iter in 0..iterations {
        let from = iter * 1000;
        let mut victim = child(dir.path(), from, 50).spawn().unwrap();
        // Anywhere from process start to several compiles in.
        let delay = next() % (2 * per_run_ms);
        std::thread::sleep(Duration::from_millis(delay));
        let _ = victim.kill(); // SIGKILL
        let out = victim.wait_with_output().unwrap();
        let reached = done_lines(&out.stdout).len() as u32;
        if !out.status.success() {
            killed_mid_run += 1;
        }
        // The victim finished `reached` compiles and may have been writing the next one.
        let statuses = check_fresh_process(dir.path(), from, reached + 2);
        for (k, s) in statuses.iter().enumerate() {
            if (k as u32) < reached {
                assert_eq!(
                    s,
                    "hit",
                    "iteration {iter}: source {} was stored",
                    from + k as u32
                );
            } else if k as u32 == reached && s == "stored" {
                // The compile the victim was in when killed, done again cleanly.
                rebuilt += 1;
            }
        }
    }
    println!(
        "{iterations} kills ({killed_mid_run} mid-run), {rebuilt} in-flight compiles rebuilt \
         by the next process"
    );
    // Only whole entries and, at most, temporary files of killed writers are left.
    let cache = DiskCache::new(dir.path(), u64::MAX);
    let stats = cache.stats().unwrap();
    let mut temps = 0;
    for e in std::fs::read_dir(dir.path()).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(".tmp-") {
            temps += 1;
        } else {
            assert!(name.ends_with(".entry"), "unexpected file {name}");
        }
    }
    println!(
        "{} entries, {temps} temporary files of killed writers",
        stats.entries
    );
    // Clearing removes them all.
    cache.clear().unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn the_state_a_kill_mid_write_leaves_is_harmless() {
    rucuda_testkit::nvrtc_or_skip!();
    let dir = temp_dir("midwrite");
    // A whole entry for source 1, then what a writer of source 2 killed mid-write
    // leaves: a temporary file with half an entry, never renamed.
    let first = compile(&source(1), &options(dir.path())).unwrap();
    let whole = std::fs::read(first.cache.path().expect("stored")).unwrap();
    let temp = dir
        .path()
        .join(format!(".tmp-{}-{}-0", "0".repeat(64), std::process::id()));
    std::fs::write(&temp, &whole[..whole.len() / 2]).unwrap();
    let statuses = check_fresh_process(dir.path(), 1, 2);
    assert_eq!(statuses, ["hit", "stored"]);
    // A fresh temporary file is left alone (its writer may still be alive).
    assert!(temp.exists());
    assert_eq!(
        DiskCache::new(dir.path(), u64::MAX)
            .stats()
            .unwrap()
            .entries,
        2
    );
}
