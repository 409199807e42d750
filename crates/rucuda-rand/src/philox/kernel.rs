//! [`Philox4x32_10`]: the generator on the GPU.

use rucuda_driver::{Context, DeviceBuffer, Stream};

use super::reference::Philox4x32_10State;
use crate::error::Result;
use crate::kernels::Family;
use crate::pseudo::{cache_from_words, GeneratorOptions, PseudoCore, STATE_WORDS};
use crate::pseudo_macros::impl_pseudo_generator;
use crate::seed::Seeds;

/// Philox4x32-10 on the GPU (cuRAND's `CURAND_RNG_PSEUDO_PHILOX4_32_10`; PyCUDA offers no
/// Philox class, so this follows its XORWOW one). State `i` runs the stream of
/// `curand_init(seed_i, subsequence_i, offset_i)`; see [`GeneratorOptions`].
///
/// ```no_run
/// use rucuda_rand::{Philox4x32_10, RandomGenerator};
/// use rucuda_driver::{Device, DeviceBuffer, Stream};
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::null(&ctx);
/// let mut g = Philox4x32_10::new(&ctx, 42)?;
/// let mut u = DeviceBuffer::<f32>::uninit(&ctx, 1 << 24)?;
/// g.fill_uniform(&mut u, &stream)?;
/// g.skip_ahead(1000, &stream)?;
/// # Ok::<(), rucuda_rand::Error>(())
/// ```
pub struct Philox4x32_10 {
    core: PseudoCore,
}

impl_pseudo_generator!(Philox4x32_10);

impl Philox4x32_10 {
    /// The default number of states, all seeded with `seed`, state `i` on subsequence `i`.
    pub fn new(ctx: &Context, seed: u64) -> Result<Philox4x32_10> {
        Self::with_options(
            ctx,
            &GeneratorOptions {
                seeds: Seeds::Same(seed),
                ..GeneratorOptions::default()
            },
        )
    }

    /// States initialised as `options` says.
    pub fn with_options(ctx: &Context, options: &GeneratorOptions) -> Result<Philox4x32_10> {
        Ok(Philox4x32_10 {
            core: PseudoCore::new(ctx, "Philox4x32-10", Family::Philox, None, options)?,
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

    /// `skipahead_sequence(n)` on every state (PyCUDA's `call_skip_ahead_sequence`).
    pub fn skip_ahead_sequence(&mut self, n: u64, stream: &Stream) -> Result<()> {
        self.core.skip(1, n, None, stream)
    }

    /// `skipahead_sequence(counts[i])` on state `i`.
    pub fn skip_ahead_sequence_array(
        &mut self,
        counts: &DeviceBuffer<u64>,
        stream: &Stream,
    ) -> Result<()> {
        self.core.skip(1, 0, Some(counts), stream)
    }

    /// The states, copied back as CPU references that continue the same streams.
    pub fn to_reference(&self) -> Result<Vec<Philox4x32_10State>> {
        let words = self.core.state_words()?;
        Ok(words
            .chunks_exact(STATE_WORDS)
            .map(|w| {
                let mut s =
                    Philox4x32_10State::from_parts([w[0], w[1], w[2], w[3]], [w[4], w[5]], w[9]);
                s.cache = cache_from_words(w);
                s
            })
            .collect())
    }
}
