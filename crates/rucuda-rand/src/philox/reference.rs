//! CPU reference of Philox4x32-10 as cuRAND's device API runs it.
//!
//! The block function is Salmon et al.'s Philox4x32 ("Parallel random numbers: as easy as
//! 1, 2, 3", SC'11): per round, two 32×32→64-bit products of the counter's even words
//! with the multipliers `0xD2511F53` and `0xCD9E8D57`, a word permutation, and the key
//! XORed in; the key is bumped by the Weyl constants `0x9E3779B9` (golden ratio) and
//! `0xBB67AE85` (√3 − 1) between rounds.
//!
//! cuRAND's state (what `curand_init(seed, subsequence, offset, &state)` builds):
//! the key is the seed (low word first), the 128-bit counter starts at zero with
//! `subsequence` added to its high 64 bits (words z, w) and `offset / 4` added to its
//! low 64 bits (words x, y), and `offset % 4` is the position inside the current block
//! of four outputs. The carry rules of cuRAND's counter increments are reproduced as they
//! are (including that the high-half increment does not carry out of word w).

use crate::distributions as dist;
use crate::reference::{BoxMullerCache, CurandState};
use crate::sampling::{box_muller_state_methods, BoxMullerSource};

/// Philox's first multiplier (applied to counter word 0).
pub const PHILOX_M0: u32 = 0xD251_1F53;
/// Philox's second multiplier (applied to counter word 2).
pub const PHILOX_M1: u32 = 0xCD9E_8D57;
/// Key increment of word 0 (the golden ratio's fraction).
pub const PHILOX_W0: u32 = 0x9E37_79B9;
/// Key increment of word 1 (√3 − 1).
pub const PHILOX_W1: u32 = 0xBB67_AE85;

#[inline]
fn mulhilo(a: u32, b: u32) -> (u32, u32) {
    let p = u64::from(a) * u64::from(b);
    ((p >> 32) as u32, p as u32)
}

#[inline]
fn round(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (hi0, lo0) = mulhilo(PHILOX_M0, ctr[0]);
    let (hi1, lo1) = mulhilo(PHILOX_M1, ctr[2]);
    [hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0]
}

/// The Philox4x32 block function with `rounds` rounds: four 32-bit outputs from a
/// 128-bit counter and a 64-bit key. Random123 calls it `philox4x32_R(R, ctr, key)`.
///
/// ```
/// use rucuda_rand::philox::reference::philox4x32;
/// // Random123's known answer for counter 0, key 0 (tests/kat_vectors).
/// assert_eq!(philox4x32(10, [0; 4], [0; 2]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
/// ```
pub fn philox4x32(rounds: u32, mut ctr: [u32; 4], mut key: [u32; 2]) -> [u32; 4] {
    for r in 0..rounds {
        if r > 0 {
            key[0] = key[0].wrapping_add(PHILOX_W0);
            key[1] = key[1].wrapping_add(PHILOX_W1);
        }
        ctr = round(ctr, key);
    }
    ctr
}

/// Philox4x32 with ten rounds, the variant cuRAND implements.
///
/// ```
/// use rucuda_rand::philox::reference::philox4x32_10;
/// assert_eq!(philox4x32_10([!0; 4], [!0; 2]), [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]);
/// ```
#[inline]
pub fn philox4x32_10(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    philox4x32(10, ctr, key)
}

/// One thread's `curandStatePhilox4_32_10_t`, on the CPU.
///
/// ```
/// use rucuda_rand::{philox::reference::Philox4x32_10State, reference::CurandState};
/// let mut a = Philox4x32_10State::new(42, 3, 0);
/// let first: Vec<u32> = (0..10).map(|_| a.curand()).collect();
/// // Starting 7 outputs further along is the same stream, 7 values later.
/// let mut b = Philox4x32_10State::new(42, 3, 7);
/// assert_eq!(b.curand(), first[7]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Philox4x32_10State {
    ctr: [u32; 4],
    key: [u32; 2],
    position: u32,
    output: [u32; 4],
    /// The Box–Muller values cached between calls (cuRAND's `boxmuller_*` fields).
    pub cache: BoxMullerCache,
}

