//! Our scrambled Sobol tables: random linear (Matoušek) scrambling of the Joe–Kuo
//! direction vectors, and random digital shifts as scramble constants.
//!
//! cuRAND's `CURAND_SCRAMBLED_DIRECTION_VECTORS_*_JOEKUO6` and its scramble constants are
//! tables of random numbers inside libcurand; we do not ship them. Ours are drawn
//! deterministically from a 64-bit seed with Philox4x32-10, so a scrambled generator is
//! reproducible from `(seed, dimension)`. A generator can also be built from any direction
//! vectors and constants (for example the ones libcurand returns, for exactly cuRAND's
//! scrambled streams): see the `from_tables` constructors.
//!
//! The linear scramble multiplies each direction vector, as a column of bits with the most
//! significant bit first, by a random lower-triangular matrix with a unit diagonal: output
//! bit `p` is bit `p` of the input XOR a random subset of the more significant input
//! bits. Such a matrix is invertible, so the scrambled points keep the Sobol net
//! properties.

use super::direction::{direction_vectors_32, direction_vectors_64};
use crate::error::Result;
use crate::philox::reference::philox4x32_10;

/// Counter word 3 tags the purpose of a draw, so the streams never overlap.
const TAG_MATRIX: u32 = 0x5c4a_0001;
const TAG_SHIFT: u32 = 0x5c4a_0002;

fn random_u64(seed: u64, tag: u32, dim: usize, j: u32) -> u64 {
    let key = [seed as u32, (seed >> 32) as u32];
    let o = philox4x32_10([j, dim as u32, (dim >> 32) as u32, tag], key);
    u64::from(o[0]) | (u64::from(o[1]) << 32)
}

macro_rules! scramble_fns {
    ($vec_fn:ident, $shift_fn:ident, $one:ident, $t:ty, $bits:expr, $dv:ident) => {
        /// One dimension's direction vectors, linearly scrambled with matrices drawn from
        /// `seed`.
        pub fn $one(dim: usize, seed: u64) -> Result<[$t; $bits]> {
            let v = $dv(dim)?;
            // Row p (p = 0 the most significant output bit): the input bits that feed
            // output bit p.
            let mut rows = [0 as $t; $bits];
            for (p, row) in rows.iter_mut().enumerate() {
                let own: $t = 1 << ($bits - 1 - p);
                // Bits more significant than p.
                let above: $t = !((own << 1).wrapping_sub(1)) & !0;
                let above = if p == 0 { 0 } else { above };
                *row = ((random_u64(seed, TAG_MATRIX, dim, p as u32) as $t) & above) | own;
            }
            let mut out = [0 as $t; $bits];
            for (o, x) in out.iter_mut().zip(v.iter()) {
                let mut y: $t = 0;
                for (p, row) in rows.iter().enumerate() {
                    if (row & x).count_ones() % 2 == 1 {
                        y |= 1 << ($bits - 1 - p);
                    }
                }
                *o = y;
            }
            Ok(out)
        }

        /// Scrambled direction vectors of dimensions `0..count`, concatenated.
        pub fn $vec_fn(count: usize, seed: u64) -> Result<Vec<$t>> {
            let mut out = Vec::with_capacity(count * $bits);
            for d in 0..count {
                out.extend_from_slice(&$one(d, seed)?);
            }
            Ok(out)
        }

        /// Scramble constants (random digital shifts) of dimensions `0..count`.
        pub fn $shift_fn(count: usize, seed: u64) -> Vec<$t> {
            (0..count)
                .map(|d| random_u64(seed, TAG_SHIFT, d, 0) as $t)
                .collect()
        }
    };
}

scramble_fns!(
    scrambled_direction_vectors_32,
    scramble_constants_32,
    scrambled_dimension_32,
    u32,
    32,
    direction_vectors_32
);
scramble_fns!(
    scrambled_direction_vectors_64,
    scramble_constants_64,
    scrambled_dimension_64,
    u64,
    64,
    direction_vectors_64
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::CurandState;
    use crate::sobol::reference::Sobol32State;

    #[test]
    fn scrambled_points_stay_stratified() {
        for dim in [0usize, 1, 9, 4000] {
            let v = scrambled_dimension_32(dim, 42).unwrap();
            assert_ne!(v, direction_vectors_32(dim).unwrap());
            let c = scramble_constants_32(dim + 1, 42)[dim];
            let mut s = Sobol32State::scrambled(v, c, 0);
            let mut seen = [false; 1024];
            for _ in 0..1024 {
                let bin = (s.curand() >> 22) as usize;
                assert!(!seen[bin], "dimension {dim}");
                seen[bin] = true;
            }
        }
    }

    #[test]
    fn deterministic_in_the_seed() {
        assert_eq!(
            scrambled_direction_vectors_64(3, 7).unwrap(),
            scrambled_direction_vectors_64(3, 7).unwrap()
        );
        assert_ne!(scramble_constants_64(3, 7), scramble_constants_64(3, 8));
    }
}
