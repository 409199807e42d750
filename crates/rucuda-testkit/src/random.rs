//! Reproducible random inputs: one base seed per test process, fresh every run unless
//! `RUCUDA_TEST_SEED` fixes it, and printed so a failing run can be replayed.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// Environment variable that fixes the base seed (decimal, or hexadecimal with `0x`).
pub const SEED_ENV: &str = "RUCUDA_TEST_SEED";

static BASE_SEED: OnceLock<u64> = OnceLock::new();

/// The process's base seed: `RUCUDA_TEST_SEED` when set, else one drawn from the clock
/// and the process id. The first call prints it on stderr (libtest shows it with a
/// failing test's output) as `RUCUDA_TEST_SEED=<seed>`.
pub fn base_seed() -> u64 {
    *BASE_SEED.get_or_init(|| {
        let (seed, origin) = match std::env::var(SEED_ENV).ok().and_then(|s| parse_seed(&s)) {
            Some(seed) => (seed, "from the environment"),
            None => (clock_seed(), "fresh; set it to replay this run"),
        };
        eprintln!("rucuda-testkit: {SEED_ENV}={seed} ({origin})");
        seed
    })
}

fn parse_seed(text: &str) -> Option<u64> {
    let text = text.trim();
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

fn clock_seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    SplitMix64::new(nanos ^ (u64::from(std::process::id()) << 32)).next_u64()
}

/// A seed for one call site: the base seed mixed with `site` (the [`seed!`](crate::seed)
/// macro passes `file:line:column`). Two call sites get unrelated streams; the same call
/// site gets the same stream for the same base seed.
pub fn seed_for(site: &str) -> u64 {
    // FNV-1a over the site name, then one SplitMix64 step to spread the bits.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in site.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    SplitMix64::new(base_seed() ^ hash).next_u64()
}

/// The seed for this call site: [`seed_for`] with the caller's `file:line:column`.
///
/// ```
/// let a = rucuda_testkit::random_f32(4, rucuda_testkit::seed!());
/// assert_eq!(a.len(), 4);
/// ```
#[macro_export]
macro_rules! seed {
    () => {
        $crate::seed_for(::core::concat!(
            ::core::file!(),
            ":",
            ::core::line!(),
            ":",
            ::core::column!()
        ))
    };
}