impl Philox4x32_10State {
    /// `curand_init(seed, subsequence, offset, &state)`.
    pub fn new(seed: u64, subsequence: u64, offset: u64) -> Self {
        let mut s = Philox4x32_10State::from_parts([0; 4], [seed as u32, (seed >> 32) as u32], 0);
        s.skipahead_sequence(subsequence);
        s.skipahead(offset);
        s
    }

    /// A state from its counter, key and position in the block (0..4; taken modulo 4),
    /// with no Box–Muller value cached.
    pub fn from_parts(ctr: [u32; 4], key: [u32; 2], position: u32) -> Self {
        Philox4x32_10State {
            ctr,
            key,
            position: position & 3,
            output: philox4x32_10(ctr, key),
            cache: BoxMullerCache::default(),
        }
    }

    /// The 128-bit counter, least significant word first.
    pub fn counter(&self) -> [u32; 4] {
        self.ctr
    }

    /// The key (the seed, low word first).
    pub fn key(&self) -> [u32; 2] {
        self.key
    }

    /// Position (0..4) of the next output inside the current block.
    pub fn position(&self) -> u32 {
        self.position
    }

    /// The block of four outputs the counter points at now.
    #[inline]
    pub fn output(&self) -> [u32; 4] {
        self.output
    }

    /// cuRAND's `Philox_State_Incr(state)`: the 128-bit counter plus one.
    fn incr(&mut self) {
        for w in self.ctr.iter_mut() {
            *w = w.wrapping_add(1);
            if *w != 0 {
                break;
            }
        }
        self.output = philox4x32_10(self.ctr, self.key);
    }

    /// cuRAND's `Philox_State_Incr(state, n)`: adds `n` to the counter's low 64 bits,
    /// carrying into the high half as cuRAND does.
    fn incr_by(&mut self, n: u64) {
        let nlo = n as u32;
        let mut nhi = (n >> 32) as u32;
        self.ctr[0] = self.ctr[0].wrapping_add(nlo);
        if self.ctr[0] < nlo {
            nhi = nhi.wrapping_add(1);
        }
        self.ctr[1] = self.ctr[1].wrapping_add(nhi);
        if nhi > self.ctr[1] {
            self.ctr[2] = self.ctr[2].wrapping_add(1);
            if self.ctr[2] == 0 {
                self.ctr[3] = self.ctr[3].wrapping_add(1);
            }
        }
        self.output = philox4x32_10(self.ctr, self.key);
    }

    /// `skipahead_sequence(n, &state)`: moves `n` subsequences (2^66 outputs each) on.
    pub fn skipahead_sequence(&mut self, n: u64) {
        let nlo = n as u32;
        let mut nhi = (n >> 32) as u32;
        self.ctr[2] = self.ctr[2].wrapping_add(nlo);
        if self.ctr[2] < nlo {
            nhi = nhi.wrapping_add(1);
        }
        self.ctr[3] = self.ctr[3].wrapping_add(nhi);
        self.output = philox4x32_10(self.ctr, self.key);
    }

    /// `curand4(&state)`: the next four outputs at once (the same values as four calls to
    /// [`CurandState::curand`]).
    pub fn curand4(&mut self) -> [u32; 4] {
        let tmp = self.output();
        self.incr();
        let next = self.output();
        let p = self.position as usize;
        let mut r = [0u32; 4];
        for (i, slot) in r.iter_mut().enumerate() {
            let k = p + i;
            *slot = if k < 4 { tmp[k] } else { next[k - 4] };
        }
        r
    }
}

impl CurandState for Philox4x32_10State {
    type Raw = u32;

    fn curand(&mut self) -> u32 {
        let ret = self.output[self.position as usize & 3];
        self.position += 1;
        if self.position == 4 {
            self.incr();
            self.position = 0;
        }
        ret
    }

    // curand_uniform_double: the default, as Philox takes one 32-bit output for it (XORWOW
    // takes two).

    box_muller_state_methods!();

    /// `skipahead(n, &state)`: moves `n` outputs on.
    fn skipahead(&mut self, n: u64) {
        self.position += (n & 3) as u32;
        let mut blocks = n / 4;
        if self.position > 3 {
            blocks += 1;
            self.position -= 4;
        }
        self.incr_by(blocks);
    }
}

