//! CPU reference of XORWOW as cuRAND's device API runs it: Marsaglia's xorshift
//! ("Xorshift RNGs", J. Stat. Softw. 8(14), 2003) over five 32-bit words, plus a Weyl
//! sequence `d += 362437` added to each output; period 2^192 − 2^32.
//!
//! `curand_init(seed, subsequence, offset)` splits the seed into two salted 32-bit halves,
//! mixes each with an odd multiplier, sets the five words and `d` from them, then jumps
//! `subsequence · 2^67 + offset` steps (see [`super::jump`]).

use super::jump::{jump, xorshift_step, SUBSEQUENCE_LOG2};
use crate::distributions as dist;
use crate::reference::{BoxMullerCache, CurandState};
use crate::sampling::{box_muller_state_methods, BoxMullerSource};

/// The Weyl increment.
pub const WEYL: u32 = 362_437;

/// One thread's `curandStateXORWOW_t`, on the CPU.
///
/// ```
/// use rucuda_rand::{reference::CurandState, xorwow::reference::XorwowState};
/// let mut a = XorwowState::new(5, 1, 0);
/// let v: Vec<u32> = (0..4).map(|_| a.curand()).collect();
/// let mut b = XorwowState::new(5, 1, 2);
/// assert_eq!(b.curand(), v[2]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct XorwowState {
    /// The Weyl counter.
    pub d: u32,
    /// The xorshift words.
    pub v: [u32; 5],
    /// The Box–Muller values cached between calls.
    pub cache: BoxMullerCache,
}

impl XorwowState {
    /// `curand_init(seed, subsequence, offset, &state)`.
    pub fn new(seed: u64, subsequence: u64, offset: u64) -> Self {
        let mut s = Self::seeded(seed);
        s.skipahead_sequence(subsequence);
        s.skipahead(offset);
        s
    }

    /// The state `curand_init` builds from the seed before any jump.
    pub fn seeded(seed: u64) -> Self {
        let s0 = (seed as u32) ^ 0xaad2_6b49;
        let s1 = ((seed >> 32) as u32) ^ 0xf7dc_efdd;
        let t0 = 1_099_087_573u32.wrapping_mul(s0);
        let t1 = 2_591_861_531u32.wrapping_mul(s1);
        XorwowState {
            d: 6_615_241u32.wrapping_add(t1).wrapping_add(t0),
            v: [
                123_456_789u32.wrapping_add(t0),
                362_436_069 ^ t0,
                521_288_629u32.wrapping_add(t1),
                88_675_123 ^ t1,
                5_783_321u32.wrapping_add(t0),
            ],
            cache: BoxMullerCache::default(),
        }
    }

    /// `skipahead_sequence(n, &state)`: `n · 2^67` steps on (`d` is unchanged: the
    /// jump is a multiple of 2^32).
    pub fn skipahead_sequence(&mut self, n: u64) {
        self.v = jump(self.v, n, SUBSEQUENCE_LOG2);
    }
}

impl CurandState for XorwowState {
    type Raw = u32;

    #[inline]
    fn curand(&mut self) -> u32 {
        self.v = xorshift_step(self.v);
        self.d = self.d.wrapping_add(WEYL);
        self.v[4].wrapping_add(self.d)
    }

    /// Two outputs, 53 bits (`_curand_uniform_double_hq`).
    fn uniform_double(&mut self) -> f64 {
        let x = self.curand();
        let y = self.curand();
        dist::uniform_f64_hq(x, y)
    }

    box_muller_state_methods!();

    fn skipahead(&mut self, n: u64) {
        self.v = jump(self.v, n, 0);
        self.d = self.d.wrapping_add(WEYL.wrapping_mul(n as u32));
    }
}

/// Box–Muller pairs of two and four outputs: the trait's defaults.
impl BoxMullerSource for XorwowState {
    fn cache(&mut self) -> &mut BoxMullerCache {
        &mut self.cache
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_equals_stepping() {
        let mut base = XorwowState::new(0xdead_beef_0bad_f00d, 3, 0);
        let stream: Vec<u32> = (0..300).map(|_| base.curand()).collect();
        for off in [0u64, 1, 2, 5, 17, 64, 255] {
            let mut s = XorwowState::new(0xdead_beef_0bad_f00d, 3, off);
            assert_eq!(s.curand(), stream[off as usize], "offset {off}");
        }
    }

    #[test]
    fn subsequences_differ_and_compose() {
        let mut a = XorwowState::new(1, 0, 0);
        let mut b = XorwowState::new(1, 1, 0);
        assert_ne!(a.curand(), b.curand());
        let mut c = XorwowState::new(1, 2, 0);
        let mut d = XorwowState::new(1, 1, 0);
        d.skipahead_sequence(1);
        assert_eq!(c.curand(), d.curand());
    }
}
