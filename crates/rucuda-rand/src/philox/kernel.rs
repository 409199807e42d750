//! [`Philox4x32_10`]: the generator on the GPU.

use super::reference::Philox4x32_10State;
use crate::error::Result;
use crate::kernels::Family;
use crate::pseudo::PseudoCore;
use crate::pseudo_macros::{impl_pseudo_generator, skip_methods};

/// Philox4x32-10 on the GPU (cuRAND's `CURAND_RNG_PSEUDO_PHILOX4_32_10`; PyCUDA offers no
/// Philox class, so this follows its XORWOW one). State `i` runs the stream of
/// `curand_init(seed_i, subsequence_i, offset_i)`; see
/// [`GeneratorOptions`](crate::GeneratorOptions).
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

impl_pseudo_generator!(Philox4x32_10, "Philox4x32-10", Family::Philox, None);

impl Philox4x32_10 {
    skip_methods! {
        /// `skipahead_sequence(n)` on every state (PyCUDA's `call_skip_ahead_sequence`).
        skip_ahead_sequence,
        /// `skipahead_sequence(counts[i])` on state `i`.
        skip_ahead_sequence_array => 1;
    }

    /// The states, copied back as CPU references that continue the same streams.
    pub fn to_reference(&self) -> Result<Vec<Philox4x32_10State>> {
        self.core.references(|w, cache| {
            let mut s =
                Philox4x32_10State::from_parts([w[0], w[1], w[2], w[3]], [w[4], w[5]], w[9]);
            s.cache = cache;
            s
        })
    }
}
