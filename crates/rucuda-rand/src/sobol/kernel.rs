//! The Sobol generators on the GPU: [`Sobol32`], [`ScrambledSobol32`], [`Sobol64`],
//! [`ScrambledSobol64`]. One state per dimension, as in PyCUDA (state `d` uses dimension
//! `d`'s direction vectors).

use std::sync::Arc;

use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::{
    Access, Context, DeviceBuffer, DevicePointerArg, DevicePtr, DeviceRepr, Function, LaunchConfig,
    Stream,
};
use rucuda_jit::SourceModule;

use super::direction::{direction_vector_set_32, direction_vector_set_64, MAX_DIMENSIONS};
use super::launch::launch_shape;
use super::reference::{Sobol32State, Sobol64State};
use super::scramble;
use crate::error::{Error, Result};
use crate::generator::multiprocessors;
use crate::kernels::Family;
use crate::launch::{
    self, blocks, check_stream, impl_random_generator, read_or_null, skip_counts, Fill, FillKernel,
    FillKernels, GeneratorCore, BLOCK,
};

/// A Sobol word, `u32` or `u64`, and its direction-vector tables.
pub(crate) trait Word: DeviceRepr + Copy + Default + Into<u64> + 'static {
    const BITS: u32;
    /// The raw-output fill kernel of this word size.
    const RAW: FillKernel;
    fn from_u64(x: u64) -> Self;
    /// Joe and Kuo's direction vectors of dimensions `0..count`, dimension by dimension.
    fn direction_vectors(count: usize) -> Result<Vec<Self>>;
    /// Our scrambled direction vectors of dimensions `0..count`, drawn from `seed`.
    fn scrambled_direction_vectors(count: usize, seed: u64) -> Result<Vec<Self>>;
    /// Our scramble constants of dimensions `0..count`, drawn from `seed`.
    fn scramble_constants(count: usize, seed: u64) -> Vec<Self>;
}
impl Word for u32 {
    const BITS: u32 = 32;
    const RAW: FillKernel = FillKernel::RawU32;
    fn from_u64(x: u64) -> Self {
        x as u32
    }
    fn direction_vectors(count: usize) -> Result<Vec<u32>> {
        direction_vector_set_32(count)
    }
    fn scrambled_direction_vectors(count: usize, seed: u64) -> Result<Vec<u32>> {
        scramble::scrambled_direction_vectors_32(count, seed)
    }
    fn scramble_constants(count: usize, seed: u64) -> Vec<u32> {
        scramble::scramble_constants_32(count, seed)
    }
}
impl Word for u64 {
    const BITS: u32 = 64;
    const RAW: FillKernel = FillKernel::RawU64;
    fn from_u64(x: u64) -> Self {
        x
    }
    fn direction_vectors(count: usize) -> Result<Vec<u64>> {
        direction_vector_set_64(count)
    }
    fn scrambled_direction_vectors(count: usize, seed: u64) -> Result<Vec<u64>> {
        scramble::scrambled_direction_vectors_64(count, seed)
    }
    fn scramble_constants(count: usize, seed: u64) -> Vec<u64> {
        scramble::scramble_constants_64(count, seed)
    }
}

/// What the four Sobol generators share.
pub(crate) struct SobolCore<W: Word> {
    name: &'static str,
    ctx: Context,
    _module: Arc<SourceModule>,
    fills: FillKernels,
    skip: Function,
    dims: u32,
    /// Next point index per dimension: read from `idx[current]`, the advanced ones written
    /// to the other buffer, then the two swap.
    idx: [DeviceBuffer<W>; 2],
    current: usize,
    /// Direction vectors bit-major (vector `b` of dimension `d` at `b·dims + d`).
    vectors: DeviceBuffer<W>,
    scramble: Option<DeviceBuffer<W>>,
    /// The same, dimension-major, for `to_reference`.
    host_vectors: Vec<W>,
    host_scramble: Vec<W>,
    target_threads: u64,
}

impl<W: Word> SobolCore<W> {
    /// Dimensions `0..dimensions` of Joe and Kuo's table, plain, or scrambled from
    /// `seed`.
    fn with_dimensions(
        ctx: &Context,
        name: &'static str,
        dimensions: usize,
        scramble_seed: Option<u64>,
        offset: W,
    ) -> Result<SobolCore<W>> {
        if dimensions == 0 || dimensions > MAX_DIMENSIONS {
            return Err(Error::invalid(format!(
                "{dimensions} dimensions: between 1 and {MAX_DIMENSIONS}"
            )));
        }
        match scramble_seed {
            None => Self::new(ctx, name, W::direction_vectors(dimensions)?, None, offset),
            Some(seed) => Self::new(
                ctx,
                name,
                W::scrambled_direction_vectors(dimensions, seed)?,
                Some(W::scramble_constants(dimensions, seed)),
                offset,
            ),
        }
    }

