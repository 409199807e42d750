//! Shared by the GPU tests: setup (NVLink multicast off, NCCL present or skip), child
//! processes; `elements` (the element types with a CPU model of NCCL's arithmetic) and
//! `suite` (every collective of every element type against a CPU computation on random
//! data, for one rank driven per thread/process or for several ranks driven by one thread
//! in groups).
#![allow(dead_code, unused_imports)]

pub mod elements;
pub mod suite;

pub use suite::{
    device_buffers_one_rank, every_type_grouped, every_type_one_rank, suite_grouped, suite_one_rank,
};

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rucuda_driver::{Context, Device};
use rucuda_nccl::{Communicator, Nccl};

/// How long a rank waits for one collective before aborting it.
pub const WAIT: Duration = Duration::from_secs(120);

/// Prepares a GPU test: NVLink multicast off (the machines we run on must not use it;
/// children inherit it), and NCCL present — otherwise prints the skip marker and returns
/// `None`.
pub fn setup() -> Option<&'static Nccl> {
    std::env::set_var("NCCL_NVLS_ENABLE", "0");
    match Nccl::get() {
        Ok(nccl) => {
            println!("NCCL {} from {}", nccl.version(), nccl.opened_as());
            Some(nccl)
        }
        Err(e) => {
            rucuda_testkit::skip(format!("NCCL is not available: {e}"));
            None
        }
    }
}

/// The number of visible devices (0 without a driver).
pub fn device_count() -> usize {
    Device::count().unwrap_or(0)
}

/// The primary context of device `i`.
pub fn ctx(i: usize) -> Context {
    Device::get(i)
        .and_then(Device::primary_context)
        .expect("a CUDA device (this test is ignored unless the GPU bundle runs it)")
}

/// A seed for this run (printed by the testkit; `RUCUDA_TEST_SEED` replays it), or the
/// one a parent process passed to its children.
pub fn seed() -> u64 {
    std::env::var(SEED_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rucuda_testkit::seed!())
}

// ---------------------------------------------------------------------------------------
// Child processes.

/// Which child entry point runs (`nccl_child` tests read it).
pub const CHILD_ENV: &str = "RUCUDA_NCCL_TEST_CHILD";
/// The child's rank.
pub const RANK_ENV: &str = "RUCUDA_NCCL_TEST_RANK";
/// The number of ranks.
pub const NRANKS_ENV: &str = "RUCUDA_NCCL_TEST_NRANKS";
/// The file through which rank 0 hands out the unique id.
pub const ID_FILE_ENV: &str = "RUCUDA_NCCL_TEST_ID_FILE";
/// The seed of the random inputs, the same in every child.
pub const SEED_ENV: &str = "RUCUDA_NCCL_TEST_SEED";

/// What a finished child left.
pub struct ChildOutcome {
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

/// A scratch folder for one test run, removed when the guard drops.
pub fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("rucuda-nccl-{name}-"))
        .tempdir()
        .expect("a scratch folder")
}

/// Runs `test` of this test binary in `n` child processes (`--exact test
/// --include-ignored`), child `i` with the environment `env(i)`, and waits up to
/// `timeout` for all of them; children still running then are killed (their status is
/// `None`).
pub fn run_children(
    test: &str,
    n: usize,
    timeout: Duration,
    env: impl Fn(usize) -> Vec<(&'static str, String)>,
) -> Vec<ChildOutcome> {
    let scratch = scratch("children");
    let dir = scratch.path();
    let mut children = Vec::new();
    for i in 0..n {
        let (out, err) = (dir.join(format!("{i}.out")), dir.join(format!("{i}.err")));
        let mut cmd = rucuda_testkit::child_test(test);
        cmd.env("NCCL_NVLS_ENABLE", "0")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).expect("a log file"))
            .stderr(std::fs::File::create(&err).expect("a log file"));
        for (k, v) in env(i) {
            cmd.env(k, v);
        }
        children.push((cmd.spawn().expect("the child starts"), out, err));
    }
    let start = Instant::now();
    let mut statuses: Vec<Option<ExitStatus>> = vec![None; n];
    while statuses.iter().any(Option::is_none) && start.elapsed() < timeout {
        for (i, (child, _, _)) in children.iter_mut().enumerate() {
            if statuses[i].is_none() {
                statuses[i] = child.try_wait().expect("waiting for a child");
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut outcomes = Vec::new();
    for (i, (mut child, out, err)) in children.into_iter().enumerate() {
        if statuses[i].is_none() {
            let _ = child.kill();
            let _ = child.wait();
        }
        outcomes.push(ChildOutcome {
            status: statuses[i],
            stdout: std::fs::read_to_string(&out).unwrap_or_default(),
            stderr: std::fs::read_to_string(&err).unwrap_or_default(),
        });
    }
    outcomes
}

/// Prints every child's output and asserts each exited 0 after running its test.
pub fn assert_children_passed(outcomes: &[ChildOutcome], what: &str) {
    for (i, o) in outcomes.iter().enumerate() {
        println!(
            "---- child {i} ({what}): {:?}\n{}\n{}",
            o.status, o.stdout, o.stderr
        );
    }
    for (i, o) in outcomes.iter().enumerate() {
        match o.status {
            None => panic!("child {i} ({what}) did not finish in time: NCCL hung"),
            Some(s) => assert!(s.success(), "child {i} ({what}) failed: {s}"),
        }
        assert!(
            o.stdout.contains("1 passed"),
            "child {i} ({what}) did not run its test"
        );
    }
}

/// The communicator of a child: rank 0 makes the id and saves it to the file, the others
/// wait for it; each rank `r` runs on device `r`.
pub fn child_communicator() -> (Communicator, usize, usize) {
    let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} is set by the parent"));
    let rank: usize = var(RANK_ENV).parse().expect("a rank");
    let nranks: usize = var(NRANKS_ENV).parse().expect("a rank count");
    let file = PathBuf::from(var(ID_FILE_ENV));
    let id = if rank == 0 {
        let id = rucuda_nccl::UniqueId::new().expect("a unique id");
        id.save(&file).expect("the id file is written");
        id
    } else {
        rucuda_nccl::UniqueId::load_waiting(&file, Duration::from_secs(60)).expect("the id file")
    };
    let comm = Communicator::init_rank(&ctx(rank), nranks, &id, rank).expect("init_rank");
    (comm, rank, nranks)
}
