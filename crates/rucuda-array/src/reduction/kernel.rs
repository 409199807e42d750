//! [`ReductionKernel`]: a spec plus its compiled variants per context, and calls that
//! check every argument, pick the fastest variant the arrays allow, and launch one or
//! two kernels.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rucuda_driver::{
    Access, ArgBuffer, DeviceAttribute, DeviceBuffer, DevicePointerArg, DevicePtr, DeviceRange,
    DeviceRepr, Function, InUse, LaunchConfig, OccupancyFlags, Stream,
};

use super::render::{tile_plan, RenderedReduction, TilePlan, Variant, BLOCK_SIZE};
use super::{ReductionSpec, ReductionType};
use crate::array::GpuArray;
use crate::codegen::CodegenError;
use crate::compile::{default_compiler, load_kernels, KernelCompiler};
use crate::device_copy;
use crate::dtype::Element;
use crate::elementwise::{ArrayValue, KernelValue};
use crate::error::{ArrayError, Result};
use crate::layout::Layout;

/// Most resident blocks per multiprocessor stage 1 is launched with.
const MAX_BLOCKS_PER_SM: u32 = 8;

/// Both stages of one variant, loaded in one context.
struct LoadedReduction {
    stage1: Function,
    stage2: Function,
    max_blocks: u32,
}

/// PyCUDA's `ReductionKernel`: `map_expr` evaluated for every index `i` of the array
/// arguments, folded with `reduce_expr` from `neutral`, compiled on first use per context
/// and variant, then cached.
///
/// One pass over the data on a persistent grid (16-byte vector loads where the arrays
/// allow, several in flight per thread), warp-shuffle trees in each block, then one
/// small block over the block partials (see [`super::render`]). Results are
/// deterministic: the same input on the same device gives the same bits.
///
/// Each call allocates its result and partials stream-ordered; so that this stays cheap
/// when calls synchronise (`call_to_host`), the first kernel loaded in a context raises
/// the device's current memory pool's release threshold from the driver's default 0 to
/// `u64::MAX` (freed memory stays in the pool for reuse, as with CuPy's and PyTorch's
/// caching allocators; a threshold already set is left alone; `MemPool::trim_to` gives
/// memory back).
///
/// `n`, the number of indices, is the length of the first array argument used only as
/// `x[i]` (else of the first array argument); every array used only as `x[i]` must have
/// that shape (any strides: non-contiguous ones are read through their strides). Arrays
/// used otherwise (`x[idx[i]]`) must be contiguous; their indices are not checked, so
/// keep them in range (the array methods `subset_*` check them for you).
///
/// ```no_run
/// use rucuda_array::{DType, GpuArray, reduction::ReductionKernel};
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// let dot = unsafe { ReductionKernel::new(DType::F32, "0", "a+b", "x[i]*y[i]",
///                                "const float *x, const float *y", "dot") }?;
/// let x = GpuArray::<f32>::arange(&stream, 0.0, 4.0, 1.0)?;
/// let y = GpuArray::<f32>::ones(&stream, &[4])?;
/// let on_device: GpuArray<f32> = dot.call(&stream, &[(&x).into(), (&y).into()])?;
/// assert_eq!(on_device.to_vec()?, vec![6.0]);
/// assert_eq!(dot.call_to_host::<f32>(&stream, &[(&x).into(), (&x).into()])?, 14.0);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub struct ReductionKernel {
    spec: ReductionSpec,
    plan: Option<TilePlan>,
    /// Per array argument (in order): its uses, if any, are all `x[i]`.
    indexed_only: Vec<bool>,
    /// Per array argument: the map expression mentions it.
    used: Vec<bool>,
    /// Per array argument: its first use other than `x[i]`.
    other_use: Vec<Option<String>>,
    compiler: Arc<dyn KernelCompiler>,
    loaded: Mutex<HashMap<(u64, Variant), Arc<LoadedReduction>>>,
}

impl std::fmt::Debug for ReductionKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReductionKernel")
            .field("spec", &self.spec)
            .field("plan", &self.plan)
            .finish()
    }
}

