//! [`ScanKernel`] (with PyCUDA's names [`InclusiveScanKernel`] and
//! [`ExclusiveScanKernel`]): a spec plus its compiled variants per context, and checked
//! calls into an output or in place.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rucuda_driver::{
    memset_d32_async, Access, ArgBuffer, Context, DeviceBuffer, DeviceRange, Function,
    LaunchConfig, OccupancyFlags, Stream,
};

use super::device_tuning::{with_env_overrides, DeviceFacts};
use super::render::{RenderedScan, ScanTuning, Variant};
use super::{ScanKind, ScanSpec};
use crate::array::GpuArray;
use crate::codegen::CodegenError;
use crate::compile::{default_compiler, load_kernels, KernelCompiler};
use crate::dtype::{DType, Element};
use crate::error::{ArrayError, Result};

/// A scan over arrays of one element type, compiled on first use per context and
/// variant, then cached. See [`super::render`] for the single-pass design.
///
/// Each call allocates its look-back status words stream-ordered; the first kernel
/// loaded in a context raises the device's current memory pool's release threshold from
/// 0 to `u64::MAX`, as [`crate::reduction::ReductionKernel`] does, so that they are not
/// mapped afresh after every synchronisation.
///
/// Arrays are scanned in row-major order of their elements and must be C-contiguous;
/// the output must have as many elements as the input. In place works (pass the same
/// array to [`ScanKernel::call_in_place`]).
///
/// ```no_run
/// use rucuda_array::{DType, GpuArray, scan::InclusiveScanKernel};
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// let running_max = unsafe { InclusiveScanKernel::new(DType::I32, "a > b ? a : b", "-2147483647 - 1") }?;
/// let x = GpuArray::from_slice(&stream, &[3, 1, 4, 1, 5, 9, 2, 6])?;
/// let mut out = GpuArray::<i32>::empty(&stream, &[8])?;
/// running_max.call(&stream, &x, &mut out)?;
/// assert_eq!(out.to_vec()?, vec![3, 3, 4, 4, 5, 9, 9, 9]);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub struct ScanKernel {
    spec: ScanSpec,
    compiler: Arc<dyn KernelCompiler>,
    /// The tuning [`ScanKernel::with_tuning`] set; `None`: each device's own
    /// ([`ScanTuning::for_device`] with the environment's overrides).
    tuning: Option<ScanTuning>,
    /// By context, variant and tile choice (`true`: [`ScanKernel::tuning_for`]'s tiles,
    /// `false`: [`ScanKernel::tuning`]'s).
    loaded: Mutex<HashMap<(u64, Variant, bool), Arc<Loaded>>>,
    /// By context and variant: from how many bytes arrays take the large tiles, worked
    /// out once (not on every launch).
    large_from: Mutex<HashMap<(u64, Variant), LargeFrom>>,
}

/// From how many bytes of input a scan takes [`ScanKernel::tuning_for`]'s tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LargeFrom {
    /// Never: they are the small arrays' tiles.
    Never,
    /// Not below this (one large tile per multiprocessor); one wave of them not known
    /// yet (the large kernel is compiled when an array first reaches this).
    AtLeast(u64),
    /// From this many bytes: one wave of large tiles (all the blocks the device holds).
    Bytes(u64),
}

/// A compiled variant: its function, source facts, and its prefetch distance (shared, so
/// that a call clones no source text).
struct Loaded {
    function: Function,
    rendered: RenderedScan,
    /// Elements past its own tile each block asks L2 to prefetch (0: none).
    ahead: i64,
    /// Bytes of tiles the blocks resident on the whole device hold at once: one wave.
    wave_bytes: u64,
}

impl std::fmt::Debug for ScanKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanKernel")
            .field("spec", &self.spec)
            .field("tuning", &self.tuning)
            .finish()
    }
}