impl BoxMullerSource for Philox4x32_10State {
    fn cache(&mut self) -> &mut BoxMullerCache {
        &mut self.cache
    }
    /// `curand_normal_double` takes its four outputs with `curand4` (the same values as
    /// four `curand` calls, the trait's default, which `curand_normal` uses for its two).
    fn pair_double(&mut self) -> (f64, f64) {
        let [x0, x1, y0, y1] = self.curand4();
        dist::box_muller_double(x0, x1, y0, y1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known-answer vectors (`tests/kat_vectors` of the Random123 1.09+
    /// distribution by D. E. Shaw Research, the lines `philox4x32 7 ...` and
    /// `philox4x32 10 ...`): counter (4 words), key (2 words), expected output.
    type Kat = (u32, [u32; 4], [u32; 2], [u32; 4]);
    const KAT: [Kat; 6] = [
        (
            7,
            [0, 0, 0, 0],
            [0, 0],
            [0x5f6fb709, 0x0d893f64, 0x4f121f81, 0x4f730a48],
        ),
        (
            7,
            [!0, !0, !0, !0],
            [!0, !0],
            [0x5207ddc2, 0x45165e59, 0x4d8ee751, 0x8c52f662],
        ),
        (
            7,
            [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
            [0xa4093822, 0x299f31d0],
            [0x4dfccaba, 0x190a87f0, 0xc47362ba, 0xb6b5242a],
        ),
        (
            10,
            [0, 0, 0, 0],
            [0, 0],
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8],
        ),
        (
            10,
            [!0, !0, !0, !0],
            [!0, !0],
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
        ),
        (
            10,
            [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
            [0xa4093822, 0x299f31d0],
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
        ),
    ];

    #[test]
    fn random123_known_answers() {
        for (rounds, ctr, key, want) in KAT {
            assert_eq!(
                philox4x32(rounds, ctr, key),
                want,
                "R={rounds} ctr={ctr:x?}"
            );
        }
    }

    #[test]
    fn curand_init_zero_is_the_first_kat_block() {
        let mut s = Philox4x32_10State::new(0, 0, 0);
        let got: Vec<u32> = (0..4).map(|_| s.curand()).collect();
        assert_eq!(got, KAT[3].3);
    }

    #[test]
    fn offset_equals_stepping() {
        let mut base = Philox4x32_10State::new(0x1234_5678_9abc_def0, 5, 0);
        let stream: Vec<u32> = (0..64).map(|_| base.curand()).collect();
        for off in 0..40u64 {
            let mut s = Philox4x32_10State::new(0x1234_5678_9abc_def0, 5, off);
            for (i, want) in stream[off as usize..off as usize + 8].iter().enumerate() {
                assert_eq!(s.curand(), *want, "offset {off}, value {i}");
            }
        }
        // skipahead composes with a position inside a block.
        let mut s = Philox4x32_10State::new(0x1234_5678_9abc_def0, 5, 3);
        s.skipahead(6);
        assert_eq!(s.curand(), stream[9]);
    }

    #[test]
    fn curand4_matches_four_calls() {
        for off in 0..8 {
            let mut a = Philox4x32_10State::new(99, 1, off);
            let mut b = a.clone();
            for _ in 0..5 {
                let four = a.curand4();
                let ones = [b.curand(), b.curand(), b.curand(), b.curand()];
                assert_eq!(four, ones);
            }
        }
    }

    #[test]
    fn subsequence_is_the_counter_high_half() {
        let s = Philox4x32_10State::new(7, (3 << 32) | 5, 0);
        assert_eq!(s.counter(), [0, 0, 5, 3]);
        let s = Philox4x32_10State::new(7, 0, (9 << 2) | 2);
        assert_eq!((s.counter(), s.position()), ([9, 0, 0, 0], 2));
        // Carry from the low 64 bits into word z, as cuRAND does it.
        let mut s = Philox4x32_10State::from_parts([!0, !0, 0, 0], [7, 0], 0);
        s.skipahead(4);
        assert_eq!(s.counter(), [0, 0, 1, 0]);
    }
}
