//! The disk cache under real processes: eight children compiling the same and different
//! sources at once, a truncated entry, a flipped byte, and a folder that cannot be
//! created. Each child is this test binary, run again with `--exact child_worker`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::temp_dir;
use rucuda_jit::cache::DiskCache;
use rucuda_jit::{compile, Arch, CacheStatus, CompileOptions};

const CHILD_ENV: &str = "RUCUDA_JIT_TEST_CHILD";
const SOURCES_ENV: &str = "RUCUDA_JIT_TEST_SOURCES";
const CACHE_ENV: &str = "RUCUDA_JIT_TEST_CACHE";

/// Source number `i`: a different kernel (and so a different key) for each `i`.
fn source(i: u32) -> String {
    format!(
        "__global__ void k{i}(float *x, int n) {{\n  int t = blockIdx.x * blockDim.x + threadIdx.x;\n  \
         if (t < n) x[t] = x[t] * {i}.0f + 1.0f;\n}}\n"
    )
}

fn options(cache: &Path) -> CompileOptions {
    CompileOptions::new()
        .arch(Arch::SM_90)
        .cache_dir(Some(cache.to_path_buf()))
}

/// Fingerprint of an image, to compare what processes got.
fn fingerprint(bytes: &[u8]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    format!("{:016x}-{}", h.finish(), bytes.len())
}

/// Runs in the child processes only: compiles each source number in `SOURCES_ENV`
/// and prints one `RESULT` line per compile.
#[test]
fn child_worker() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    // The library logs its cache warnings; the parent reads them off stderr.
    rucuda_testkit::log_to_stderr();
    let cache = PathBuf::from(std::env::var_os(CACHE_ENV).expect("cache dir"));
    let sources = std::env::var(SOURCES_ENV).expect("sources");
    for i in sources
        .split(',')
        .map(|s| s.parse::<u32>().expect("a number"))
    {
        let c = compile(&source(i), &options(&cache)).expect("compile");
        let status = match &c.cache {
            CacheStatus::Hit(_) => "hit",
            CacheStatus::Stored(_) => "stored",
            CacheStatus::NotStored => "notstored",
            CacheStatus::Off => "off",
        };
        println!("RESULT {i} {status} {}", fingerprint(&c.image));
    }
}

fn spawn(cache: &Path, sources: &str) -> std::process::Child {
    Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", "child_worker", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .env(CACHE_ENV, cache)
        .env(SOURCES_ENV, sources)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn the test binary")
}

struct ChildResult {
    source: u32,
    status: String,
    fingerprint: String,
}

fn results(out: &Output) -> Vec<ChildResult> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        // libtest may print `test child_worker ... ` before the first line.
        .filter_map(|l| l.find("RESULT ").map(|at| &l[at + "RESULT ".len()..]))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            ChildResult {
                source: f[0].parse().unwrap(),
                status: f[1].to_string(),
                fingerprint: f[2].to_string(),
            }
        })
        .collect()
}

fn run_child(cache: &Path, sources: &str) -> (Vec<ChildResult>, String) {
    let out = spawn(cache, sources).wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (results(&out), stderr)
}

#[test]
fn eight_processes_share_one_cache() {
    rucuda_testkit::nvrtc_or_skip!();
    let dir = temp_dir("procs");
    // Every child compiles the shared source 0 and its own source (1..=8), in an order
    // that differs between children, all at once.
    let children: Vec<_> = (1..=8u32)
        .map(|i| {
            let list = if i % 2 == 0 {
                format!("0,{i}")
            } else {
                format!("{i},0")
            };
            spawn(dir.path(), &list)
        })
        .collect();
    let outputs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let mut shared = Vec::new();
    for out in &outputs {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("corrupt"),
            "a child saw a damaged entry:\n{stderr}"
        );
        assert!(!stderr.contains("cannot be written"), "{stderr}");
        let r = results(out);
        assert_eq!(r.len(), 2);
        for x in r {
            assert!(x.status == "stored" || x.status == "hit", "{}", x.status);
            if x.source == 0 {
                shared.push(x.fingerprint);
            }
        }
    }
    assert_eq!(shared.len(), 8);
    assert!(
        shared.windows(2).all(|w| w[0] == w[1]),
        "every process got the same image"
    );
    // One entry per distinct source, nothing half-written left behind.
    let cache = DiskCache::new(dir.path(), u64::MAX);
    assert_eq!(cache.stats().unwrap().entries, 9);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".entry"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // Every entry reads back whole in this process: all hits, same images.
    for i in 0..=8 {
        let c = compile(&source(i), &options(dir.path())).unwrap();
        assert!(c.cache.is_hit(), "source {i}: {:?}", c.cache);
        if i == 0 {
            assert_eq!(fingerprint(&c.image), shared[0]);
        }
    }
}

