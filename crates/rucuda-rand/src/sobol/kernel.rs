//! The Sobol generators on the GPU: [`Sobol32`], [`ScrambledSobol32`], [`Sobol64`],
//! [`ScrambledSobol64`]. One state per dimension, as in PyCUDA (state `d` uses dimension
//! `d`'s direction vectors).

use std::sync::Arc;

use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::{
    Access, Context, DeviceBuffer, DevicePointerArg, DevicePtr, DeviceRepr, Function, InUse,
    LaunchConfig, Stream,
};
use rucuda_jit::SourceModule;

use super::direction::{direction_vector_set_32, direction_vector_set_64, MAX_DIMENSIONS};
use super::reference::{Sobol32State, Sobol64State};
use super::scramble;
use crate::distributions::Distribution;
use crate::error::{Error, Result};
use crate::generator::{
    self, blocks, check_stream, params, ElementKind, FillKernel, RandomGenerator, BLOCK,
};
use crate::kernels::Family;

/// A Sobol word: `u32` or `u64`.
pub(crate) trait Word: DeviceRepr + Copy + Default + Into<u64> + 'static {
    const BITS: u32;
    fn from_u64(x: u64) -> Self;
}
impl Word for u32 {
    const BITS: u32 = 32;
    fn from_u64(x: u64) -> Self {
        x as u32
    }
}
impl Word for u64 {
    const BITS: u32 = 64;
    fn from_u64(x: u64) -> Self {
        x
    }
}

