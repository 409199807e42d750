//! The CPU side of every generator: one thread's cuRAND device-API state, and the whole
//! output array our kernels write, computed on the host.
//!
//! Each generator module has a `reference` submodule with a state type implementing
//! [`CurandState`]: `new(seed, subsequence, offset)` is `curand_init`, and the trait's
//! methods are `curand`, `curand_uniform`, `curand_normal`, ... with cuRAND's exact
//! transforms. Raw outputs and uniforms are bit-exact; transforms that go through
//! transcendental functions (normal, log-normal, Poisson) use the CPU's math library where
//! the GPU uses CUDA's, so they agree to a few units in the last place (see
//! [`crate::distributions`] for the bounds).
//!
//! [`fill`] lays a stream of states out into one array exactly as our fill kernels do (see
//! [`Layout`]), so a kernel's output can be checked element by element on the CPU.

use crate::distributions::{Distribution, RawWord};
use crate::math;

/// The operations cuRAND's device API offers on one thread's state.
///
/// ```
/// use rucuda_rand::{reference::CurandState, xorwow::reference::XorwowState};
/// let mut s = XorwowState::new(1234, 0, 0);
/// let u = s.uniform();
/// assert!(u > 0.0 && u <= 1.0);
/// ```
pub trait CurandState: Clone {
    /// What `curand(&state)` returns: `u32`, or `u64` for the 64-bit Sobol generators.
    type Raw: RawWord;

    /// `curand(&state)`: the next raw output.
    fn curand(&mut self) -> Self::Raw;
    /// `curand_uniform(&state)`: a float in (0, 1]. By default `_curand_uniform` of one
    /// output (MRG32k3a scales its own).
    fn uniform(&mut self) -> f32 {
        self.curand().uniform()
    }
    /// `curand_uniform_double(&state)`: a double in (0, 1]. By default
    /// `_curand_uniform_double` of one output, as for Philox and Sobol (XORWOW takes 53
    /// bits from two outputs, MRG32k3a scales its own).
    fn uniform_double(&mut self) -> f64 {
        self.curand().uniform_double()
    }
    /// `curand_normal(&state)`: a standard normal float.
    fn normal(&mut self) -> f32;
    /// `curand_normal_double(&state)`: a standard normal double.
    fn normal_double(&mut self) -> f64;
    /// `curand_log_normal(&state, mean, stddev)`. By default `expf` of
    /// `mean + stddev · curand_normal` (one fused multiply-add), as for Sobol (the
    /// Box–Muller generators cache the second log-normal of a pair instead).
    fn log_normal(&mut self, mean: f32, stddev: f32) -> f32 {
        math::expf(stddev.mul_add(self.normal(), mean))
    }
    /// `curand_log_normal_double(&state, mean, stddev)`, by default as
    /// [`log_normal`](Self::log_normal) in double.
    fn log_normal_double(&mut self, mean: f64, stddev: f64) -> f64 {
        stddev.mul_add(self.normal_double(), mean).exp()
    }
    /// `curand_poisson(&state, lambda)`.
    fn poisson(&mut self, lambda: f64) -> u32;
    /// `skipahead(n, &state)`: moves `n` raw outputs on (for the 32-bit Sobol generators,
    /// cuRAND takes `n` as a 32-bit count: the high bits are ignored).
    fn skipahead(&mut self, n: u64);

    /// Our raw 64-bit output: `curand` itself for the 64-bit generators; for the 32-bit
    /// ones, two consecutive outputs, the first in the low half (the bytes of the 32-bit
    /// stream read as little-endian 64-bit words).
    fn next_u64(&mut self) -> u64 {
        let lo: u64 = self.curand().into();
        if <Self::Raw as RawWord>::BITS == 64 {
            return lo;
        }
        let hi: u64 = self.curand().into();
        lo | (hi << 32)
    }
}

/// The Box–Muller values a state keeps between calls (cuRAND's `boxmuller_flag`,
/// `boxmuller_extra`, `boxmuller_flag_double`, `boxmuller_extra_double`).
///
/// `curand_normal` makes two values and returns the first; the next call returns the
/// cached second. `curand_log_normal` shares the single-precision slot with a different
/// flag, so switching between them drops a cached value, as in cuRAND.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BoxMullerCache {
    /// 0: nothing cached; [`BoxMullerCache::NORMAL`] or [`BoxMullerCache::LOG_NORMAL`].
    pub flag: u32,
    /// The cached single-precision value.
    pub extra: f32,
    /// 0, [`BoxMullerCache::NORMAL`] or [`BoxMullerCache::LOG_NORMAL`].
    pub flag_double: u32,
    /// The cached double-precision value.
    pub extra_double: f64,
}

impl BoxMullerCache {
    /// cuRAND's `EXTRA_FLAG_NORMAL`.
    pub const NORMAL: u32 = 1;
    /// cuRAND's `EXTRA_FLAG_LOG_NORMAL`.
    pub const LOG_NORMAL: u32 = 2;
}

