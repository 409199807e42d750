//! Helpers shared by this crate's GPU tests: the test context, kernels, random inputs.
#![allow(dead_code)]

use rucuda_driver::{Context, Device, Module};

/// The primary context of device 0 (the bundle sets CUDA_VISIBLE_DEVICES per pass).
pub fn ctx() -> Context {
    Device::get(0)
        .and_then(Device::primary_context)
        .expect("a CUDA device (this test is ignored unless the GPU bundle runs it)")
}

/// Loads a committed PTX file of `tests/kernels/`.
pub fn module(ctx: &Context, ptx: &str) -> Module {
    Module::load_data(ctx, ptx.as_bytes()).expect("PTX loads")
}

/// The core kernels (`tests/kernels/core.cu`).
pub fn core_module(ctx: &Context) -> Module {
    module(ctx, include_str!("../kernels/core.ptx"))
}

/// Prints the marker the bundle counts as a skip.
pub fn skip(reason: &str) {
    println!("RUCUDA_SKIPPED: {reason}");
}

/// A small, fast generator (SplitMix64) seeded freshly per call unless
/// RUCUDA_TEST_SEED is set; the seed is printed so a failure can be replayed.
pub struct Rng(u64);

impl Rng {
    pub fn fresh() -> Rng {
        let seed = std::env::var("RUCUDA_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(0x9e37_79b9)
            });
        println!("random seed {seed} (set RUCUDA_TEST_SEED to replay)");
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    pub fn f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
    pub fn f64(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
    pub fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
    pub fn vec_i32(&mut self, n: usize) -> Vec<i32> {
        (0..n).map(|_| self.next_u64() as i32 / 4).collect()
    }
    pub fn vec_u8(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// Asserts |got - want| <= tol * max(1, |want|) elementwise, naming the first bad index.
pub fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "lengths differ");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "element {i}: got {g}, want {w} (tolerance {tol})"
        );
    }
}