    fn new(
        ctx: &Context,
        name: &'static str,
        vectors: Vec<W>,
        scramble: Option<Vec<W>>,
        offset: W,
    ) -> Result<SobolCore<W>> {
        let bits = W::BITS as usize;
        if vectors.is_empty() || vectors.len() % bits != 0 {
            return Err(Error::invalid(format!(
                "{} direction-vector words: need {bits} per dimension, at least one dimension",
                vectors.len()
            )));
        }
        let dims = vectors.len() / bits;
        let dims32 = u32::try_from(dims)
            .map_err(|_| Error::invalid(format!("{dims} dimensions: too many")))?;
        if let Some(s) = &scramble {
            if s.len() != dims {
                return Err(Error::invalid(format!(
                    "{} scramble constants for {dims} dimensions",
                    s.len()
                )));
            }
        }
        let module = launch::module(ctx, Family::Sobol)?;
        let prefix = if W::BITS == 32 {
            "rr_sobol32"
        } else {
            "rr_sobol64"
        };
        let fills = FillKernels::load(&module, prefix, W::RAW)?;
        let skip = launch::function(&module, &format!("{prefix}_skipahead"))?;
        let transposed: Vec<W> = (0..bits)
            .flat_map(|b| (0..dims).map(move |d| (b, d)))
            .map(|(b, d)| vectors[d * bits + b])
            .collect();
        let start = vec![offset; dims];
        // Fills aim at 2048 threads per multiprocessor.
        let target_threads = multiprocessors(ctx)? * 2048;
        Ok(SobolCore {
            name,
            ctx: ctx.clone(),
            _module: module,
            fills,
            skip,
            dims: dims32,
            idx: [
                DeviceBuffer::from_slice(ctx, &start)?,
                DeviceBuffer::from_slice(ctx, &start)?,
            ],
            current: 0,
            vectors: DeviceBuffer::from_slice(ctx, &transposed)?,
            scramble: scramble
                .as_deref()
                .map(|s| DeviceBuffer::from_slice(ctx, s))
                .transpose()?,
            host_vectors: vectors,
            host_scramble: scramble.unwrap_or_else(|| vec![W::default(); dims]),
            target_threads,
        })
    }

    fn skip(
        &mut self,
        count: u64,
        counts: Option<&DeviceBuffer<W>>,
        stream: &Stream,
    ) -> Result<()> {
        check_stream(&self.ctx, stream)?;
        let counts = skip_counts(counts, self.dims as usize, "dimensions", stream)?;
        let cfg = LaunchConfig::linear(blocks(u64::from(self.dims))?, BLOCK);
        let idx = self.idx[self.current]
            .device_range()
            .use_on(stream, Access::Write)?;
        // SAFETY: rr_sobolW_skipahead(W* idx, unsigned dims, const W* counts, W count)
        // updates idx[0..dims); counts holds dims values or is null.
        unsafe {
            self.skip
                .launch(cfg, stream, (idx, self.dims, counts, W::from_u64(count)))?
        };
        Ok(())
    }

    fn indices(&self) -> Result<Vec<W>> {
        Ok(self.idx[self.current].to_vec()?)
    }
}

impl<W: Word> GeneratorCore for SobolCore<W> {
    const WORD_BITS: u32 = W::BITS;

    fn name(&self) -> &'static str {
        self.name
    }

    fn context(&self) -> &Context {
        &self.ctx
    }

    fn state_count(&self) -> usize {
        self.dims as usize
    }

    unsafe fn launch_fill(&mut self, ptr: CUdeviceptr, fill: &Fill, stream: &Stream) -> Result<()> {
        let f = self.fills.get(fill.kernel)?;
        let shape = launch_shape(fill.words, self.dims, fill.chunk, self.target_threads);
        let cfg = LaunchConfig::linear(blocks(shape.threads)?, BLOCK);
        let (from, to) = (&self.idx[self.current], &self.idx[1 - self.current]);
        // SAFETY: rr_sobolW_<fill>(const W* idx_in, W* idx_out, unsigned dims,
        // const W* vectors, const W* scramble, T* out, u64 n, u64 per_thread,
        // unsigned wlog2, double mean, double stddev, double lambda): reads idx_in[0..dims)
        // and vectors[0..W·dims), writes idx_out[0..dims) and out[0..n); threads with no
        // chunk return.
        unsafe {
            f.launch(
                cfg,
                stream,
                (
                    from.device_range().use_on(stream, Access::Read)?,
                    to.device_range().use_on(stream, Access::Write)?,
                    self.dims,
                    self.vectors.device_range().use_on(stream, Access::Read)?,
                    read_or_null(self.scramble.as_ref(), stream)?,
                    DevicePointerArg(ptr),
                    fill.words,
                    shape.per_thread,
                    shape.wlog2,
                    fill.mean,
                    fill.stddev,
                    fill.lambda,
                ),
            )?
        };
        self.current = 1 - self.current;
        Ok(())
    }
}

