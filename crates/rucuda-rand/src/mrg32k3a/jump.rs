//! Skip-ahead for MRG32k3a: each of the two components is a linear recurrence of order
//! 3 modulo its prime, i.e. `s ← A s (mod m)` with a 3×3 companion matrix, so a jump of
//! `n` steps is `A^n s`. We compute `A^(2^k) mod m` by repeated squaring (once, lazily)
//! and multiply in one per set bit of the jump.

use std::sync::OnceLock;

/// First component's modulus, 2^32 − 209.
pub const M1: u64 = 4_294_967_087;
/// Second component's modulus, 2^32 − 22853.
pub const M2: u64 = 4_294_944_443;
/// First component: `s1[n] = A12·s1[n−2] − A13N·s1[n−3] (mod M1)`.
pub const A12: u64 = 1_403_580;
/// See [`A12`].
pub const A13N: u64 = 810_728;
/// Second component: `s2[n] = A21·s2[n−1] − A23N·s2[n−3] (mod M2)`.
pub const A21: u64 = 527_612;
/// See [`A21`].
pub const A23N: u64 = 1_370_589;

/// cuRAND spaces MRG32k3a subsequences 2^76 steps apart (`skipahead_subsequence`).
pub const SUBSEQUENCE_LOG2: u32 = 76;
/// ... and sequences 2^127 steps apart (`skipahead_sequence`).
pub const SEQUENCE_LOG2: u32 = 127;
/// Number of precomputed powers: `A^(2^k)` for `k < POWERS` covers a sequence jump
/// of up to 2^64 sequences.
pub const POWERS: usize = 64 + SEQUENCE_LOG2 as usize;

/// A 3×3 matrix of residues modulo `m` acting on a column vector (`s' = A s`).
///
/// ```
/// use rucuda_rand::mrg32k3a::jump::{Mat3, M1};
/// let a = Mat3::component1();
/// let s = [1, 2, 3];
/// // One step: (s1, s2, A12·s1 − A13N·s0).
/// assert_eq!(a.apply(s, M1), [2, 3, (1_403_580 * 2 + M1 - 810_728) % M1]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mat3(pub [[u64; 3]; 3]);

#[inline]
fn mulmod(a: u64, b: u64, m: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) % u128::from(m)) as u64
}

impl Mat3 {
    /// The identity.
    pub const IDENTITY: Mat3 = Mat3([[1, 0, 0], [0, 1, 0], [0, 0, 1]]);

    /// The first component's companion matrix (mod [`M1`]).
    pub fn component1() -> Mat3 {
        Mat3([[0, 1, 0], [0, 0, 1], [M1 - A13N, A12, 0]])
    }

    /// The second component's companion matrix (mod [`M2`]).
    pub fn component2() -> Mat3 {
        Mat3([[0, 1, 0], [0, 0, 1], [M2 - A23N, 0, A21]])
    }

    /// `self · v (mod m)`.
    pub fn apply(&self, v: [u64; 3], m: u64) -> [u64; 3] {
        let mut out = [0u64; 3];
        for (i, row) in self.0.iter().enumerate() {
            let mut acc = 0u64;
            for (a, x) in row.iter().zip(v.iter()) {
                acc = (acc + mulmod(*a, *x, m)) % m;
            }
            out[i] = acc;
        }
        out
    }

    /// `self · other (mod m)`.
    pub fn mul(&self, other: &Mat3, m: u64) -> Mat3 {
        let mut out = [[0u64; 3]; 3];
        for (i, row) in out.iter_mut().enumerate() {
            for (j, cell) in row.iter_mut().enumerate() {
                let mut acc = 0u64;
                for k in 0..3 {
                    acc = (acc + mulmod(self.0[i][k], other.0[k][j], m)) % m;
                }
                *cell = acc;
            }
        }
        Mat3(out)
    }
}

/// `(A1^(2^k) mod M1, A2^(2^k) mod M2)` for `k < POWERS`, computed once.
pub fn powers() -> &'static [(Mat3, Mat3)] {
    static TABLE: OnceLock<Vec<(Mat3, Mat3)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut out = Vec::with_capacity(POWERS);
        let (mut a, mut b) = (Mat3::component1(), Mat3::component2());
        for _ in 0..POWERS {
            out.push((a, b));
            a = a.mul(&a, M1);
            b = b.mul(&b, M2);
        }
        out
    })
}

/// Applies `A^(n · 2^shift)` to both components (`shift`: 0 for an offset, 76 for
/// subsequences, 127 for sequences).
pub fn jump(s1: [u32; 3], s2: [u32; 3], n: u64, shift: u32) -> ([u32; 3], [u32; 3]) {
    let mut v1 = s1.map(u64::from);
    let mut v2 = s2.map(u64::from);
    let table = powers();
    let mut bits = n;
    while bits != 0 {
        let b = bits.trailing_zeros() as usize + shift as usize;
        bits &= bits - 1;
        if let Some((a, c)) = table.get(b) {
            v1 = a.apply(v1, M1);
            v2 = c.apply(v2, M2);
        }
    }
    (v1.map(|x| x as u32), v2.map(|x| x as u32))
}

/// The table for the device: for each `k < POWERS`, the 9 entries of `A1^(2^k)` then the
/// 9 of `A2^(2^k)`, row-major, as 32-bit words (18 words per `k`).
pub fn device_table() -> Vec<u32> {
    powers()
        .iter()
        .flat_map(|(a, b)| {
            a.0.iter()
                .chain(b.0.iter())
                .flat_map(|r| r.iter().map(|&x| x as u32))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squares_match_stepping() {
        let (a, _) = powers()[0];
        let mut v = [12345u64, 23456, 34567];
        let v0 = v;
        for _ in 0..8 {
            v = a.apply(v, M1);
        }
        assert_eq!(powers()[3].0.apply(v0, M1), v);
    }

    #[test]
    fn jumps_compose() {
        let s = ([1u32, 2, 3], [4u32, 5, 6]);
        let (a1, a2) = jump(s.0, s.1, 1000, 0);
        let (b1, b2) = jump(a1, a2, 234, 0);
        assert_eq!((b1, b2), jump(s.0, s.1, 1234, 0));
        assert_eq!(
            jump(s.0, s.1, 1, SUBSEQUENCE_LOG2),
            jump(s.0, s.1, 1 << 12, 64)
        );
    }
}