impl ScanKernel {
    /// From a spec made with [`ScanSpec::builder`].
    ///
    /// # Safety
    /// The operator and preamble are CUDA C run as written: they may combine only the two
    /// values `a` and `b` they are given (touching no memory of their own beyond what
    /// they declare) and must be free of undefined behaviour. The library's own scans
    /// (`cumsum`) are safe because it generates them.
    pub unsafe fn from_spec(spec: ScanSpec) -> ScanKernel {
        ScanKernel::from_trusted_spec(spec)
    }

    /// From a spec the library generated itself.
    pub(crate) fn from_trusted_spec(spec: ScanSpec) -> ScanKernel {
        ScanKernel {
            spec,
            compiler: default_compiler(),
            tuning: None,
            loaded: Mutex::new(HashMap::new()),
            large_from: Mutex::new(HashMap::new()),
        }
    }

    /// Uses `tuning` (tile shape, cache hints, L2 prefetch) instead of the element type's
    /// default; an error when the shape is invalid ([`ScanTuning::check`]).
    ///
    /// ```
    /// use rucuda_array::{DType, scan::{InclusiveScanKernel, ScanTuning}};
    /// let k = unsafe { InclusiveScanKernel::new(DType::I32, "a + b", "0") }?.into_kernel();
    /// let k = k.with_tuning(ScanTuning { threads: 256, ..ScanTuning::for_size(4) })?;
    /// assert_eq!(k.tuning().threads, 256);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn with_tuning(mut self, tuning: ScanTuning) -> Result<Self> {
        tuning.check()?;
        self.tuning = Some(tuning);
        self.loaded = Mutex::new(HashMap::new());
        self.large_from = Mutex::new(HashMap::new());
        Ok(self)
    }

    /// The tile shape, cache hints and prefetch distance set by
    /// [`ScanKernel::with_tuning`], else the element type's default with the environment's
    /// overrides ([`ScanTuning::for_size`]; a device may choose larger tiles for arrays of
    /// one wave of them or more: [`ScanKernel::tuning_for`]).
    pub fn tuning(&self) -> ScanTuning {
        let size = self.spec.dtype.size_bytes();
        self.tuning
            .unwrap_or_else(|| with_env_overrides(ScanTuning::for_size(size), size))
    }

    /// The tuning used on `ctx`'s device: the one set by [`ScanKernel::with_tuning`], else
    /// [`ScanTuning::for_device`] with the environment's overrides.
    pub fn tuning_for(&self, ctx: &Context) -> Result<ScanTuning> {
        if let Some(t) = self.tuning {
            return Ok(t);
        }
        let size = self.spec.dtype.size_bytes();
        let facts = DeviceFacts::of(ctx)?;
        Ok(with_env_overrides(
            ScanTuning::for_device(size, &facts),
            size,
        ))
    }

    /// Whether `n` elements take [`ScanKernel::tuning_for`]'s tiles rather than
    /// [`ScanKernel::tuning`]'s: when the two differ and the array fills at least one wave
    /// of the large ones. (On an H200, 2026-11-28, its 40 KiB tiles scanned 64 KiB and
    /// 256 KiB of int32 at 38 and 171 GB/s against 51 and 203 with the 16 KiB ones, and
    /// 16 MiB at 2342 against 2409; 64 MiB and more gained.)
    fn takes_large_tiles(&self, stream: &Stream, variant: Variant, n: usize) -> Result<bool> {
        let ctx = stream.context();
        let key = (ctx.id(), variant);
        let bytes = (n as u64).saturating_mul(self.spec.dtype.size_bytes() as u64);
        let known = self
            .large_from
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .copied();
        let state = match known {
            Some(state) => state,
            None => {
                let large = self.tuning_for(ctx)?;
                let state = if large == self.tuning() {
                    LargeFrom::Never
                } else {
                    let multiprocessors = u64::from(DeviceFacts::of(ctx)?.multiprocessors);
                    LargeFrom::AtLeast(multiprocessors * large.tile_bytes() as u64)
                };
                self.remember_large_from(key, state);
                state
            }
        };
        let at_least = match state {
            LargeFrom::Never => return Ok(false),
            LargeFrom::Bytes(from) => return Ok(bytes >= from),
            LargeFrom::AtLeast(at_least) => at_least,
        };
        if bytes < at_least {
            return Ok(false);
        }
        let from = self.loaded(stream, variant, true)?.wave_bytes.max(at_least);
        self.remember_large_from(key, LargeFrom::Bytes(from));
        Ok(bytes >= from)
    }

    fn remember_large_from(&self, key: (u64, Variant), state: LargeFrom) {
        self.large_from
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, state);
    }

    /// Uses `compiler` instead of the default.
    pub fn with_compiler(mut self, compiler: Arc<dyn KernelCompiler>) -> Self {
        self.compiler = compiler;
        self
    }

    /// The definition.
    pub fn spec(&self) -> &ScanSpec {
        &self.spec
    }

    /// The generated source of a variant.
    pub fn source(&self, variant: Variant) -> Result<RenderedScan> {
        self.spec.render_tuned(variant, self.tuning())
    }

    /// Scans `input` into `output`, ordered on `stream`. The two may be the same array
    /// (the in-place variant is used) but must not otherwise overlap.
    pub fn call<T: Element>(
        &self,
        stream: &Stream,
        input: &GpuArray<T>,
        output: &mut GpuArray<T>,
    ) -> Result<()> {
        self.check_type(T::DTYPE)?;
        self.check_array("input", input, stream)?;
        self.check_array("output", output, stream)?;
        if output.layout().has_broadcast_axes() {
            return Err(ArrayError::WriteToBroadcast {
                shape: output.shape().to_vec(),
                strides: output.strides().to_vec(),
            });
        }
        if input.len() != output.len() {
            return Err(ArrayError::LengthMismatch {
                device: output.len(),
                host: input.len(),
            });
        }
        let src = input.memory().elements(input.nbytes())?;
        let dst = output.memory().elements(output.nbytes())?;
        let in_place = src.same_start(&dst);
        if !in_place && src.overlaps(&dst) {
            return Err(ArrayError::InvalidArgument(format!(
                "scan `{}`: input and output overlap without being the same array",
                self.spec.name
            )));
        }
        self.launch(stream, src, dst, input.len(), in_place)
    }

    /// Scans `data` in place, ordered on `stream`.
    pub fn call_in_place<T: Element>(&self, stream: &Stream, data: &mut GpuArray<T>) -> Result<()> {
        self.check_type(T::DTYPE)?;
        self.check_array("data", data, stream)?;
        if data.layout().has_broadcast_axes() {
            return Err(ArrayError::WriteToBroadcast {
                shape: data.shape().to_vec(),
                strides: data.strides().to_vec(),
            });
        }
        let p = data.memory().elements(data.nbytes())?;
        self.launch(stream, p, p, data.len(), true)
    }

    fn check_type(&self, got: DType) -> Result<()> {
        if got == self.spec.dtype {
            Ok(())
        } else {
            Err(CodegenError::ArgumentType {
                kernel: self.spec.name.clone(),
                name: "input".into(),
                expected: format!("{} array", self.spec.dtype),
                got: format!("{got} array"),
            }
            .into())
        }
    }

    fn check_array<T: Element>(&self, what: &str, a: &GpuArray<T>, stream: &Stream) -> Result<()> {
        if a.context() != stream.context() {
            return Err(ArrayError::ContextMismatch);
        }
        if !a.is_c_contiguous() {
            return Err(CodegenError::StridedUnsupported {
                kernel: self.spec.name.clone(),
                name: what.into(),
                usage: "a scan".into(),
            }
            .into());
        }
        Ok(())
    }

    fn launch(
        &self,
        stream: &Stream,
        src: DeviceRange<'_>,
        dst: DeviceRange<'_>,
        n: usize,
        in_place: bool,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let variant = Variant {
            vectorized: src.is_aligned(16) && dst.is_aligned(16),
            in_place,
        };
        let large = self.takes_large_tiles(stream, variant, n)?;
        let loaded = self.loaded(stream, variant, large)?;
        let Loaded {
            function,
            rendered,
            ahead,
            ..
        } = &*loaded;
        let tiles = n.div_ceil(rendered.tile_elements);
        if tiles > i32::MAX as usize {
            return Err(ArrayError::InvalidArgument(format!(
                "scan `{}`: {n} elements need {tiles} tiles, more than a grid holds",
                self.spec.name
            )));
        }
        // Two words (tile counter, padding) then the tiles' status words, all zero.
        let words = 2 + tiles * rendered.status_words;
        let mut scratch = DeviceBuffer::<u32>::uninit_async(stream, 2 * words)?;
        memset_d32_async(&mut scratch, 0, 2 * words, stream)?;
        let mut buf = ArgBuffer::new();
        buf.push_use(src.use_on(stream, Access::Read)?);
        buf.push_use(dst.use_on(stream, Access::Write)?);
        buf.push(n as i64);
        buf.push_memory(&scratch, stream, Access::Write)?;
        buf.push(*ahead);
        let config = LaunchConfig::linear(tiles as u32, rendered.block_size);
        // SAFETY: the kernel was generated for this element type and reads n elements at
        // `src`, writes n at `dst` (both checked: contiguous arrays of n elements, the
        // same or disjoint); one block per tile, each taking a distinct tile from the
        // zeroed counter in `scratch`, whose status words (zeroed, one set per tile) are
        // all it touches there. Its prefetches stay below n and change nothing.
        unsafe { function.launch_args(config, stream, &buf)? };
        // `scratch` is freed here, ordered on `stream` after the scan.
        Ok(())
    }

    fn loaded(&self, stream: &Stream, variant: Variant, large: bool) -> Result<Arc<Loaded>> {
        let ctx = stream.context();
        let key = (ctx.id(), variant, large);
        let mut map = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = map.get(&key) {
            return Ok(Arc::clone(l));
        }
        let tuning = if large {
            self.tuning_for(ctx)?
        } else {
            self.tuning()
        };
        let rendered = self.spec.render_tuned(variant, tuning)?;
        let [function] = load_kernels(&*self.compiler, ctx, &rendered.source, [&*rendered.entry])?;
        let facts = DeviceFacts::of(ctx)?;
        // The tiles its resident blocks hold: the prefetched ones must fit beside them.
        let blocks = function.max_active_blocks_per_multiprocessor(
            rendered.block_size,
            0,
            OccupancyFlags::DEFAULT,
        )?;
        let wave_bytes = u64::from(blocks.max(1))
            * u64::from(facts.multiprocessors)
            * tuning.tile_bytes() as u64;
        let tiles_ahead =
            facts.tiles_ahead_beside(tuning.prefetch, tuning.tile_bytes(), wave_bytes);
        let ahead = i64::try_from(tiles_ahead.saturating_mul(rendered.tile_elements as u64))
            .unwrap_or(i64::MAX);
        let loaded = Arc::new(Loaded {
            function,
            rendered,
            ahead,
            wave_bytes,
        });
        map.insert(key, Arc::clone(&loaded));
        Ok(loaded)
    }
}

