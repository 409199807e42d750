//! [`Xorwow`]: the generator on the GPU.

use super::reference::XorwowState;
use crate::error::Result;
use crate::kernels::Family;
use crate::pseudo::PseudoCore;
use crate::pseudo_macros::{impl_pseudo_generator, skip_methods};

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

impl_pseudo_generator!(
    Xorwow,
    "XORWOW",
    Family::Xorwow,
    Some(super::jump::device_table())
);

impl Xorwow {
    skip_methods! {
        /// `skipahead_sequence(n)`: `n · 2^67` steps (PyCUDA's `call_skip_ahead_sequence`).
        skip_ahead_sequence,
        /// `skipahead_sequence(counts[i])` on state `i`.
        skip_ahead_sequence_array => 1;
    }

    /// The states, copied back as CPU references that continue the same streams.
    pub fn to_reference(&self) -> Result<Vec<XorwowState>> {
        self.core.references(|w, cache| XorwowState {
            d: w[0],
            v: [w[1], w[2], w[3], w[4], w[5]],
            cache,
        })
    }
}
