//! CPU reference of MRG32k3a as cuRAND's device API runs it: L'Ecuyer's combined
//! multiple recursive generator ("Good parameters and implementations for combined
//! multiple recursive random number generators", Oper. Res. 47(1), 1999), two order-3
//! recurrences modulo primes just below 2^32, combined by subtraction; period ≈ 2^191.
//!
//! The combined output is an integer in [1, m1]; cuRAND scales it into a float or double
//! uniform with `2.3283065498378288e-10` (≈ 1/(m1 + 1)) and into a 32-bit integer with
//! `1.000000048662` (≈ 2^32/m1), in double precision.
//!
//! `curand_init(seed, subsequence, offset)`: all six words start at 12345; a nonzero seed
//! multiplies them (mod m) by its salted halves; then the state jumps
//! `subsequence · 2^76 + offset` steps (see [`super::jump`]).

use super::jump::{jump, A12, A13N, A21, A23N, M1, M2, SEQUENCE_LOG2, SUBSEQUENCE_LOG2};
use crate::distributions as dist;
use crate::reference::{BoxMullerCache, CurandState};
use crate::sampling::{box_muller_state_methods, BoxMullerSource};

/// cuRAND's `MRG32K3A_NORM`: scales the combined output into (0, 1].
pub const NORM: f64 = 2.328_306_549_837_829e-10;
/// cuRAND's `MRG32K3A_BITS_NORM`: scales the combined output into 32 bits.
pub const BITS_NORM: f64 = 1.000_000_048_662;

/// One thread's `curandStateMRG32k3a_t`, on the CPU.
///
/// ```
/// use rucuda_rand::{reference::CurandState, mrg32k3a::reference::Mrg32k3aState};
/// let mut a = Mrg32k3aState::new(9, 0, 0);
/// let u = a.uniform();
/// assert!(u > 0.0 && u <= 1.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Mrg32k3aState {
    /// First component, oldest word first (each below [`M1`]).
    pub s1: [u32; 3],
    /// Second component, oldest word first (each below [`M2`]).
    pub s2: [u32; 3],
    /// The Box–Muller values cached between calls.
    pub cache: BoxMullerCache,
}

impl Mrg32k3aState {
    /// `curand_init(seed, subsequence, offset, &state)`; cuRAND's for
    /// `subsequence < 2^51` (see [`super::jump::CURAND_SUBSEQUENCE_BITS`]).
    pub fn new(seed: u64, subsequence: u64, offset: u64) -> Self {
        let mut s = Self::seeded(seed);
        s.skipahead_subsequence(subsequence);
        s.skipahead(offset);
        s
    }

    /// The state `curand_init` builds from the seed before any jump.
    pub fn seeded(seed: u64) -> Self {
        let mut s1 = [12345u32; 3];
        let mut s2 = [12345u32; 3];
        if seed != 0 {
            let x1 = u64::from((seed as u32) ^ 0x5555_5555);
            let x2 = u64::from(((seed >> 32) as u32) ^ 0xAAAA_AAAA);
            let mm = |x: u64, y: u32, m: u64| ((x * u64::from(y)) % m) as u32;
            s1 = [mm(x1, s1[0], M1), mm(x2, s1[1], M1), mm(x1, s1[2], M1)];
            s2 = [mm(x2, s2[0], M2), mm(x1, s2[1], M2), mm(x2, s2[2], M2)];
        }
        Mrg32k3aState {
            s1,
            s2,
            cache: BoxMullerCache::default(),
        }
    }

    /// `skipahead_subsequence(n, &state)`: `n · 2^76` steps on. Equal to cuRAND's for
    /// `n < 2^51` only (see [`super::jump::CURAND_SUBSEQUENCE_BITS`]).
    pub fn skipahead_subsequence(&mut self, n: u64) {
        (self.s1, self.s2) = jump(self.s1, self.s2, n, SUBSEQUENCE_LOG2);
    }

    /// `skipahead_sequence(n, &state)`: `n · 2^127` steps on.
    pub fn skipahead_sequence(&mut self, n: u64) {
        (self.s1, self.s2) = jump(self.s1, self.s2, n, SEQUENCE_LOG2);
    }