/// What the four Sobol generators share.
pub(crate) struct SobolCore<W: Word> {
    name: &'static str,
    ctx: Context,
    _module: Arc<SourceModule>,
    fills: Vec<(FillKernel, Function)>,
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
        let module = generator::module(ctx, Family::Sobol)?;
        let prefix = if W::BITS == 32 {
            "rr_sobol32"
        } else {
            "rr_sobol64"
        };
        let raw = if W::BITS == 32 {
            FillKernel::RawU32
        } else {
            FillKernel::RawU64
        };
        let kinds = [
            raw,
            FillKernel::UniformF32,
            FillKernel::UniformF64,
            FillKernel::NormalF32,
            FillKernel::NormalF64,
            FillKernel::LogNormalF32,
            FillKernel::LogNormalF64,
            FillKernel::PoissonU32,
        ];
        let mut fills = Vec::with_capacity(kinds.len());
        for k in kinds {
            fills.push((
                k,
                generator::function(&module, &format!("{prefix}_{}", k.suffix()))?,
            ));
        }
        let skip = generator::function(&module, &format!("{prefix}_skipahead"))?;
        let transposed: Vec<W> = (0..bits)
            .flat_map(|b| (0..dims).map(move |d| (b, d)))
            .map(|(b, d)| vectors[d * bits + b])
            .collect();
        let start = vec![offset; dims];
        let target_threads = generator::sobol_target_threads(ctx)?;
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
            scramble: match &scramble {
                Some(s) => Some(DeviceBuffer::from_slice(ctx, s)?),
                None => None,
            },
            host_vectors: vectors,
            host_scramble: scramble.unwrap_or_else(|| vec![W::default(); dims]),
            target_threads,
        })
    }

    /// # Safety
    /// As [`RandomGenerator::fill_ptr`].
    unsafe fn fill_ptr(
        &mut self,
        ptr: CUdeviceptr,
        n: usize,
        kind: ElementKind,
        dist: Distribution,
        stream: &Stream,
    ) -> Result<()> {
        dist.validate()?;
        check_stream(&self.ctx, stream)?;
        let which = FillKernel::select(self.name, dist, kind, W::BITS)?;
        if n == 0 {
            return Ok(());
        }
        let f = self
            .fills
            .iter()
            .find(|(k, _)| *k == which)
            .map(|(_, f)| f)
            .ok_or_else(|| Error::invalid("no such kernel"))?;
        // 64-bit raw elements from a 32-bit generator are pairs of its outputs: the kernel
        // writes twice as many 32-bit words, in the 32-bit layout (which is the 64-bit one).
        let (words, chunk) = if which == FillKernel::RawU32 && kind == ElementKind::U64 {
            (n as u64 * 2, ElementKind::U32.chunk() as u64)
        } else {
            (n as u64, kind.chunk() as u64)
        };
        let shape = super::launch_shape(words, self.dims, chunk, self.target_threads);
        let (mean, stddev, lambda) = params(dist);
        let cfg = LaunchConfig::linear(blocks(shape.threads)?, BLOCK);
        let (from, to) = (&self.idx[self.current], &self.idx[1 - self.current]);
        let scramble = match &self.scramble {
            Some(c) => c.device_range().use_on(stream, Access::Read)?,
            None => InUse::null(),
        };
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
                    scramble,
                    DevicePointerArg(ptr),
                    words,
                    shape.per_thread,
                    shape.wlog2,
                    mean,
                    stddev,
                    lambda,
                ),
            )?
        };
        self.current = 1 - self.current;
        Ok(())
    }

    fn skip(
        &mut self,
        count: u64,
        counts: Option<&DeviceBuffer<W>>,
        stream: &Stream,
    ) -> Result<()> {
        check_stream(&self.ctx, stream)?;
        if let Some(c) = counts {
            if c.len() != self.dims as usize {
                return Err(Error::invalid(format!(
                    "{} skip counts for {} dimensions",
                    c.len(),
                    self.dims
                )));
            }
        }
        let cfg = LaunchConfig::linear(blocks(u64::from(self.dims))?, BLOCK);
        let idx = self.idx[self.current]
            .device_range()
            .use_on(stream, Access::Write)?;
        let counts = match counts {
            Some(c) => c.device_range().use_on(stream, Access::Read)?,
            None => InUse::null(),
        };
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

macro_rules! sobol_type {
    ($(#[$doc:meta])* $t:ident, $w:ty, $state:ty, $name:expr) => {
        $(#[$doc])*
        pub struct $t {
            core: SobolCore<$w>,
        }

        impl RandomGenerator for $t {
            fn name(&self) -> &'static str {
                self.core.name
            }
            fn context(&self) -> &Context {
                &self.core.ctx
            }
            fn state_count(&self) -> usize {
                self.core.dims as usize
            }
            unsafe fn fill_ptr(
                &mut self,
                ptr: CUdeviceptr,
                n: usize,
                kind: ElementKind,
                dist: Distribution,
                stream: &Stream,
            ) -> Result<()> {
                // SAFETY: forwarded contract.
                unsafe { self.core.fill_ptr(ptr, n, kind, dist, stream) }
            }
        }

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
            pub fn skip_ahead_array(&mut self, counts: &DeviceBuffer<$w>, stream: &Stream) -> Result<()> {
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

fn check_dims(dimensions: usize) -> Result<()> {
    if dimensions == 0 || dimensions > MAX_DIMENSIONS {
        return Err(Error::invalid(format!(
            "{dimensions} dimensions: between 1 and {MAX_DIMENSIONS}"
        )));
    }
    Ok(())
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
    Sobol32, u32, Sobol32State, "Sobol32"
);
sobol_type!(
    /// Scrambled Sobol32 on the GPU: PyCUDA's `ScrambledSobol32RandomNumberGenerator`.
    /// By default with our scrambled direction vectors and constants (see
    /// [`super::scramble`]); [`ScrambledSobol32::from_tables`] takes any, such as
    /// libcurand's.
    ScrambledSobol32, u32, Sobol32State, "ScrambledSobol32"
);
sobol_type!(
    /// Sobol64 on the GPU: PyCUDA's `Sobol64RandomNumberGenerator`.
    Sobol64, u64, Sobol64State, "Sobol64"
);
sobol_type!(
    /// Scrambled Sobol64 on the GPU: PyCUDA's `ScrambledSobol64RandomNumberGenerator`.
    ScrambledSobol64, u64, Sobol64State, "ScrambledSobol64"
);

impl Sobol32 {
    /// Dimensions `0..dimensions` (at most 21,201), every one starting at point
    /// `offset`.
    pub fn new(ctx: &Context, dimensions: usize, offset: u32) -> Result<Sobol32> {
        check_dims(dimensions)?;
        Self::from_vectors(ctx, direction_vector_set_32(dimensions)?, offset)
    }

    /// From direction vectors given dimension by dimension (32 words each, as cuRAND's
    /// `curandDirectionVectors32_t` arrays).
    pub fn from_vectors(ctx: &Context, vectors: Vec<u32>, offset: u32) -> Result<Sobol32> {
        Ok(Sobol32 {
            core: SobolCore::new(ctx, "Sobol32", vectors, None, offset)?,
        })
    }
}

impl ScrambledSobol32 {
    /// Dimensions `0..dimensions`, scrambled with matrices and shifts drawn from `seed`.
    pub fn new(
        ctx: &Context,
        dimensions: usize,
        seed: u64,
        offset: u32,
    ) -> Result<ScrambledSobol32> {
        check_dims(dimensions)?;
        Self::from_tables(
            ctx,
            scramble::scrambled_direction_vectors_32(dimensions, seed)?,
            scramble::scramble_constants_32(dimensions, seed),
            offset,
        )
    }

    /// From direction vectors (32 words per dimension) and one scramble constant per
    /// dimension.
    pub fn from_tables(
        ctx: &Context,
        vectors: Vec<u32>,
        constants: Vec<u32>,
        offset: u32,
    ) -> Result<ScrambledSobol32> {
        Ok(ScrambledSobol32 {
            core: SobolCore::new(ctx, "ScrambledSobol32", vectors, Some(constants), offset)?,
        })
    }
}

impl Sobol64 {
    /// Dimensions `0..dimensions` (at most 21,201), every one starting at point
    /// `offset`.
    pub fn new(ctx: &Context, dimensions: usize, offset: u64) -> Result<Sobol64> {
        check_dims(dimensions)?;
        Self::from_vectors(ctx, direction_vector_set_64(dimensions)?, offset)
    }

    /// From direction vectors given dimension by dimension (64 words each).
    pub fn from_vectors(ctx: &Context, vectors: Vec<u64>, offset: u64) -> Result<Sobol64> {
        Ok(Sobol64 {
            core: SobolCore::new(ctx, "Sobol64", vectors, None, offset)?,
        })
    }
}

impl ScrambledSobol64 {
    /// Dimensions `0..dimensions`, scrambled with matrices and shifts drawn from `seed`.
    pub fn new(
        ctx: &Context,
        dimensions: usize,
        seed: u64,
        offset: u64,
    ) -> Result<ScrambledSobol64> {
        check_dims(dimensions)?;
        Self::from_tables(
            ctx,
            scramble::scrambled_direction_vectors_64(dimensions, seed)?,
            scramble::scramble_constants_64(dimensions, seed),
            offset,
        )
    }

    /// From direction vectors (64 words per dimension) and one scramble constant per
    /// dimension.
    pub fn from_tables(
        ctx: &Context,
        vectors: Vec<u64>,
        constants: Vec<u64>,
        offset: u64,
    ) -> Result<ScrambledSobol64> {
        Ok(ScrambledSobol64 {
            core: SobolCore::new(ctx, "ScrambledSobol64", vectors, Some(constants), offset)?,
        })
    }
}
