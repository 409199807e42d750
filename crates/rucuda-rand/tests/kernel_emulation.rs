//! Our CUDA kernels, compiled for the host by a C++ compiler (tests/emulation: a shim of
//! the CUDA built-ins and a driver that runs every thread of a launch in turn), against
//! the CPU references: layouts, state kept between calls, seeding, skip-ahead, aligned and
//! unaligned stores, short last chunks, every distribution.
//!
//! This checks the kernels' logic where CI has no GPU. Transcendental functions are
//! emulated as the CPU reference computes them, so here even normals agree exactly; on the
//! GPU the bit-exact comparison is with cuRAND itself (the GPU tests). Skipped, with a
//! message, when no C++ compiler is found.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use rucuda_rand::distributions::Distribution;
use rucuda_rand::kernels::{source, Family};
use rucuda_rand::mrg32k3a::reference::Mrg32k3aState;
use rucuda_rand::philox::reference::Philox4x32_10State;
use rucuda_rand::reference::{fill, CurandState, Element};
use rucuda_rand::sobol::direction::{direction_vector_set_32, direction_vector_set_64};
use rucuda_rand::sobol::reference::{Sobol32State, Sobol64State};
use rucuda_rand::sobol::scramble::{
    scramble_constants_32, scramble_constants_64, scrambled_direction_vectors_32,
    scrambled_direction_vectors_64,
};
use rucuda_rand::xorwow::reference::XorwowState;
use rucuda_rand::{mrg32k3a, sobol, xorwow};

fn compiler() -> Option<String> {
    let candidates = [
        std::env::var("CXX").ok(),
        Some("c++".into()),
        Some("g++".into()),
    ];
    candidates.into_iter().flatten().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    })
}

