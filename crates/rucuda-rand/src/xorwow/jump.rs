//! Skip-ahead for XORWOW: the xorshift part of one step is a linear map of the 160-bit
//! state over GF(2), so jumping `n` steps is applying the map's `n`-th power. We compute
//! the powers `M^(2^k)` by repeated squaring (once, lazily) and apply one per set bit of
//! the jump. The Weyl counter `d` moves by `362437 · n` (mod 2^32) separately.

use std::sync::OnceLock;

/// Bits in XORWOW's xorshift state (five 32-bit words).
pub const STATE_BITS: usize = 160;

/// cuRAND spaces XORWOW subsequences 2^67 steps apart.
pub const SUBSEQUENCE_LOG2: u32 = 67;

/// Number of precomputed powers: `M^(2^k)` for `k < POWERS`, enough for an offset below
/// 2^64 and a subsequence below 2^64 (2^67 · 2^64 = 2^131).
pub const POWERS: usize = 64 + SUBSEQUENCE_LOG2 as usize;

/// A linear map of the 160-bit state: row `i` is the image of state bit `i` (bit `i % 32`
/// of word `i / 32`).
///
/// ```
/// use rucuda_rand::xorwow::jump::Gf2Matrix;
/// let m = Gf2Matrix::step();
/// let v = [1, 2, 3, 4, 5];
/// assert_eq!(m.then(&m).apply(v), m.apply(m.apply(v)));
/// assert_eq!(Gf2Matrix::identity().apply(v), v);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Gf2Matrix {
    rows: Box<[[u32; 5]; STATE_BITS]>,
}

impl std::fmt::Debug for Gf2Matrix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Gf2Matrix {{ row0: {:08x?}, .. }}", self.rows[0])
    }
}

/// One xorshift step of XORWOW's five words (the Weyl counter aside).
#[inline]
pub fn xorshift_step(v: [u32; 5]) -> [u32; 5] {
    let t = v[0] ^ (v[0] >> 2);
    [
        v[1],
        v[2],
        v[3],
        v[4],
        (v[4] ^ (v[4] << 4)) ^ (t ^ (t << 1)),
    ]
}

impl Gf2Matrix {
    /// The identity map.
    pub fn identity() -> Gf2Matrix {
        let mut rows = Box::new([[0u32; 5]; STATE_BITS]);
        for (i, row) in rows.iter_mut().enumerate() {
            row[i / 32] = 1 << (i % 32);
        }
        Gf2Matrix { rows }
    }

    /// The map of one step, found by stepping each basis vector.
    pub fn step() -> Gf2Matrix {
        let mut rows = Box::new([[0u32; 5]; STATE_BITS]);
        for (i, row) in rows.iter_mut().enumerate() {
            let mut e = [0u32; 5];
            e[i / 32] = 1 << (i % 32);
            *row = xorshift_step(e);
        }
        Gf2Matrix { rows }
    }

    /// The map applied to a state.
    #[inline]
    pub fn apply(&self, v: [u32; 5]) -> [u32; 5] {
        let mut out = [0u32; 5];
        for (w, &word) in v.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let row = &self.rows[w * 32 + b];
                for k in 0..5 {
                    out[k] ^= row[k];
                }
            }
        }
        out
    }

    /// `self` followed by `next`.
    pub fn then(&self, next: &Gf2Matrix) -> Gf2Matrix {
        let mut rows = Box::new([[0u32; 5]; STATE_BITS]);
        for (dst, src) in rows.iter_mut().zip(self.rows.iter()) {
            *dst = next.apply(*src);
        }
        Gf2Matrix { rows }
    }

    /// The rows as 800 words, row-major: the layout our init kernel reads (word `k` of
    /// row `i` at `5·i + k`).
    pub fn words(&self) -> Vec<u32> {
        self.rows.iter().flat_map(|r| r.iter().copied()).collect()
    }
}

/// `M^(2^k)` for `k < POWERS`, computed once.
pub fn powers() -> &'static [Gf2Matrix] {
    static POWERS_OF_STEP: OnceLock<Vec<Gf2Matrix>> = OnceLock::new();
    POWERS_OF_STEP.get_or_init(|| {
        let mut out = Vec::with_capacity(POWERS);
        let mut m = Gf2Matrix::step();
        for _ in 0..POWERS {
            let sq = m.then(&m);
            out.push(m);
            m = sq;
        }
        out
    })
}

/// Applies `M^(n · 2^shift)` to `v` (`shift` is 0 for an offset, 67 for subsequences).
/// Bits of the exponent past the table wrap around nothing: they are ignored, which
/// cannot happen for `shift ≤ 67` and a 64-bit `n`.
pub fn jump(mut v: [u32; 5], n: u64, shift: u32) -> [u32; 5] {
    let table = powers();
    let mut bits = n;
    while bits != 0 {
        let b = bits.trailing_zeros() as usize + shift as usize;
        bits &= bits - 1;
        if let Some(m) = table.get(b) {
            v = m.apply(v);
        }
    }
    v
}

/// The whole table as one word array for the device: matrix `k` (`M^(2^k)`) at
/// `800·k`, laid out as [`Gf2Matrix::words`].
pub fn device_table() -> Vec<u32> {
    powers().iter().flat_map(Gf2Matrix::words).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_match_stepping() {
        let v0 = [
            0x1234_5678,
            0x9abc_def0,
            0x0f0f_0f0f,
            0xdead_beef,
            0x0bad_f00d,
        ];
        let mut v = v0;
        for n in 1..=300u64 {
            v = xorshift_step(v);
            assert_eq!(jump(v0, n, 0), v, "n = {n}");
        }
    }

    #[test]
    fn jumps_compose() {
        let v0 = [1, 2, 3, 4, 5];
        let a = jump(jump(v0, 12345, 0), 67890, 0);
        assert_eq!(a, jump(v0, 12345 + 67890, 0));
        let b = jump(jump(v0, 3, SUBSEQUENCE_LOG2), 5, SUBSEQUENCE_LOG2);
        assert_eq!(b, jump(v0, 8, SUBSEQUENCE_LOG2));
        // 2^67 = 2^3 · 2^64.
        assert_eq!(jump(v0, 1, SUBSEQUENCE_LOG2), jump(v0, 8, 64));
    }
}