/// One array argument of a call.
struct CallArray<'a> {
    vector_index: usize,
    value: &'a ArrayValue<'a>,
}

impl ReductionKernel {
    /// PyCUDA's form: output type, neutral, reduce expression (over `a`, `b`), map
    /// expression (over `i` and the arguments), C argument list, name.
    ///
    /// # Safety
    /// The expressions are CUDA C run as written: the map expression may read only
    /// element `i` of each array argument it indexes as `x[i]`, or elements that lie
    /// inside the arrays it indexes otherwise, and neither expression may have undefined
    /// behaviour. The library's built-in reductions are safe because it generates them.
    ///
    /// ```compile_fail,E0133
    /// #![forbid(unsafe_code)]
    /// use rucuda_array::{DType, reduction::ReductionKernel};
    /// let k = ReductionKernel::new(DType::F32, "0", "a+b", "x[i + 1000000]", "const float *x", "oob");
    /// ```
    pub unsafe fn new(
        dtype_out: crate::DType,
        neutral: &str,
        reduce_expr: &str,
        map_expr: &str,
        arguments: &str,
        name: &str,
    ) -> Result<ReductionKernel> {
        let spec =
            ReductionSpec::parse(dtype_out, neutral, reduce_expr, map_expr, arguments, name)?;
        // SAFETY: forwarded contract.
        Ok(unsafe { ReductionKernel::from_spec(spec) })
    }

    /// From a spec made with [`ReductionSpec::builder`] (preamble, struct types,
    /// accumulator type).
    ///
    /// # Safety
    /// As for [`ReductionKernel::new`]: the spec's expressions and preamble run as
    /// written.
    pub unsafe fn from_spec(spec: ReductionSpec) -> ReductionKernel {
        ReductionKernel::from_trusted_spec(spec)
    }

    /// From a spec the library generated itself (its built-in reductions).
    pub(crate) fn from_trusted_spec(spec: ReductionSpec) -> ReductionKernel {
        let analysis = spec.analysis();
        let vectors: Vec<&str> = spec
            .args
            .iter()
            .filter(|a| a.is_vector())
            .map(|a| a.name())
            .collect();
        let usage = |n: &str| analysis.usage(n).cloned().unwrap_or_default();
        let indexed_only = vectors.iter().map(|n| usage(n).only_at_i()).collect();
        let used = vectors
            .iter()
            .map(|n| {
                let u = usage(n);
                !u.indexed.is_empty() || u.other_use.is_some()
            })
            .collect();
        let other_use = vectors.iter().map(|n| usage(n).other_use).collect();
        ReductionKernel {
            plan: tile_plan(&spec),
            spec,
            indexed_only,
            used,
            other_use,
            compiler: default_compiler(),
            loaded: Mutex::new(HashMap::new()),
        }
    }

    /// Uses `compiler` instead of the default.
    pub fn with_compiler(mut self, compiler: Arc<dyn KernelCompiler>) -> Self {
        self.compiler = compiler;
        self
    }

    /// The definition.
    pub fn spec(&self) -> &ReductionSpec {
        &self.spec
    }

    /// The generated source of a variant (for inspection and tests).
    pub fn source(&self, variant: &Variant) -> Result<RenderedReduction> {
        self.spec.render(variant)
    }

