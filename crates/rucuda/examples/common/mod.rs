//! What every example shares: the checks that say clearly what is missing (no driver, no
//! NVRTC), the exit status, fresh random inputs and the CPU comparison.
#![allow(dead_code)] // each example uses part of it

use std::error::Error;

/// The result type of the examples' `run` functions.
pub type ExampleResult = Result<(), Box<dyn Error>>;

/// Runs `body` after checking for a CUDA driver (and NVRTC when `needs_nvrtc`). Every
/// missing piece is reported at once, each with what provides it, and the example exits
/// 1; it also exits 1 when `body` fails. `body` prints its own "OK".
pub fn main(name: &str, needs_nvrtc: bool, body: impl FnOnce() -> ExampleResult) {
    let mut missing: Vec<String> = Vec::new();
    if let Err(e) = rucuda::driver::driver() {
        missing.push(format!("a CUDA driver: {e}"));
    }
    if needs_nvrtc {
        if let Err(e) = rucuda::jit::nvrtc::Nvrtc::get() {
            missing.push(format!("NVRTC (it compiles the example's CUDA C): {e}"));
        }
    }
    if !missing.is_empty() {
        eprintln!(
            "{name}: cannot run here; {} missing:",
            if missing.len() == 1 {
                "one piece is"
            } else {
                "these are"
            }
        );
        for m in &missing {
            eprintln!("  - {m}");
        }
        std::process::exit(1);
    }
    if let Err(e) = body() {
        eprintln!("{name} FAILED: {e}");
        std::process::exit(1);
    }
}

/// An error with a message, for failed checks.
pub fn fail(message: impl Into<String>) -> Box<dyn Error> {
    message.into().into()
}

/// A seed that changes every run (from the OS), printed so a failing run can be repeated
/// with `RUCUDA_EXAMPLE_SEED`.
pub fn fresh_seed() -> u64 {
    let seed = std::env::var("RUCUDA_EXAMPLE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    println!("(inputs from RUCUDA_EXAMPLE_SEED={seed})");
    seed
}

/// `n` uniform values in [-1, 1) from `seed` (the same values for the same seed).
pub fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect()
}

/// The largest absolute difference between `got` and `want`, or an error naming the
/// first element off by more than `tolerance`.
pub fn compare(
    what: &str,
    got: &[f32],
    want: &[f32],
    tolerance: f64,
) -> Result<f64, Box<dyn Error>> {
    if got.len() != want.len() {
        return Err(fail(format!(
            "{what}: {} values, expected {}",
            got.len(),
            want.len()
        )));
    }
    let mut worst = 0.0f64;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let diff = (f64::from(*g) - f64::from(*w)).abs();
        if diff.is_nan() || diff > tolerance {
            return Err(fail(format!(
                "{what}: element {i} is {g}, expected {w} (tolerance {tolerance:e})"
            )));
        }
        worst = worst.max(diff);
    }
    Ok(worst)
}