    /// `curand_MRG32k3a(&state)`: one step; the combined output in [1, m1].
    #[inline]
    pub fn step(&mut self) -> u32 {
        let [a0, a1, a2] = self.s1.map(u64::from);
        let p1 = (A12 * a1 + A13N * (M1 - a0)) % M1;
        self.s1 = [a1 as u32, a2 as u32, p1 as u32];
        let [b0, b1, b2] = self.s2.map(u64::from);
        let p2 = (A21 * b2 + A23N * (M2 - b0)) % M2;
        self.s2 = [b1 as u32, b2 as u32, p2 as u32];
        if p1 <= p2 {
            (p1 + M1 - p2) as u32
        } else {
            (p1 - p2) as u32
        }
    }
}

impl CurandState for Mrg32k3aState {
    type Raw = u32;

    fn curand(&mut self) -> u32 {
        (f64::from(self.step()) * BITS_NORM) as u32
    }

    fn uniform(&mut self) -> f32 {
        (f64::from(self.step()) * NORM) as f32
    }

    fn uniform_double(&mut self) -> f64 {
        f64::from(self.step()) * NORM
    }

    box_muller_state_methods!();

    fn skipahead(&mut self, n: u64) {
        (self.s1, self.s2) = jump(self.s1, self.s2, n, 0);
    }
}

impl BoxMullerSource for Mrg32k3aState {
    fn cache(&mut self) -> &mut BoxMullerCache {
        &mut self.cache
    }
    /// `curand_box_muller_mrg`: from two float uniforms.
    fn pair(&mut self) -> (f32, f32) {
        let x = self.uniform();
        let y = self.uniform();
        dist::box_muller_from_uniforms(x, y)
    }
    /// `curand_box_muller_mrg_double`: from two double uniforms.
    fn pair_double(&mut self) -> (f64, f64) {
        let x = self.uniform_double();
        let y = self.uniform_double();
        dist::box_muller_double_from_uniforms(x, y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_equals_stepping() {
        let mut base = Mrg32k3aState::new(77, 2, 0);
        let stream: Vec<u32> = (0..200).map(|_| base.step()).collect();
        for off in [0u64, 1, 3, 100, 199] {
            let mut s = Mrg32k3aState::new(77, 2, off);
            assert_eq!(s.step(), stream[off as usize]);
        }
    }

    /// The GPU test's failing case (seed 0x3799e74b34d10136, subsequence
    /// 65587372366366835 ≥ 2^51, offset 783480251924): we jump exactly and give
    /// 2406082515 first (what our kernel gave); cuRAND's zero table entries gave it the
    /// all-zero state (0xFFFFFFFF). Below the limit (the same subsequence's low 51 bits)
    /// cuRAND's tables give 3768283287, 3890010629, 2438209909 (worked out from
    /// `curand_mrg32k3a.h`'s tables and `curand_MRG32k3a`, off line).
    #[test]
    fn subsequence_limit_case() {
        let (seed, sub, off) = (
            0x3799_e74b_34d1_0136,
            65_587_372_366_366_835,
            783_480_251_924,
        );
        assert!(sub >= 1u64 << super::super::jump::CURAND_SUBSEQUENCE_BITS);
        let mut s = Mrg32k3aState::new(seed, sub, off);
        assert_eq!(s.curand(), 2_406_082_515);
        let low = sub & ((1 << super::super::jump::CURAND_SUBSEQUENCE_BITS) - 1);
        let mut s = Mrg32k3aState::new(seed, low, off);
        let got: Vec<u32> = (0..3).map(|_| s.curand()).collect();
        assert_eq!(got, [3_768_283_287, 3_890_010_629, 2_438_209_909]);
        // An all-zero state outputs m1, which curand saturates to 0xFFFFFFFF.
        let mut z = Mrg32k3aState::seeded(0);
        (z.s1, z.s2) = ([0; 3], [0; 3]);
        assert_eq!(z.curand(), u32::MAX);
    }

    #[test]
    fn seed_zero_keeps_12345() {
        let s = Mrg32k3aState::seeded(0);
        assert_eq!((s.s1, s.s2), ([12345; 3], [12345; 3]));
    }

    #[test]
    fn outputs_in_range() {
        let mut s = Mrg32k3aState::new(1, 0, 0);
        for _ in 0..10_000 {
            let r = s.step();
            assert!(r >= 1 && u64::from(r) <= M1);
        }
    }
}
