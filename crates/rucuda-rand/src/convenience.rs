//! PyCUDA's module-level `pycuda.curandom.rand(shape, dtype)`.

use rucuda_array::GpuArray;
use rucuda_driver::Stream;

use crate::error::Result;
use crate::generator::{default_state_count, RandElement, RandomGenerator};
use crate::philox::kernel::Philox4x32_10;
use crate::pseudo::GeneratorOptions;
use crate::seed::{entropy, Seeds};

/// A new array of `shape` filled with random values on `stream` (PyCUDA's
/// `curandom.rand`): floats and doubles uniform in (0, 1], integers uniform over all their
/// bits. Each call draws a fresh seed from the operating system and runs Philox4x32-10 on
/// at most the default number of states (so the stream's work includes their
/// initialisation); for repeatable or faster streams keep a generator instead.
///
/// PyCUDA's version hashes thread indices with MD5 and gives [0, 1); ours is cuRAND's
/// uniform, in (0, 1].
///
/// ```no_run
/// use rucuda_driver::{Device, Stream};
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::null(&ctx);
/// let a = rucuda_rand::rand::<f32>(&[100, 100], &stream)?;
/// assert!(a.to_vec()?.iter().all(|&x| x > 0.0 && x <= 1.0));
/// # Ok::<(), rucuda_rand::Error>(())
/// ```
pub fn rand<T: RandElement>(shape: &[usize], stream: &Stream) -> Result<GpuArray<T>> {
    let ctx = stream.context();
    let n: usize = shape.iter().product();
    let chunk = T::KIND.chunk();
    let states = default_state_count(ctx)?.min(n.div_ceil(chunk)).max(1);
    let mut g = Philox4x32_10::with_options(
        ctx,
        &GeneratorOptions {
            states: Some(states),
            seeds: Seeds::Same(entropy()),
            ..GeneratorOptions::default()
        },
    )?;
    g.gen_uniform(shape, stream)
}