/// Where each element of an output array comes from.
///
/// Our fill kernels run a fixed set of `states` generator states (one per thread); each
/// thread writes 16-byte chunks. With `c = 16 / size_of::<T>()` elements per chunk,
/// element `i` lies in chunk `i / c`, which belongs to state `(i / c) % states`; a state
/// writes its chunks in increasing order, so chunk `k` of state `s` holds that state's
/// outputs `k·c .. k·c + c` of this call. The last chunk may be short; a state always
/// consumes exactly the outputs it writes, so the next call continues every stream.
///
/// ```
/// use rucuda_rand::reference::Layout;
/// let l = Layout::new(3, 4); // 3 states, 4 elements per chunk (f32)
/// assert_eq!(l.source(0), (0, 0));
/// assert_eq!(l.source(5), (1, 1));
/// assert_eq!(l.source(13), (0, 5)); // chunk 3 is state 0's second chunk
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Number of generator states.
    pub states: usize,
    /// Elements per chunk.
    pub chunk: usize,
}

impl Layout {
    /// A layout of `states` states writing `chunk` elements at a time.
    pub fn new(states: usize, chunk: usize) -> Layout {
        Layout {
            states: states.max(1),
            chunk: chunk.max(1),
        }
    }

    /// The layout of element type `T`: 16-byte chunks.
    pub fn for_type<T>(states: usize) -> Layout {
        Layout::new(states, 16 / std::mem::size_of::<T>().clamp(1, 16))
    }

    /// `(state, position)`: which state writes element `i`, and which of its outputs in
    /// this call it is.
    pub fn source(&self, i: usize) -> (usize, usize) {
        let chunk = i / self.chunk;
        (
            chunk % self.states,
            (chunk / self.states) * self.chunk + i % self.chunk,
        )
    }

    /// How many outputs state `s` produces for an array of `n` elements.
    pub fn count(&self, s: usize, n: usize) -> usize {
        let full = n / self.chunk;
        let rem = n % self.chunk;
        let mut count = if s < full % self.states {
            (full / self.states + 1) * self.chunk
        } else {
            (full / self.states) * self.chunk
        };
        if rem > 0 && full % self.states == s {
            count += rem;
        }
        count
    }
}

/// Fills `out` from `states` as our fill kernel for `dist` does (layout: [`Layout`]),
/// advancing the states by what they produced.
///
/// ```
/// use rucuda_rand::{reference::{fill, CurandState}, distributions::Distribution};
/// use rucuda_rand::philox::reference::Philox4x32_10State;
/// let mut states: Vec<_> = (0..2).map(|i| Philox4x32_10State::new(7, i, 0)).collect();
/// let mut out = vec![0f32; 10];
/// fill(&mut states, &mut out, Distribution::Uniform);
/// let mut s0 = Philox4x32_10State::new(7, 0, 0);
/// assert_eq!(out[0..4], [s0.uniform(), s0.uniform(), s0.uniform(), s0.uniform()]);
/// ```
pub fn fill<S: CurandState, T: Element>(states: &mut [S], out: &mut [T], dist: Distribution) {
    if states.is_empty() {
        return;
    }
    let layout = Layout::for_type::<T>(states.len());
    for (c, chunk) in out.chunks_mut(layout.chunk).enumerate() {
        let s = &mut states[c % layout.states];
        for slot in chunk {
            *slot = T::draw(s, dist);
        }
    }
}

/// An element type our fill kernels write.
pub trait Element: Copy + Default + 'static {
    /// One value of `dist` from `state`, as the fill kernel computes it.
    fn draw<S: CurandState>(state: &mut S, dist: Distribution) -> Self;
}

impl Element for f32 {
    fn draw<S: CurandState>(s: &mut S, dist: Distribution) -> f32 {
        match dist {
            Distribution::Uniform => s.uniform(),
            Distribution::Normal { mean, stddev } => {
                (stddev as f32).mul_add(s.normal(), mean as f32)
            }
            Distribution::LogNormal { mean, stddev } => s.log_normal(mean as f32, stddev as f32),
            Distribution::Poisson { lambda } => s.poisson(lambda) as f32,
            Distribution::Raw => s.curand().into() as u32 as f32,
        }
    }
}

impl Element for f64 {
    fn draw<S: CurandState>(s: &mut S, dist: Distribution) -> f64 {
        match dist {
            Distribution::Uniform => s.uniform_double(),
            Distribution::Normal { mean, stddev } => stddev.mul_add(s.normal_double(), mean),
            Distribution::LogNormal { mean, stddev } => s.log_normal_double(mean, stddev),
            Distribution::Poisson { lambda } => f64::from(s.poisson(lambda)),
            Distribution::Raw => s.next_u64() as f64,
        }
    }
}

impl Element for u32 {
    fn draw<S: CurandState>(s: &mut S, dist: Distribution) -> u32 {
        match dist {
            Distribution::Poisson { lambda } => s.poisson(lambda),
            _ => s.curand().into() as u32,
        }
    }
}

impl Element for u64 {
    fn draw<S: CurandState>(s: &mut S, _dist: Distribution) -> u64 {
        s.next_u64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_counts_add_up_and_sources_are_consistent() {
        for states in [1usize, 2, 3, 7] {
            for chunk in [1usize, 2, 4] {
                let l = Layout::new(states, chunk);
                for n in 0..100 {
                    let total: usize = (0..states).map(|s| l.count(s, n)).sum();
                    assert_eq!(total, n);
                    let mut next = vec![0usize; states];
                    for i in 0..n {
                        let (s, p) = l.source(i);
                        assert!(p < l.count(s, n));
                        // Positions of a state increase along the array.
                        assert!(p >= next[s]);
                        next[s] = p + 1;
                    }
                }
            }
        }
    }
}
