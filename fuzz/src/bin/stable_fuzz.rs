//! Our stable-Rust fuzz driver: runs each target for a fixed time on mutations of its
//! seed corpus (`fuzz/seeds/TARGET/`, plus `fuzz/regressions/TARGET/`), with no
//! coverage feedback. Used where `cargo fuzz` (libFuzzer, nightly) is not available.
//!
//! usage: stable-fuzz [--seconds N] [--seed S] [--max-len N] [TARGET...]
//!
//! A panicking input is written to `fuzz/artifacts/TARGET/crash-HASH`; an input that
//! runs longer than 10 s to `timeout-HASH` (and the driver stops). Exit status 1 when
//! anything was found.

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rucuda_fuzz::mutate::{mutate, Rng};
use rucuda_fuzz::{files_in, fuzz_dir, targets};

const HANG: Duration = Duration::from_secs(10);

fn save(kind: &str, target: &str, input: &[u8]) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    input.hash(&mut h);
    let dir = fuzz_dir().join("artifacts").join(target);
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{kind}-{:016x}", h.finish()));
    let _ = std::fs::write(&path, input);
    path.display().to_string()
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let d = fuzz_dir();
    let mut out: Vec<Vec<u8>> = [
        d.join("seeds").join(target),
        d.join("regressions").join(target),
    ]
    .iter()
    .flat_map(|dir| files_in(dir))
    .filter_map(|p| std::fs::read(p).ok())
    .collect();
    if out.is_empty() {
        out.push(Vec::new());
    }
    out
}

fn main() {
    let mut seconds = 10u64;
    let mut seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let mut max_len = 4096usize;
    let mut names: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |what: &str| -> u64 {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{what} needs a number"))
        };
        match a.as_str() {
            "--seconds" => seconds = value("--seconds"),
            "--seed" => seed = value("--seed"),
            "--max-len" => max_len = value("--max-len") as usize,
            _ => names.push(a),
        }
    }
    if names.is_empty() {
        names = targets::ALL.iter().map(|(n, _)| n.to_string()).collect();
    }
    // Panics are findings: keep the message, not the default hook's noise per input.
    let last_panic: Arc<Mutex<String>> = Arc::default();
    {
        let last_panic = last_panic.clone();
        std::panic::set_hook(Box::new(move |info| {
            if let Ok(mut m) = last_panic.lock() {
                *m = info.to_string();
            }
        }));
    }
    // The watchdog: the input now running and when it started.
    let current: Arc<Mutex<(String, Vec<u8>)>> = Arc::default();
    let started_ms = Arc::new(AtomicU64::new(0));
    let epoch = Instant::now();
    {
        let (current, started_ms) = (current.clone(), started_ms.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            let s = started_ms.load(Ordering::Relaxed);
            // `s` is one past the start, so it may lie a millisecond ahead of now.
            let running = (epoch.elapsed().as_millis() as u64).saturating_sub(s);
            if s != 0 && running > HANG.as_millis() as u64 {
                if let Ok(c) = current.lock() {
                    let path = save("timeout", &c.0, &c.1);
                    eprintln!("{}: an input ran over {HANG:?}: {path}", c.0);
                }
                std::process::exit(1);
            }
        });
    }
    println!("stable-fuzz: seed {seed} (pass --seed to replay), {seconds} s per target");
    let mut found = 0usize;
    for name in &names {
        let Some(target) = targets::by_name(name) else {
            eprintln!("stable-fuzz: no target named {name}");
            std::process::exit(2);
        };
        let corpus = seeds(name);
        let mut rng = Rng::new(seed ^ name.len() as u64);
        let t0 = Instant::now();
        let (mut execs, mut crashes) = (0u64, 0usize);
        let mut seen = std::collections::HashSet::new();
        let run = |input: &[u8]| -> bool {
            if let Ok(mut c) = current.lock() {
                c.0.clone_from(name);
                c.1.clear();
                c.1.extend_from_slice(input);
            }
            started_ms.store(epoch.elapsed().as_millis() as u64 + 1, Ordering::Relaxed);
            let ok = std::panic::catch_unwind(|| target(input)).is_ok();
            started_ms.store(0, Ordering::Relaxed);
            ok
        };
        // Seeds as they are first, then mutations until the time is up.
        for s in &corpus {
            execs += 1;
            if !run(s) {
                crashes += 1;
                eprintln!("{name}: seed crashes: {}", save("crash", name, s));
            }
        }
        while t0.elapsed() < Duration::from_secs(seconds) {
            let a = &corpus[rng.below(corpus.len())];
            let b = &corpus[rng.below(corpus.len())];
            let input = mutate(&mut rng, a, b, max_len);
            execs += 1;
            if !run(&input) {
                let msg = last_panic.lock().map(|m| m.clone()).unwrap_or_default();
                if seen.insert(msg.clone()) {
                    crashes += 1;
                    let path = save("crash", name, &input);
                    eprintln!("{name}: crash: {msg}\n  input: {path}");
                }
            }
        }
        let secs = t0.elapsed().as_secs_f64();
        println!(
            "{name}: {execs} executions in {secs:.1} s ({:.0}/s), {crashes} distinct crashes",
            execs as f64 / secs.max(1e-9)
        );
        found += crashes;
    }
    if found > 0 {
        std::process::exit(1);
    }
}