/// The emulation driver, built in a temporary folder that goes when the guard drops.
fn build(family: Family, define: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let Some(cxx) = compiler() else {
        println!("RUCUDA_SKIPPED: no C++ compiler (set CXX) to emulate the kernels");
        return None;
    };
    // The shim and the driver travel inside the test binary (the GPU bundle has no source
    // tree).
    let guard = tempfile::Builder::new()
        .prefix(&format!("rucuda-rand-emulation-{define}-"))
        .tempdir()
        .unwrap();
    let dir = guard.path();
    std::fs::write(dir.join("kernels.cu"), source(family).unwrap()).unwrap();
    std::fs::write(dir.join("shim.h"), include_str!("emulation/shim.h")).unwrap();
    std::fs::write(dir.join("driver.cpp"), include_str!("emulation/driver.cpp")).unwrap();
    let exe = dir.join("driver");
    let out = Command::new(&cxx)
        .args([
            "-O1",
            "-std=c++17",
            "-ffp-contract=off",
            "-Wno-unknown-pragmas",
        ])
        .arg(format!("-DFAMILY_{define}"))
        .arg("-I")
        .arg(dir)
        .arg(dir.join("driver.cpp"))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("the C++ compiler runs");
    assert!(
        out.status.success(),
        "compiling the emulation failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some((guard, exe))
}

struct Driver {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Driver {
    fn start(exe: &Path) -> Driver {
        let mut child = Command::new(exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the emulation driver starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Driver {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, line: &str) -> Vec<u64> {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        let mut reply = String::new();
        self.stdout.read_line(&mut reply).unwrap();
        let mut words = reply.split_whitespace();
        match words.next() {
            Some("ok") => vec![],
            Some("out") => words.map(|w| u64::from_str_radix(w, 16).unwrap()).collect(),
            other => panic!("driver said {other:?} to {line:.80}: {reply}"),
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn words(v: &[impl Copy + Into<u64>]) -> String {
    v.iter()
        .map(|&x| x.into().to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// SplitMix64, for test parameters.
struct Mix(u64);
impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

trait Bits: Element {
    fn bits(self) -> u64;
    fn close(a: u64, b: u64) -> bool;
}
impl Bits for u32 {
    fn bits(self) -> u64 {
        u64::from(self)
    }
    fn close(a: u64, b: u64) -> bool {
        a == b
    }
}
impl Bits for u64 {
    fn bits(self) -> u64 {
        self
    }
    fn close(a: u64, b: u64) -> bool {
        a == b
    }
}
impl Bits for f32 {
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn close(a: u64, b: u64) -> bool {
        let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
        a == b || (x - y).abs() <= 1e-6 * x.abs().max(1.0)
    }
}
impl Bits for f64 {
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn close(a: u64, b: u64) -> bool {
        let (x, y) = (f64::from_bits(a), f64::from_bits(b));
        a == b || (x - y).abs() <= 1e-13 * x.abs().max(1.0)
    }
}

/// Compares element by element; returns how many differ in their bits (all must be
/// within `T::close`).
fn compare<T: Bits>(got: &[u64], want: &[T], what: &str) -> usize {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let mut inexact = 0;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if g != w.bits() {
            inexact += 1;
            assert!(
                T::close(g, w.bits()),
                "{what}: element {i}: kernel {g:#x}, reference {:#x}",
                w.bits()
            );
        }
    }
    inexact
}

fn pseudo_scenario<S: CurandState>(
    exe: &Path,
    table: Option<Vec<u32>>,
    make: impl Fn(u64, u64, u64) -> S,
    skip_sequence: impl Fn(&mut S, u64),
    name: &str,
) {
    let mut d = Driver::start(exe);
    if let Some(t) = &table {
        d.send(&format!("table {} {}", t.len(), words(t)));
    }
    let n_states = 37usize;
    let mut rng = Mix(0x5eed ^ n_states as u64);
    // Per-state seeds, subsequences and offsets.
    let seeds: Vec<u64> = (0..n_states).map(|_| rng.next()).collect();
    let subs: Vec<u64> = (0..n_states).map(|_| rng.next() >> 24).collect();
    let offs: Vec<u64> = (0..n_states).map(|_| rng.next() >> 24).collect();
    for arrays in [false, true] {
        let mut states: Vec<S> = if arrays {
            d.send(&format!(
                "init_arrays {n_states} {} {} {}",
                words(&seeds),
                words(&subs),
                words(&offs)
            ));
            (0..n_states)
                .map(|t| make(seeds[t], subs[t], offs[t]))
                .collect()
        } else {
            d.send(&format!("init {n_states} 1234 5 3"));
            (0..n_states).map(|t| make(1234, 5 + t as u64, 3)).collect()
        };
        let mut inexact = 0;
        let normal = Distribution::Normal {
            mean: 0.25,
            stddev: 2.0,
        };
        let log_normal = Distribution::LogNormal {
            mean: 0.1,
            stddev: 0.5,
        };
        let steps: Vec<(&str, u64, Distribution, i32)> = vec![
            ("raw_u32", 1000, Distribution::Raw, 0),
            ("uniform_f32", 333, Distribution::Uniform, 1),
            ("uniform_f64", 101, Distribution::Uniform, 0),
            ("normal_f32", 150, normal, 0),
            ("normal_f32", 77, Distribution::STANDARD_NORMAL, 1),
            ("log_normal_f32", 55, log_normal, 0),
            ("normal_f32", 296, normal, 0),
            ("normal_f64", 91, normal, 0),
            ("log_normal_f64", 40, log_normal, 1),
            ("normal_f64", 74, Distribution::STANDARD_NORMAL, 0),
            ("poisson_u32", 80, Distribution::Poisson { lambda: 5.5 }, 0),
            (
                "poisson_u32",
                60,
                Distribution::Poisson { lambda: 300.0 },
                0,
            ),
            (
                "poisson_u32",
                30,
                Distribution::Poisson { lambda: 6000.0 },
                1,
            ),
            ("skip0", 12345, Distribution::Raw, 0),
            ("skip1", 3, Distribution::Raw, 0),
            ("raw_u32", 148 * 3, Distribution::Raw, 0),
            ("uniform_f32", 4000, Distribution::Uniform, 0),
        ];
        for (kernel, n, dist, misalign) in steps {
            let what = format!("{name} {kernel} n={n} (arrays: {arrays})");
            if let Some(kind) = kernel.strip_prefix("skip") {
                d.send(&format!("skip {kind} {n}"));
                for s in &mut states {
                    if kind == "0" {
                        s.skipahead(n);
                    } else {
                        skip_sequence(s, n);
                    }
                }
                continue;
            }
            let (mean, stddev, lambda) = match dist {
                Distribution::Normal { mean, stddev }
                | Distribution::LogNormal { mean, stddev } => (mean, stddev, 0.0),
                Distribution::Poisson { lambda } => (0.0, 1.0, lambda),
                _ => (0.0, 1.0, 0.0),
            };
            let got = d.send(&format!(
                "fill {kernel} {n} {mean:e} {stddev:e} {lambda:e} {misalign}"
            ));
            let n = n as usize;
            inexact += if kernel.ends_with("f32") {
                let mut want = vec![0f32; n];
                fill(&mut states, &mut want, dist);
                compare(&got, &want, &what)
            } else if kernel.ends_with("f64") {
                let mut want = vec![0f64; n];
                fill(&mut states, &mut want, dist);
                compare(&got, &want, &what)
            } else {
                let mut want = vec![0u32; n];
                fill(&mut states, &mut want, dist);
                compare(&got, &want, &what)
            };
        }
        println!("{name} (arrays: {arrays}): {inexact} values within tolerance but not bit-equal");
    }
}

#[test]
fn philox_kernels_match_the_reference() {
    let Some((_dir, exe)) = build(Family::Philox, "PHILOX") else {
        return;
    };
    pseudo_scenario(
        &exe,
        None,
        Philox4x32_10State::new,
        |s, n| s.skipahead_sequence(n),
        "philox",
    );
}

#[test]
fn xorwow_kernels_match_the_reference() {
    let Some((_dir, exe)) = build(Family::Xorwow, "XORWOW") else {
        return;
    };
    pseudo_scenario(
        &exe,
        Some(xorwow::jump::device_table()),
        XorwowState::new,
        |s, n| s.skipahead_sequence(n),
        "xorwow",
    );
}

#[test]
fn mrg32k3a_kernels_match_the_reference() {
    let Some((_dir, exe)) = build(Family::Mrg32k3a, "MRG32K3A") else {
        return;
    };
    pseudo_scenario(
        &exe,
        Some(mrg32k3a::jump::device_table()),
        Mrg32k3aState::new,
        |s, n| s.skipahead_subsequence(n),
        "mrg32k3a",
    );
}

/// Bit-major (vector b of dimension d at b·dims + d) from dimension-major.
fn transpose<T: Copy>(v: &[T], dims: usize, bits: usize) -> Vec<T> {
    (0..bits)
        .flat_map(|b| (0..dims).map(move |d| v[d * bits + b]))
        .collect()
}

#[test]
fn sobol_kernels_match_the_reference() {
    let Some((_dir, exe)) = build(Family::Sobol, "SOBOL") else {
        return;
    };
    for (dims, bits, scrambled) in [
        (5usize, 32usize, false),
        (5, 32, true),
        (40, 32, false),
        (5, 64, false),
        (5, 64, true),
        (40, 64, true),
    ] {
        let mut d = Driver::start(&exe);
        // Even dimensions start at a multiple of every chunk size, odd ones do not.
        let offsets: Vec<u64> = (0..dims as u64).map(|i| i * 1000 + 3 * (i % 2)).collect();
        let label = format!("sobol{bits} dims={dims} scrambled={scrambled}");
        let (steps, mut s32, mut s64): (Vec<_>, Vec<Sobol32State>, Vec<Sobol64State>);
        if bits == 32 {
            let v = if scrambled {
                scrambled_direction_vectors_32(dims, 99).unwrap()
            } else {
                direction_vector_set_32(dims).unwrap()
            };
            let c = if scrambled {
                scramble_constants_32(dims, 99)
            } else {
                vec![0; dims]
            };
            let sc = if scrambled {
                format!("scramble {}", words(&c))
            } else {
                "none".into()
            };
            d.send(&format!(
                "sobol 32 {dims} {} {} {sc}",
                words(&offsets),
                words(&transpose(&v, dims, 32))
            ));
            s32 = (0..dims)
                .map(|k| {
                    let mut a = [0u32; 32];
                    a.copy_from_slice(&v[k * 32..k * 32 + 32]);
                    Sobol32State::scrambled(a, c[k], offsets[k] as u32)
                })
                .collect();
            s64 = vec![];
            steps = vec![
                "raw_u32",
                "uniform_f32",
                "uniform_f64",
                "normal_f32",
                "normal_f64",
                "log_normal_f32",
                "log_normal_f64",
                "poisson_u32",
            ];
        } else {
            let v = if scrambled {
                scrambled_direction_vectors_64(dims, 99).unwrap()
            } else {
                direction_vector_set_64(dims).unwrap()
            };
            let c = if scrambled {
                scramble_constants_64(dims, 99)
            } else {
                vec![0; dims]
            };
            let sc = if scrambled {
                format!("scramble {}", words(&c))
            } else {
                "none".into()
            };
            d.send(&format!(
                "sobol 64 {dims} {} {} {sc}",
                words(&offsets),
                words(&transpose(&v, dims, 64))
            ));
            s64 = (0..dims)
                .map(|k| {
                    let mut a = [0u64; 64];
                    a.copy_from_slice(&v[k * 64..k * 64 + 64]);
                    Sobol64State::scrambled(a, c[k], offsets[k])
                })
                .collect();
            s32 = vec![];
            steps = vec![
                "raw_u64",
                "uniform_f32",
                "uniform_f64",
                "normal_f32",
                "normal_f64",
                "log_normal_f32",
                "log_normal_f64",
                "poisson_u32",
            ];
        }
        let mut inexact = 0;
        for (round, n) in [(0usize, 1003u64), (1, 40), (2, 4096)] {
            for (si, kernel) in steps.iter().enumerate() {
                let dist = match *kernel {
                    "raw_u32" | "raw_u64" => Distribution::Raw,
                    k if k.starts_with("uniform") => Distribution::Uniform,
                    k if k.starts_with("normal") => Distribution::Normal {
                        mean: -1.0,
                        stddev: 3.0,
                    },
                    k if k.starts_with("log_normal") => Distribution::LogNormal {
                        mean: 0.0,
                        stddev: 0.25,
                    },
                    _ => Distribution::Poisson {
                        lambda: if si % 2 == 0 { 17.0 } else { 1500.0 },
                    },
                };
                let (mean, stddev, lambda) = match dist {
                    Distribution::Normal { mean, stddev }
                    | Distribution::LogNormal { mean, stddev } => (mean, stddev, 0.0),
                    Distribution::Poisson { lambda } => (0.0, 1.0, lambda),
                    _ => (0.0, 1.0, 0.0),
                };
                let chunk = if kernel.ends_with("f64") || kernel.ends_with("u64") {
                    2
                } else {
                    4
                };
                // Vary how many chunks a thread writes (what launch_shape picks, and others):
                // the output must not depend on it.
                let (per_thread, wlog2) = match (round + si) % 6 {
                    0 => {
                        let s = sobol::launch_shape(n, dims as u32, chunk, 1 << 20);
                        (s.per_thread, s.wlog2)
                    }
                    1 => (1, 0),
                    2 => (3, 0),
                    3 => (1000, 0),
                    4 => (0, 0),
                    _ => (0, 3),
                };
                let misalign = (round + si) % 2;
                let got = d.send(&format!(
                    "sfill {kernel} {n} {per_thread} {wlog2} {mean:e} {stddev:e} {lambda:e} {misalign}"
                ));
                let what = format!("{label} {kernel} n={n} per_thread={per_thread} wlog2={wlog2}");
                let n = n as usize;
                macro_rules! check {
                    ($states:expr) => {
                        if kernel.ends_with("f32") {
                            let mut want = vec![0f32; n];
                            fill(&mut $states, &mut want, dist);
                            compare(&got, &want, &what)
                        } else if kernel.ends_with("f64") {
                            let mut want = vec![0f64; n];
                            fill(&mut $states, &mut want, dist);
                            compare(&got, &want, &what)
                        } else if kernel.ends_with("u64") {
                            let mut want = vec![0u64; n];
                            fill(&mut $states, &mut want, dist);
                            compare(&got, &want, &what)
                        } else {
                            let mut want = vec![0u32; n];
                            fill(&mut $states, &mut want, dist);
                            compare(&got, &want, &what)
                        }
                    };
                }
                inexact += if bits == 32 { check!(s32) } else { check!(s64) };
            }
            d.send("sskip 777");
            for s in &mut s32 {
                s.skipahead(777);
            }
            for s in &mut s64 {
                s.skipahead(777);
            }
        }
        println!("{label}: {inexact} values within tolerance but not bit-equal");
    }
}