/// SplitMix64: a small, fast generator whose whole state is one `u64`; enough for test
/// inputs (not for statistics, not for cryptography).
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[-1, 1)`, every value a multiple of 2^-23.
    pub fn next_f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32) * (1.0 / (1u64 << 23) as f32) - 1.0
    }

    /// Uniform in `[-1, 1)`, every value a multiple of 2^-52.
    pub fn next_f64(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64) * (1.0 / (1u64 << 52) as f64) - 1.0
    }

    /// Uniform in `low..=high` (requires `low <= high`; otherwise returns `low`).
    pub fn next_i32_in(&mut self, low: i32, high: i32) -> i32 {
        if high <= low {
            return low;
        }
        let span = (i64::from(high) - i64::from(low) + 1) as u64;
        let offset = ((self.next_u64() >> 32) * span) >> 32;
        (i64::from(low) + offset as i64) as i32
    }
}

/// `n` floats uniform in `[-1, 1)` from `seed` (the same seed gives the same values).
pub fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = SplitMix64::new(seed);
    (0..n).map(|_| rng.next_f32()).collect()
}

/// `n` doubles uniform in `[-1, 1)` from `seed`.
pub fn random_f64(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed);
    (0..n).map(|_| rng.next_f64()).collect()
}

/// `n` integers uniform in `-1000..=1000` from `seed`: sums of up to 2^21 of them fit
/// an `i32`, so reductions and scans can be compared exactly.
pub fn random_i32(n: usize, seed: u64) -> Vec<i32> {
    let mut rng = SplitMix64::new(seed);
    (0..n).map(|_| rng.next_i32_in(-1000, 1000)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_values_and_ranges_hold() {
        let a = random_f32(10_000, 7);
        assert_eq!(a, random_f32(10_000, 7));
        assert_ne!(a, random_f32(10_000, 8));
        assert!(a.iter().all(|v| (-1.0..1.0).contains(v)));
        let b = random_f64(10_000, 7);
        assert!(b.iter().all(|v| (-1.0..1.0).contains(v)));
        let c = random_i32(10_000, 7);
        assert!(c.iter().all(|v| (-1000..=1000).contains(v)));
        assert!(c.contains(&-1000) || c.contains(&1000) || c.iter().any(|v| v.abs() > 990));
    }

    #[test]
    fn call_sites_get_different_seeds() {
        let first = crate::seed!();
        let second = crate::seed!();
        assert_ne!(first, second);
        assert_eq!(seed_for("x"), seed_for("x"));
    }

    #[test]
    fn seeds_parse_in_decimal_and_hex() {
        assert_eq!(parse_seed("42"), Some(42));
        assert_eq!(parse_seed(" 0x2a "), Some(42));
        assert_eq!(parse_seed("nope"), None);
    }

    #[test]
    fn narrow_and_empty_integer_ranges() {
        let mut rng = SplitMix64::new(1);
        assert_eq!(rng.next_i32_in(5, 5), 5);
        assert_eq!(rng.next_i32_in(6, 5), 6);
        let full: Vec<i32> = (0..64)
            .map(|_| rng.next_i32_in(i32::MIN, i32::MAX))
            .collect();
        assert!(full.iter().any(|&v| v < 0) && full.iter().any(|&v| v > 0));
    }
}

/// A generator for one test's inputs: fresh each process (from [`base_seed`]) and
/// different for each `fresh()` call within the process, so two inputs of one test
/// never repeat each other. Replay a run with `RUCUDA_TEST_SEED`.
///
/// ```
/// let mut rng = rucuda_testkit::TestRng::fresh();
/// let x = rng.vec_f32(8);
/// assert!(x.iter().all(|v| (-1.0..1.0).contains(v)));
/// ```
#[derive(Debug, Clone)]
pub struct TestRng(SplitMix64);

impl TestRng {
    /// A generator with a stream of its own.
    pub fn fresh() -> TestRng {
        static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        TestRng(SplitMix64::new(
            base_seed() ^ call.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        ))
    }

    /// A generator starting from a fixed `seed`: the same draws every run (unit tests
    /// that pick shapes, and threads seeded from one [`TestRng::fresh`] stream).
    pub fn new(seed: u64) -> TestRng {
        TestRng(SplitMix64::new(seed))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `low..=high` (requires `low <= high`).
    pub fn range(&mut self, low: i64, high: i64) -> i64 {
        low + (self.next_u64() % (high - low + 1) as u64) as i64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    /// Uniform in [-1, 1).
    pub fn f32(&mut self) -> f32 {
        self.0.next_f32()
    }

    /// Uniform in [-1, 1).
    pub fn f64(&mut self) -> f64 {
        self.0.next_f64()
    }

    /// Uniform in [-1, 1), as `f64` (an alias of [`TestRng::f64`]).
    pub fn unit(&mut self) -> f64 {
        self.0.next_f64()
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// `n` values uniform in [-1, 1).
    pub fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }

    /// `n` values uniform in [-1, 1).
    pub fn vec_f64(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.f64()).collect()
    }

    /// `n` values spread over a quarter of the `i32` range (sums of a few stay in range).
    pub fn vec_i32(&mut self, n: usize) -> Vec<i32> {
        (0..n).map(|_| self.next_u64() as i32 / 4).collect()
    }

    /// `n` random words (all 32 bits random).
    pub fn vec_u32(&mut self, n: usize) -> Vec<u32> {
        (0..n).map(|_| self.next_u64() as u32).collect()
    }

    /// `n` random bytes.
    pub fn vec_u8(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}