    /// The reduction as a device scalar (a 0-d array) of type `T`, ordered on `stream`
    /// (no wait). `T` must be the output type.
    pub fn call<T: Element>(
        &self,
        stream: &Stream,
        args: &[KernelValue<'_>],
    ) -> Result<GpuArray<T>> {
        self.check_output(&ReductionType::DType(T::DTYPE), "result")?;
        let out = GpuArray::<T>::empty(stream, &[])?;
        self.launch_into(stream, args, out.memory().elements(out.nbytes())?)?;
        Ok(out)
    }

    /// Writes the reduction into `out` (one element of the output type), ordered on
    /// `stream`.
    pub fn call_into<T: Element>(
        &self,
        stream: &Stream,
        args: &[KernelValue<'_>],
        out: &mut GpuArray<T>,
    ) -> Result<()> {
        self.check_output(&ReductionType::DType(T::DTYPE), "out")?;
        if out.len() != 1 {
            return Err(CodegenError::ArgumentType {
                kernel: self.spec.name.clone(),
                name: "out".into(),
                expected: format!("one {} element", T::DTYPE),
                got: format!("an array of shape {:?}", out.shape()),
            }
            .into());
        }
        if out.context() != stream.context() {
            return Err(ArrayError::ContextMismatch);
        }
        self.launch_into(stream, args, out.memory().elements(out.nbytes())?)
    }

    /// The reduction brought to the host (waits for `stream`).
    pub fn call_to_host<T: Element>(&self, stream: &Stream, args: &[KernelValue<'_>]) -> Result<T> {
        let out = self.call::<T>(stream, args)?;
        to_host_scalar(&out)
    }

    /// A struct-typed reduction into a one-element device buffer, ordered on `stream`.
    /// `S` must have the size and alignment the spec declared (e.g. through
    /// [`super::ReductionBuilder::output_struct`]).
    pub fn call_struct<S: DeviceRepr>(
        &self,
        stream: &Stream,
        args: &[KernelValue<'_>],
    ) -> Result<DeviceBuffer<S>> {
        let want = match &self.spec.output {
            ReductionType::Struct { c_name, .. } => ReductionType::structure(
                c_name.clone(),
                std::mem::size_of::<S>(),
                std::mem::align_of::<S>(),
            ),
            other => ReductionType::structure(
                format!("a Rust struct instead of {}", other.describe()),
                std::mem::size_of::<S>(),
                std::mem::align_of::<S>(),
            ),
        };
        self.check_output(&want, "result")?;
        let out = DeviceBuffer::<S>::uninit_async(stream, 1)?;
        self.launch_into(stream, args, out.device_range())?;
        Ok(out)
    }

    /// A struct-typed reduction brought to the host (waits for `stream`).
    pub fn call_struct_to_host<S: DeviceRepr + bytemuck::Pod>(
        &self,
        stream: &Stream,
        args: &[KernelValue<'_>],
    ) -> Result<S> {
        let out = self.call_struct::<S>(stream, args)?;
        let mut host = [S::zeroed()];
        device_copy::device_to_host(stream, out.device_range(), &mut host)?;
        Ok(host[0])
    }

    fn check_output(&self, got: &ReductionType, what: &str) -> Result<()> {
        let out = &self.spec.output;
        let same = match (out, got) {
            (ReductionType::DType(a), ReductionType::DType(b)) => a == b,
            (
                ReductionType::Struct {
                    c_name,
                    size,
                    align,
                },
                ReductionType::Struct {
                    c_name: n2,
                    size: s2,
                    align: a2,
                },
            ) => c_name == n2 && size == s2 && align == a2,
            _ => false,
        };
        if same {
            Ok(())
        } else {
            Err(CodegenError::ArgumentType {
                kernel: self.spec.name.clone(),
                name: what.into(),
                expected: out.describe(),
                got: got.describe(),
            }
            .into())
        }
    }

    /// Checks the arguments, picks the variant and launches; the result goes to `out`.
    fn launch_into(
        &self,
        stream: &Stream,
        args: &[KernelValue<'_>],
        out: DeviceRange<'_>,
    ) -> Result<()> {
        let converted =
            crate::elementwise::convert_scalars(&self.spec.name, &self.spec.args, args)?;
        let args = &*converted;
        let arrays = self.check_args(stream, args)?;
        let kernel = &self.spec.name;
        let name_of = |a: &CallArray<'_>| self.vector_name(a.vector_index);
        let indexed: Vec<&CallArray<'_>> = arrays
            .iter()
            .filter(|a| self.indexed_only[a.vector_index] && self.used[a.vector_index])
            .collect();
        let defining = indexed.first().copied().or(arrays.first());
        let Some(defining) = defining else {
            return Err(CodegenError::NoVectorArgument(kernel.clone()).into());
        };
        let shape = defining.value.layout.shape();
        let n = defining.value.layout.len();
        for a in &indexed {
            if a.value.layout.shape() != shape {
                return Err(CodegenError::ShapeMismatch {
                    kernel: kernel.clone(),
                    name: name_of(a),
                    expected: shape.to_vec(),
                    got: a.value.layout.shape().to_vec(),
                }
                .into());
            }
        }
        for a in &arrays {
            if let Some(usage) = &self.other_use[a.vector_index] {
                if !a.value.layout.is_c_contiguous() {
                    return Err(CodegenError::StridedUnsupported {
                        kernel: kernel.clone(),
                        name: name_of(a),
                        usage: usage.clone(),
                    }
                    .into());
                }
            }
        }
        let mut extra: Vec<i64> = Vec::new();
        let all_contiguous = indexed.iter().all(|a| a.value.layout.is_c_contiguous());
        let (variant, work) = if all_contiguous {
            match &self.plan {
                Some(plan)
                    if indexed
                        .iter()
                        .filter(|a| plan.tiled.contains(&name_of(a)))
                        .all(|a| a.value.mem.is_aligned(16)) =>
                {
                    (Variant::Vectorized, (n / plan.k).max(1))
                }
                _ => (Variant::Contiguous, n),
            }
        } else {
            let layouts: Vec<&Layout> = indexed.iter().map(|a| a.value.layout).collect();
            let (cshape, cstrides) = Layout::coalesce(&layouts);
            let c_strides = Layout::c_contiguous(&cshape)?.strides().to_vec();
            let mut strided = vec![false; self.indexed_only.len()];
            for (a, s) in indexed.iter().zip(&cstrides) {
                strided[a.vector_index] = *s != c_strides;
            }
            extra.extend(cshape.iter().map(|&d| d as i64));
            for (a, s) in indexed.iter().zip(&cstrides) {
                if strided[a.vector_index] {
                    extra.extend(s.iter().map(|&v| v as i64));
                }
            }
            (
                Variant::Strided {
                    ndim: cshape.len(),
                    strided,
                },
                n,
            )
        };
        let loaded = self.loaded(stream, &variant)?;
        let per_block = BLOCK_SIZE as usize * crate::launch_shape::reduce_work_per_thread();
        let blocks = work
            .div_ceil(per_block)
            .clamp(1, loaded.max_blocks.max(1) as usize) as u32;
        let partials = if blocks > 1 {
            Some(DeviceBuffer::<u8>::uninit_async(
                stream,
                blocks as usize * self.spec.accumulator.size_bytes(),
            )?)
        } else {
            None
        };
        let partials_use = match &partials {
            Some(p) => Some(p.device_range().use_on(stream, Access::Write)?),
            None => None,
        };
        let out = out.use_on(stream, Access::Write)?;
        let mut buf = ArgBuffer::new();
        for v in args {
            match v {
                KernelValue::Scalar(s) => s.push_to(&mut buf),
                KernelValue::Array(a) => {
                    buf.push_use(a.use_on(stream)?);
                }
            }
        }
        buf.push(DevicePointerArg(
            partials_use.as_ref().map_or(0, InUse::ptr),
        ));
        buf.push(DevicePointerArg(out.ptr()));
        buf.push(n as i64);
        for e in extra {
            buf.push(e);
        }
        // SAFETY: the kernel was generated from this spec, so its parameters are the
        // packed values in order (types checked in check_args, sizes by the launch check).
        // Arrays used as `x[i]` hold the `n` indices it visits (same shape, their own
        // strides for the strided variant, checked against their buffers when made);
        // other arrays are read where the user's expression says (documented). Stage 1
        // writes `blocks` partials into a buffer of that many accumulators, or, with one
        // block, one output value to `out`, which the callers allocate or check. Both
        // stages wait for their predecessor first (the template's first statement, checked
        // by `every_variant_waits_for_its_predecessor_first`), so they may launch as
        // programmatic dependent launches.
        unsafe {
            loaded.stage1.launch_args_programmatic(
                LaunchConfig::linear(blocks, BLOCK_SIZE),
                stream,
                &buf,
            )?
        };
        if let Some(partials) = &partials {
            let mut buf2 = ArgBuffer::new();
            buf2.push_memory(partials, stream, Access::Read)?;
            buf2.push(DevicePointerArg(out.ptr()));
            buf2.push(blocks as i64);
            // SAFETY: stage 2 reads the `blocks` partials stage 1 wrote (ordered before it
            // on `stream`) and writes one output value to `out`.
            unsafe {
                loaded.stage2.launch_args_programmatic(
                    LaunchConfig::linear(1, BLOCK_SIZE),
                    stream,
                    &buf2,
                )?
            };
        }
        // `partials` is freed here, ordered on `stream` after both launches.
        Ok(())
    }

    fn vector_name(&self, vector_index: usize) -> String {
        self.spec
            .args
            .iter()
            .filter(|a| a.is_vector())
            .nth(vector_index)
            .map_or_else(String::new, |a| a.name().to_string())
    }

    /// Checks count, kinds, types and context; returns the array arguments.
    fn check_args<'v>(
        &self,
        stream: &Stream,
        args: &'v [KernelValue<'v>],
    ) -> Result<Vec<CallArray<'v>>> {
        let kernel = &self.spec.name;
        if args.len() != self.spec.args.len() {
            return Err(CodegenError::ArgumentCount {
                kernel: kernel.clone(),
                expected: self.spec.args.len(),
                given: args.len(),
            }
            .into());
        }
        let mut arrays = Vec::new();
        for (spec, value) in self.spec.args.iter().zip(args) {
            let ok = match value {
                KernelValue::Scalar(s) => !spec.is_vector() && s.dtype() == spec.dtype(),
                KernelValue::Array(a) => spec.is_vector() && a.dtype == spec.dtype(),
            };
            if !ok {
                return Err(CodegenError::ArgumentType {
                    kernel: kernel.clone(),
                    name: spec.name().to_string(),
                    expected: if spec.is_vector() {
                        format!("{} array", spec.dtype())
                    } else {
                        format!("{} scalar", spec.dtype())
                    },
                    got: value.describe(),
                }
                .into());
            }
            if let KernelValue::Array(a) = value {
                if a.stream.context() != stream.context() {
                    return Err(ArrayError::ContextMismatch);
                }
                arrays.push(CallArray {
                    vector_index: arrays.len(),
                    value: a,
                });
            }
        }
        Ok(arrays)
    }

    fn loaded(&self, stream: &Stream, variant: &Variant) -> Result<Arc<LoadedReduction>> {
        let ctx = stream.context();
        let key = (ctx.id(), variant.clone());
        let mut map = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = map.get(&key) {
            return Ok(Arc::clone(l));
        }
        let rendered = self.spec.render(variant)?;
        let names = [&*rendered.stage1, &*rendered.stage2];
        let [stage1, stage2] = load_kernels(&*self.compiler, ctx, &rendered.source, names)?;
        let sms = ctx
            .device()
            .attribute(DeviceAttribute::MultiprocessorCount)?
            .max(1) as u32;
        let per_sm = stage1
            .max_active_blocks_per_multiprocessor(BLOCK_SIZE, 0, OccupancyFlags::DEFAULT)?
            .clamp(1, MAX_BLOCKS_PER_SM);
        let l = Arc::new(LoadedReduction {
            stage1,
            stage2,
            max_blocks: sms.saturating_mul(per_sm),
        });
        map.insert(key, Arc::clone(&l));
        Ok(l)
    }
}

/// The single element of a one-element array, on the host.
pub(crate) fn to_host_scalar<T: Element>(a: &GpuArray<T>) -> Result<T> {
    let v = a.to_vec()?;
    v.first().copied().ok_or(ArrayError::LengthMismatch {
        device: a.len(),
        host: 1,
    })
}
