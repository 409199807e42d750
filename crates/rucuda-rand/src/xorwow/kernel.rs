//! [`Xorwow`]: the generator on the GPU.

use rucuda_driver::{Context, DeviceBuffer, Stream};

use super::reference::XorwowState;
use crate::error::Result;
use crate::kernels::Family;
use crate::pseudo::{cache_from_words, GeneratorOptions, PseudoCore, STATE_WORDS};
use crate::pseudo_macros::impl_pseudo_generator;
use crate::seed::Seeds;

/// XORWOW on the GPU: PyCUDA's `XORWOWRandomNumberGenerator` (cuRAND's default
/// generator). State `i` runs the stream of `curand_init(seed_i, subsequence_i, offset_i)`;
/// initialisation jumps with GF(2) matrix powers computed by this crate
/// ([`super::jump`]).
///
/// ```no_run
/// use rucuda_rand::{Xorwow, RandomGenerator, GeneratorOptions, seed::seed_getter_unique};
/// use rucuda_driver::{Device, Stream};
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::null(&ctx);
/// let opts = GeneratorOptions { states: Some(1 << 16), seeds: seed_getter_unique(1 << 16, 7), ..Default::default() };
/// let mut g = Xorwow::with_options(&ctx, &opts)?;
/// let x = g.gen_normal::<f32>(&[1 << 20], &stream)?;
/// # let _ = x;
/// # Ok::<(), rucuda_rand::Error>(())
/// ```
pub struct Xorwow {
    core: PseudoCore,
}

impl_pseudo_generator!(Xorwow);

impl Xorwow {
    /// The default number of states, all seeded with `seed`, state `i` on subsequence `i`.
    pub fn new(ctx: &Context, seed: u64) -> Result<Xorwow> {
        Self::with_options(
            ctx,
            &GeneratorOptions {
                seeds: Seeds::Same(seed),
                ..GeneratorOptions::default()
            },
        )
    }

    /// States initialised as `options` says.
    pub fn with_options(ctx: &Context, options: &GeneratorOptions) -> Result<Xorwow> {
        Ok(Xorwow {
            core: PseudoCore::new(
                ctx,
                "XORWOW",
                Family::Xorwow,
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

    /// `skipahead_sequence(n)`: `n · 2^67` steps (PyCUDA's `call_skip_ahead_sequence`).
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
    pub fn to_reference(&self) -> Result<Vec<XorwowState>> {
        let words = self.core.state_words()?;
        Ok(words
            .chunks_exact(STATE_WORDS)
            .map(|w| XorwowState {
                d: w[0],
                v: [w[1], w[2], w[3], w[4], w[5]],
                cache: cache_from_words(w),
            })
            .collect())
    }
}
