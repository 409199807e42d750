//! [`Mrg32k3a`]: the generator on the GPU.

use rucuda_driver::{Context, DeviceBuffer, Stream};

use super::reference::Mrg32k3aState;
use crate::error::Result;
use crate::kernels::Family;
use crate::pseudo::{cache_from_words, GeneratorOptions, PseudoCore, STATE_WORDS};
use crate::pseudo_macros::impl_pseudo_generator;
use crate::seed::Seeds;

/// MRG32k3a on the GPU: PyCUDA's `MRG32k3aRandomNumberGenerator`. State `i` runs the
/// stream of `curand_init(seed_i, subsequence_i, offset_i)`; initialisation jumps with
/// 3×3 modular matrix powers computed by this crate ([`super::jump`]).
///
/// ```no_run
/// use rucuda_rand::{Mrg32k3a, RandomGenerator};
/// use rucuda_driver::{Device, Stream};
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::null(&ctx);
/// let mut g = Mrg32k3a::new(&ctx, 5)?;
/// let counts = g.gen_poisson::<u32>(&[4096], 3.5, &stream)?;
/// # let _ = counts;
/// # Ok::<(), rucuda_rand::Error>(())
/// ```
pub struct Mrg32k3a {
    core: PseudoCore,
}

impl_pseudo_generator!(Mrg32k3a);

impl Mrg32k3a {
    /// The default number of states, all seeded with `seed`, state `i` on subsequence `i`.
    pub fn new(ctx: &Context, seed: u64) -> Result<Mrg32k3a> {
        Self::with_options(
            ctx,
            &GeneratorOptions {
                seeds: Seeds::Same(seed),
                ..GeneratorOptions::default()
            },
        )
    }

    /// States initialised as `options` says.
    pub fn with_options(ctx: &Context, options: &GeneratorOptions) -> Result<Mrg32k3a> {
        Ok(Mrg32k3a {
            core: PseudoCore::new(
                ctx,
                "MRG32k3a",
                Family::Mrg32k3a,
                Some(super::jump::device_table()),
                options,
            )?,
        })
    }

    /// `skipahead(n)` on every state (PyCUDA's `call_skip_ahead`).
    pub fn skip_ahead(&mut self, n: u64, stream: &Stream) -> Result<()> {
        self.core.skip(0, n, None, stream)
    }

    /// `skipahead(counts[i])` on state `i` (PyCUDA's `call_skip_ahead_array`).
    pub fn skip_ahead_array(&mut self, counts: &DeviceBuffer<u64>, stream: &Stream) -> Result<()> {
        self.core.skip(0, 0, Some(counts), stream)
    }

    /// `skipahead_subsequence(n)`: `n · 2^76` steps (PyCUDA's
    /// `call_skip_ahead_subsequence`).
    pub fn skip_ahead_subsequence(&mut self, n: u64, stream: &Stream) -> Result<()> {
        self.core.skip(1, n, None, stream)
    }

    /// `skipahead_subsequence(counts[i])` on state `i`.
    pub fn skip_ahead_subsequence_array(
        &mut self,
        counts: &DeviceBuffer<u64>,
        stream: &Stream,
    ) -> Result<()> {
        self.core.skip(1, 0, Some(counts), stream)
    }

    /// `skipahead_sequence(n)`: `n · 2^127` steps (PyCUDA's `call_skip_ahead_sequence`).
    pub fn skip_ahead_sequence(&mut self, n: u64, stream: &Stream) -> Result<()> {
        self.core.skip(2, n, None, stream)
    }

    /// `skipahead_sequence(counts[i])` on state `i`.
    pub fn skip_ahead_sequence_array(
        &mut self,
        counts: &DeviceBuffer<u64>,
        stream: &Stream,
    ) -> Result<()> {
        self.core.skip(2, 0, Some(counts), stream)
    }

    /// The states, copied back as CPU references that continue the same streams.
    pub fn to_reference(&self) -> Result<Vec<Mrg32k3aState>> {
        let words = self.core.state_words()?;
        Ok(words
            .chunks_exact(STATE_WORDS)
            .map(|w| Mrg32k3aState {
                s1: [w[0], w[1], w[2]],
                s2: [w[3], w[4], w[5]],
                cache: cache_from_words(w),
            })
            .collect())
    }
}
