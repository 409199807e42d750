//! CPU reference of cuRAND's Sobol generators (device API): one dimension per state.
//!
//! The point with index `i` is `c ⊕ ⨁_k [bit k of gray(i)] V_k` where `gray(i) = i ⊕ (i >> 1)`,
//! `V` are the dimension's direction vectors and `c` the scramble constant (0 when not
//! scrambled). `curand` returns the current point and moves to the next by flipping the
//! one direction vector where the Gray code changes: `V[lowest zero bit of i]` (the last
//! vector when `i` is all ones). `curand_init(vectors, [c,] offset)` starts at `i = offset`.
//!
//! Scrambled and plain generators differ only in `c` and in which direction vectors they
//! are given (cuRAND's scrambled sets are its own randomized tables; see
//! [`super::scramble`] for ours).

use crate::distributions::RawWord;
use crate::reference::CurandState;

macro_rules! sobol_state {
    ($(#[$doc:meta])* $name:ident, $t:ty, $bits:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name {
            /// Index of the next point.
            pub i: $t,
            /// The next point.
            pub x: $t,
            /// The scramble constant (0: not scrambled).
            pub c: $t,
            /// The dimension's direction vectors.
            pub v: [$t; $bits],
        }

        impl $name {
            /// `curand_init(direction_vectors, offset, &state)`.
            pub fn new(v: [$t; $bits], offset: $t) -> Self {
                Self::scrambled(v, 0, offset)
            }

            /// `curand_init(direction_vectors, scramble_c, offset, &state)`.
            pub fn scrambled(v: [$t; $bits], c: $t, offset: $t) -> Self {
                let mut s = $name { i: 0, x: c, c, v };
                s.skip(offset);
                s
            }

            /// The point with index `i`, computed directly.
            pub fn point(&self, i: $t) -> $t {
                let mut g = i ^ (i >> 1);
                let mut x = self.c;
                while g != 0 {
                    let k = g.trailing_zeros() as usize;
                    g &= g - 1;
                    x ^= self.v[k];
                }
                x
            }

            fn skip(&mut self, n: $t) {
                self.i = self.i.wrapping_add(n);
                self.x = self.point(self.i);
            }

            /// `curand(&state)` in this word size.
            #[inline]
            pub fn next_word(&mut self) -> $t {
                let res = self.x;
                let k = (!self.i).trailing_zeros().min($bits - 1) as usize;
                self.x ^= self.v[k];
                self.i = self.i.wrapping_add(1);
                res
            }
        }

        /// Every distribution from one point ([`RawWord`]'s transforms); uniforms and
        /// log-normals are the trait's defaults.
        impl CurandState for $name {
            type Raw = $t;

            fn curand(&mut self) -> $t {
                self.next_word()
            }
            fn normal(&mut self) -> f32 {
                self.next_word().normal_icdf()
            }
            fn normal_double(&mut self) -> f64 {
                self.next_word().normal_icdf_double()
            }
            fn poisson(&mut self, lambda: f64) -> u32 {
                self.next_word().quasi_poisson(lambda)
            }
            /// cuRAND's Sobol `skipahead` takes a count of the word's size (Sobol32
            /// ignores the high bits of `n`).
            fn skipahead(&mut self, n: u64) {
                self.skip(n as $t);
            }
        }
    };
}

sobol_state!(
    /// One thread's `curandStateSobol32_t` / `curandStateScrambledSobol32_t`.
    ///
    /// ```
    /// use rucuda_rand::{reference::CurandState, sobol::{direction, reference::Sobol32State}};
    /// let mut s = Sobol32State::new(direction::direction_vectors_32(0)?, 0);
    /// // Dimension 0 is the van der Corput sequence in Gray-code order.
    /// assert_eq!([s.curand(), s.curand(), s.curand(), s.curand()], [0, 1 << 31, 3 << 30, 1 << 30]);
    /// # Ok::<(), rucuda_rand::Error>(())
    /// ```
    Sobol32State, u32, 32
);
sobol_state!(
    /// One thread's `curandStateSobol64_t` / `curandStateScrambledSobol64_t`.
    Sobol64State, u64, 64
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sobol::direction::{direction_vectors_32, direction_vectors_64};

    #[test]
    fn stepping_matches_direct_points() {
        for dim in [0usize, 1, 7, 1000] {
            let v = direction_vectors_32(dim).unwrap();
            let mut s = Sobol32State::scrambled(v, 0x1234_5678, 5);
            for i in 5..2000u32 {
                assert_eq!(s.curand(), s.point(i), "dimension {dim}, index {i}");
            }
            let v = direction_vectors_64(dim).unwrap();
            let mut s = Sobol64State::new(v, 1 << 40);
            for i in 0..100u64 {
                assert_eq!(s.curand(), s.point((1 << 40) + i));
            }
        }
    }

    #[test]
    fn first_points_are_stratified() {
        // The first 2^k points of any dimension hit each of 2^k equal intervals once.
        for dim in [1usize, 2, 3, 50, 20_000] {
            let v = direction_vectors_32(dim).unwrap();
            let mut s = Sobol32State::new(v, 0);
            let mut seen = [false; 256];
            for _ in 0..256 {
                let bin = (s.curand() >> 24) as usize;
                assert!(!seen[bin], "dimension {dim}");
                seen[bin] = true;
            }
        }
    }

    #[test]
    fn all_ones_index_wraps_to_the_last_vector() {
        let v = direction_vectors_32(3).unwrap();
        let mut s = Sobol32State::new(v, u32::MAX);
        let x = s.curand();
        assert_eq!(x, s.point(u32::MAX));
        assert_eq!(s.i, 0);
        assert_eq!(s.x, x ^ v[31]);
    }
}