/// Damages the entry of source `i` with `damage`, then checks that a new process
/// detects it, says so once, rebuilds it, and that the next process hits.
fn damaged_entry_is_rebuilt(name: &str, damage: impl Fn(&Path)) {
    let dir = temp_dir(name);
    let i = 20;
    let first = compile(&source(i), &options(dir.path())).unwrap();
    let path = first.cache.path().expect("stored").to_path_buf();
    damage(&path);
    let (r, stderr) = run_child(dir.path(), &i.to_string());
    assert_eq!(r[0].status, "stored", "rebuilt, not served");
    assert_eq!(r[0].fingerprint, fingerprint(&first.image));
    assert_eq!(
        stderr.matches("is corrupt").count(),
        1,
        "logged once:\n{stderr}"
    );
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    let (r, stderr) = run_child(dir.path(), &i.to_string());
    assert_eq!(r[0].status, "hit");
    assert!(!stderr.contains("corrupt"), "{stderr}");
}

#[test]
fn truncated_entry_is_detected_removed_and_rebuilt() {
    rucuda_testkit::nvrtc_or_skip!();
    damaged_entry_is_rebuilt("truncated", |p| {
        let bytes = std::fs::read(p).unwrap();
        std::fs::write(p, &bytes[..bytes.len() * 2 / 3]).unwrap();
    });
}

#[test]
fn flipped_byte_is_detected_removed_and_rebuilt() {
    rucuda_testkit::nvrtc_or_skip!();
    damaged_entry_is_rebuilt("flipped", |p| {
        let mut bytes = std::fs::read(p).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x40;
        std::fs::write(p, &bytes).unwrap();
    });
}

#[test]
fn empty_entry_is_detected_removed_and_rebuilt() {
    rucuda_testkit::nvrtc_or_skip!();
    damaged_entry_is_rebuilt("empty", |p| std::fs::write(p, b"").unwrap());
}

#[test]
fn uncreatable_cache_dir_warns_once_and_compiles() {
    rucuda_testkit::nvrtc_or_skip!();
    let dir = temp_dir("unwritable");
    // A regular file where a folder should be: creating the cache folder fails even
    // for root, which ignores permission bits.
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, "not a folder").unwrap();
    let cache = blocker.join("cache");
    let (r, stderr) = run_child(&cache, "30,31,30");
    assert_eq!(r.len(), 3);
    assert!(
        r.iter().all(|x| x.status == "notstored"),
        "{:?}",
        r.iter().map(|x| &x.status).collect::<Vec<_>>()
    );
    assert_eq!(r[0].fingerprint, r[2].fingerprint);
    assert_eq!(
        stderr.matches("cannot be written").count(),
        1,
        "warned once:\n{stderr}"
    );
}

#[test]
fn read_only_cache_dir_serves_hits_without_writing() {
    rucuda_testkit::nvrtc_or_skip!();
    // Root ignores permission bits, so only run the permission part as another user.
    let is_root = std::env::var("USER").is_ok_and(|u| u == "root")
        || std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
        });
    if is_root {
        eprintln!(
            "running as root: permission bits do not apply; covered by the uncreatable-folder test"
        );
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("readonly");
    let first = compile(&source(40), &options(dir.path())).unwrap();
    assert!(first.cache.path().is_some());
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let (r, stderr) = run_child(dir.path(), "40,41");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(r[0].status, "hit");
    assert_eq!(r[1].status, "notstored");
    assert_eq!(stderr.matches("cannot be written").count(), 1, "{stderr}");
}