/// One of the four public types: `RandomGenerator`, `Debug`, skip-ahead and
/// `to_reference` for all; `plain` ones are built from direction vectors, `scrambled`
/// ones from direction vectors and scramble constants.
macro_rules! sobol_type {
    ($(#[$doc:meta])* $t:ident, $w:ty, $state:ty, $name:expr, plain) => {
        sobol_type!(@common $(#[$doc])* $t, $w, $state);

        impl $t {
            /// Dimensions `0..dimensions` (at most 21,201), every one starting at point
            /// `offset`.
            pub fn new(ctx: &Context, dimensions: usize, offset: $w) -> Result<$t> {
                Ok($t {
                    core: SobolCore::with_dimensions(ctx, $name, dimensions, None, offset)?,
                })
            }

            /// From direction vectors given dimension by dimension (one per bit of the
            /// word each, as cuRAND's `curandDirectionVectors32_t` and
            /// `curandDirectionVectors64_t` arrays).
            pub fn from_vectors(ctx: &Context, vectors: Vec<$w>, offset: $w) -> Result<$t> {
                Ok($t {
                    core: SobolCore::new(ctx, $name, vectors, None, offset)?,
                })
            }
        }
    };
    ($(#[$doc:meta])* $t:ident, $w:ty, $state:ty, $name:expr, scrambled) => {
        sobol_type!(@common $(#[$doc])* $t, $w, $state);

        impl $t {
            /// Dimensions `0..dimensions`, scrambled with matrices and shifts drawn from
            /// `seed`.
            pub fn new(ctx: &Context, dimensions: usize, seed: u64, offset: $w) -> Result<$t> {
                Ok($t {
                    core: SobolCore::with_dimensions(ctx, $name, dimensions, Some(seed), offset)?,
                })
            }

            /// From direction vectors (one per bit of the word for each dimension) and one
            /// scramble constant per dimension.
            pub fn from_tables(
                ctx: &Context,
                vectors: Vec<$w>,
                constants: Vec<$w>,
                offset: $w,
            ) -> Result<$t> {
                Ok($t {
                    core: SobolCore::new(ctx, $name, vectors, Some(constants), offset)?,
                })
            }
        }
    };
    (@common $(#[$doc:meta])* $t:ident, $w:ty, $state:ty) => {
        $(#[$doc])*
        pub struct $t {
            core: SobolCore<$w>,
        }

        impl_random_generator!($t);

        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($t))
                    .field("dimensions", &self.core.dims)
                    .finish()
            }
        }

        impl $t {
            /// `skipahead(n)` on every dimension (PyCUDA's `call_skip_ahead`).
            pub fn skip_ahead(&mut self, n: $w, stream: &Stream) -> Result<()> {
                self.core.skip(n.into(), None, stream)
            }

            /// `skipahead(counts[d])` on dimension `d` (PyCUDA's `call_skip_ahead_array`).
            pub fn skip_ahead_array(
                &mut self,
                counts: &DeviceBuffer<$w>,
                stream: &Stream,
            ) -> Result<()> {
                self.core.skip(0, Some(counts), stream)
            }

            /// The dimensions' states, copied back as CPU references that continue the
            /// same sequences.
            pub fn to_reference(&self) -> Result<Vec<$state>> {
                let idx = self.core.indices()?;
                let bits = <$w as Word>::BITS as usize;
                Ok(idx
                    .iter()
                    .enumerate()
                    .map(|(d, &i)| {
                        let mut v = [0 as $w; <$w as Word>::BITS as usize];
                        v.copy_from_slice(&self.core.host_vectors[d * bits..(d + 1) * bits]);
                        let mut s = <$state>::scrambled(v, self.core.host_scramble[d], 0);
                        s.i = i;
                        s.x = s.point(i);
                        s
                    })
                    .collect())
            }
        }
    };
}

sobol_type!(
    /// Sobol32 on the GPU: PyCUDA's `Sobol32RandomNumberGenerator` (cuRAND's
    /// `CURAND_RNG_QUASI_SOBOL32` with the `JOEKUO6` direction vectors, which we build from
    /// Joe and Kuo's table). Dimension `d` is state `d`.
    ///
    /// ```no_run
    /// use rucuda_rand::{Sobol32, RandomGenerator};
    /// use rucuda_driver::{Device, Stream};
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let stream = Stream::null(&ctx);
    /// let mut g = Sobol32::new(&ctx, 1000, 0)?;
    /// let pts = g.gen_uniform::<f32>(&[1 << 20], &stream)?;
    /// # let _ = pts;
    /// # Ok::<(), rucuda_rand::Error>(())
    /// ```
    Sobol32, u32, Sobol32State, "Sobol32", plain
);
sobol_type!(
    /// Scrambled Sobol32 on the GPU: PyCUDA's `ScrambledSobol32RandomNumberGenerator`.
    /// By default with our scrambled direction vectors and constants (see
    /// [`super::scramble`]); [`ScrambledSobol32::from_tables`] takes any, such as
    /// libcurand's.
    ScrambledSobol32, u32, Sobol32State, "ScrambledSobol32", scrambled
);
sobol_type!(
    /// Sobol64 on the GPU: PyCUDA's `Sobol64RandomNumberGenerator`.
    Sobol64, u64, Sobol64State, "Sobol64", plain
);
sobol_type!(
    /// Scrambled Sobol64 on the GPU: PyCUDA's `ScrambledSobol64RandomNumberGenerator`.
    ScrambledSobol64, u64, Sobol64State, "ScrambledSobol64", scrambled
);