macro_rules! named_scan {
    ($(#[$doc:meta])* $name:ident, $kind:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name(ScanKernel);

        impl $name {
            /// PyCUDA's form: element type, operator over `a` and `b`, its neutral
            /// element (kernel name `scan`).
            ///
            /// # Safety
            /// As for [`ScanKernel::from_spec`]: the operator runs as written.
            pub unsafe fn new(dtype: DType, scan_expr: &str, neutral: &str) -> Result<$name> {
                let builder = ScanSpec::builder(dtype).scan(scan_expr).neutral(neutral);
                // SAFETY: forwarded contract.
                unsafe { Self::from_builder(builder) }
            }

            /// With a preamble and a name of your own (the builder's kind is replaced).
            ///
            /// # Safety
            /// As for [`ScanKernel::from_spec`].
            pub unsafe fn from_builder(builder: super::ScanBuilder) -> Result<$name> {
                let spec = builder.kind($kind).build()?;
                // SAFETY: forwarded contract.
                Ok($name(unsafe { ScanKernel::from_spec(spec) }))
            }

            /// The kernel behind it.
            pub fn kernel(&self) -> &ScanKernel {
                &self.0
            }

            /// The kernel behind it, by value.
            pub fn into_kernel(self) -> ScanKernel {
                self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = ScanKernel;
            fn deref(&self) -> &ScanKernel {
                &self.0
            }
        }
    };
}

named_scan!(
    /// PyCUDA's `InclusiveScanKernel`: `out[i] = x[0] ⊕ … ⊕ x[i]`.
    ///
    /// ```no_run
    /// use rucuda_array::{DType, GpuArray, scan::InclusiveScanKernel};
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let cumsum = unsafe { InclusiveScanKernel::new(DType::F32, "a + b", "0") }?;
    /// let mut x = GpuArray::from_slice(&stream, &[1.0f32, 2.0, 3.0])?;
    /// cumsum.call_in_place(&stream, &mut x)?;
    /// assert_eq!(x.to_vec()?, vec![1.0, 3.0, 6.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    InclusiveScanKernel,
    ScanKind::Inclusive
);

impl InclusiveScanKernel {
    /// PyCUDA's `InclusiveScanKernel(dtype, scan_expr)` with no neutral element: the
    /// operator is applied only to values that hold elements (see [`ScanSpec`]), so it
    /// needs no identity (a max-scan of floats without `-inf`, a product of matrices).
    ///
    /// ```no_run
    /// use rucuda_array::{DType, GpuArray, scan::InclusiveScanKernel};
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let running_max = unsafe { InclusiveScanKernel::without_neutral(DType::F32, "fmaxf(a, b)") }?;
    /// let mut x = GpuArray::from_slice(&stream, &[-3.0f32, -5.0, -1.0, -2.0])?;
    /// running_max.call_in_place(&stream, &mut x)?;
    /// assert_eq!(x.to_vec()?, vec![-3.0, -3.0, -1.0, -1.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    ///
    /// # Safety
    /// As for [`ScanKernel::from_spec`]: the operator runs as written.
    pub unsafe fn without_neutral(dtype: DType, scan_expr: &str) -> Result<InclusiveScanKernel> {
        let builder = ScanSpec::builder(dtype).scan(scan_expr);
        // SAFETY: forwarded contract.
        unsafe { Self::from_builder(builder) }
    }
}

named_scan!(
    /// PyCUDA's `ExclusiveScanKernel`: `out[i] = neutral ⊕ x[0] ⊕ … ⊕ x[i-1]`.
    ///
    /// ```no_run
    /// use rucuda_array::{DType, GpuArray, scan::ExclusiveScanKernel};
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let offsets = unsafe { ExclusiveScanKernel::new(DType::I64, "a + b", "0") }?;
    /// let sizes = GpuArray::from_slice(&stream, &[3i64, 0, 2, 5])?;
    /// let mut out = GpuArray::<i64>::empty(&stream, &[4])?;
    /// offsets.call(&stream, &sizes, &mut out)?;
    /// assert_eq!(out.to_vec()?, vec![0, 3, 3, 5]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    ExclusiveScanKernel,
    ScanKind::Exclusive
);

/// The memoized `cumsum` kernel of `dtype` (`a + b` from 0).
pub(crate) fn cumsum_kernel(dtype: DType) -> Result<Arc<ScanKernel>> {
    static MEMO: std::sync::OnceLock<Mutex<HashMap<DType, Arc<ScanKernel>>>> =
        std::sync::OnceLock::new();
    let memo = MEMO.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = memo.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(k) = map.get(&dtype) {
        return Ok(Arc::clone(k));
    }
    let spec = ScanSpec::builder(dtype)
        .scan("a + b")
        .neutral("0")
        .name("gpuarray_cumsum")
        .build()?;
    let k = Arc::new(ScanKernel::from_trusted_spec(spec));
    map.insert(dtype, Arc::clone(&k));
    Ok(k)
}
