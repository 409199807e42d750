//! A small seeded generator for the property-style unit tests: the testkit's SplitMix64
//! with the two draws these tests use.

/// Fast, good enough for picking shapes and values; the same seed gives the same draws.
pub(crate) struct TestRng(rucuda_testkit::SplitMix64);

impl TestRng {
    pub(crate) fn new(seed: u64) -> TestRng {
        TestRng(rucuda_testkit::SplitMix64::new(seed))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }

    /// True with probability `p`.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}
