//! [`Mrg32k3a`]: the generator on the GPU.

use super::reference::Mrg32k3aState;
use crate::error::Result;
use crate::kernels::Family;
use crate::pseudo::PseudoCore;
use crate::pseudo_macros::{impl_pseudo_generator, skip_methods};

/// MRG32k3a on the GPU: PyCUDA's `MRG32k3aRandomNumberGenerator`. State `i` runs the
/// stream of `curand_init(seed_i, subsequence_i, offset_i)`; initialisation jumps with
/// 3×3 modular matrix powers computed by this crate ([`super::jump`]).
///
/// Subsequences are cuRAND's for `subsequence_i < 2^51` only, the limit cuRAND documents:
/// beyond it cuRAND's tables hold zero matrices and its states degenerate to a constant
/// output, while ours jump the true `subsequence_i · 2^76` steps
/// ([`super::jump::CURAND_SUBSEQUENCE_BITS`]).
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

impl_pseudo_generator!(
    Mrg32k3a,
    "MRG32k3a",
    Family::Mrg32k3a,
    Some(super::jump::device_table())
);

impl Mrg32k3a {
    skip_methods! {
        /// `skipahead_subsequence(n)`: `n · 2^76` steps (PyCUDA's
        /// `call_skip_ahead_subsequence`).
        skip_ahead_subsequence,
        /// `skipahead_subsequence(counts[i])` on state `i`.
        skip_ahead_subsequence_array => 1;
        /// `skipahead_sequence(n)`: `n · 2^127` steps (PyCUDA's `call_skip_ahead_sequence`).
        skip_ahead_sequence,
        /// `skipahead_sequence(counts[i])` on state `i`.
        skip_ahead_sequence_array => 2;
    }

    /// The states, copied back as CPU references that continue the same streams.
    pub fn to_reference(&self) -> Result<Vec<Mrg32k3aState>> {
        self.core.references(|w, cache| Mrg32k3aState {
            s1: [w[0], w[1], w[2]],
            s2: [w[3], w[4], w[5]],
            cache,
        })
    }
}
