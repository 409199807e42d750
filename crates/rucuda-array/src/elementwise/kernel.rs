//! [`ElementwiseKernel`]: a spec plus the compiled variants per context, and calls that
//! check every argument, pick the fastest variant that fits the arrays, and launch.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rucuda_driver::{ArgBuffer, DeviceAttribute, Function, LaunchConfig, Stream};

use super::call_args::{convert_scalars, ArrayValue, KernelValue};
use super::render::{RenderedKernel, Variant};
use super::ElementwiseSpec;
use crate::codegen::{ArgSpec, CodegenError};
use crate::compile::{default_compiler, load_kernels, KernelCompiler};
use crate::error::{ArrayError, Result};
use crate::layout::{broadcast_shapes_many, Layout};

#[cfg(test)]
#[path = "range_tests.rs"]
mod range_tests;

/// Threads per block of elementwise launches.
pub const DEFAULT_BLOCK_SIZE: u32 = 256;
/// Blocks per multiprocessor a grid-stride launch is capped at.
const BLOCKS_PER_SM: u32 = 16;

#[derive(Clone)]
struct LoadedVariant {
    function: Function,
    max_blocks: u32,
}

/// PyCUDA's `ElementwiseKernel`: an operation run for every index `i` of its array
/// arguments, compiled on first use per context and per variant, then cached.
///
/// Calls check each argument against its declaration (kind, element type, mutability
/// for arrays the operation writes; a scalar of another type is converted to the
/// declared one as PyCUDA packs it, see [`ScalarValue::convert_to`](crate::elementwise::ScalarValue::convert_to)),
/// broadcast the array shapes (NumPy rules; written
/// arrays must have the full shape), and choose the variant:
/// contiguous and 16-byte aligned arrays used only as `x[i]` get the vectorized kernel;
/// other contiguous ones the plain grid-stride kernel; non-contiguous or broadcast
/// arrays the strided kernel (refused with a clear error when the operation uses such
/// an array other than as `x[i]`).
///
/// ```no_run
/// use rucuda_array::{GpuArray, elementwise::ElementwiseKernel};
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// let lin = unsafe { ElementwiseKernel::new(
///     "float a, const float *x, float b, const float *y, float *z",
///     "z[i] = a * x[i] + b * y[i]",
///     "lin_comb",
/// ) }?;
/// let x = GpuArray::<f32>::arange(&stream, 0.0, 1000.0, 1.0)?;
/// let y = GpuArray::<f32>::ones(&stream, &[1000])?;
/// let mut z = GpuArray::<f32>::empty(&stream, &[1000])?;
/// lin.call(&stream, &[2.0f32.into(), (&x).into(), 5.0f32.into(), (&y).into(), (&mut z).into()])?;
/// assert_eq!(z.to_vec()?[10], 25.0);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub struct ElementwiseKernel {
    spec: ElementwiseSpec,
    /// Per array argument (in order): the operation writes it.
    written: Vec<bool>,
    vectorizable: bool,
    /// Arrays are used only as `x[i]` and `i` only as such a subscript: the elements may
    /// be visited in any order shared by all arrays (all F-ordered arrays take the
    /// contiguous variants).
    any_dense_order: bool,
    block_size: u32,
    compiler: Arc<dyn KernelCompiler>,
    loaded: Mutex<HashMap<(u64, Variant), LoadedVariant>>,
}

impl std::fmt::Debug for ElementwiseKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElementwiseKernel")
            .field("spec", &self.spec)
            .field("vectorizable", &self.vectorizable)
            .field("block_size", &self.block_size)
            .finish()
    }
}

/// One array argument of a call, resolved against the broadcast shape.
struct CallArray<'a> {
    spec_index: usize,
    value: &'a ArrayValue<'a>,
    layout: Layout,
}

impl ElementwiseKernel {
    /// PyCUDA's form: C argument list, operation, kernel name.
    ///
    /// # Safety
    /// The operation is CUDA C run as written: for every index `i` it may touch only
    /// element `i` of each array argument (`x[i]`), or elements that lie inside an
    /// array it indexes otherwise, and must be free of undefined behaviour. Safe code
    /// cannot check this; the library's own kernels (operators, `cumath`, fusion) are
    /// safe because it generates them.
    ///
    /// Calling it from safe code does not compile:
    ///
    /// ```compile_fail,E0133
    /// #![forbid(unsafe_code)]
    /// let k = rucuda_array::ElementwiseKernel::new("float *y", "y[i + 100000000] = 1", "oob");
    /// ```
    pub unsafe fn new(arguments: &str, operation: &str, name: &str) -> Result<ElementwiseKernel> {
        let spec = ElementwiseSpec::parse(arguments, operation, name)?;
        // SAFETY: forwarded contract.
        Ok(unsafe { ElementwiseKernel::from_spec(spec) })
    }

    /// From a spec made with [`ElementwiseSpec::builder`].
    ///
    /// # Safety
    /// As for [`ElementwiseKernel::new`]: the spec's operation and preamble run as
    /// written.
    pub unsafe fn from_spec(spec: ElementwiseSpec) -> ElementwiseKernel {
        let analysis = spec.analysis();
        let written = spec
            .args
            .iter()
            .filter(|a| a.is_vector())
            .map(|a| analysis.usage(a.name()).is_some_and(|u| u.written))
            .collect();
        let vectorizable = spec.vectorizable();
        let any_dense_order = vectorizable && spec.index_only_in_subscripts();
        ElementwiseKernel {
            spec,
            written,
            vectorizable,
            any_dense_order,
            block_size: DEFAULT_BLOCK_SIZE,
            compiler: default_compiler(),
            loaded: Mutex::new(HashMap::new()),
        }
    }

    /// Uses `compiler` instead of the default.
    pub fn with_compiler(mut self, compiler: Arc<dyn KernelCompiler>) -> Self {
        self.compiler = compiler;
        self
    }

    /// Launches with `threads` per block (default 256).
    pub fn with_block_size(mut self, threads: u32) -> Self {
        self.block_size = threads.max(32);
        self
    }

    /// The definition.
    pub fn spec(&self) -> &ElementwiseSpec {
        &self.spec
    }

    /// The generated source of a variant (for inspection and tests).
    pub fn source(&self, variant: &Variant) -> Result<RenderedKernel> {
        self.spec.render(variant)
    }

    /// Runs the operation for every index of the (broadcast) array arguments, ordered
    /// on `stream`.
    pub fn call(&self, stream: &Stream, args: &[KernelValue<'_>]) -> Result<()> {
        let converted = convert_scalars(&self.spec.name, &self.spec.args, args)?;
        let args = &*converted;
        let (scalars_and_arrays, arrays) = self.check_args(stream, args)?;
        let shapes: Vec<&[usize]> = arrays.iter().map(|a| a.value.layout.shape()).collect();
        let shape = broadcast_shapes_many(&shapes)?;
        let mut resolved = Vec::with_capacity(arrays.len());
        for (k, a) in arrays.iter().enumerate() {
            let layout = a.value.layout.broadcast_to(&shape)?;
            if self.written[k]
                && (a.value.layout.shape() != shape.as_slice() || layout.has_broadcast_axes())
            {
                if a.value.layout.shape() != shape.as_slice() {
                    return Err(CodegenError::ShapeMismatch {
                        kernel: self.spec.name.clone(),
                        name: self.spec.args[a.spec_index].name().to_string(),
                        expected: shape.clone(),
                        got: a.value.layout.shape().to_vec(),
                    }
                    .into());
                }
                return Err(ArrayError::WriteToBroadcast {
                    shape: layout.shape().to_vec(),
                    strides: layout.strides().to_vec(),
                });
            }
            resolved.push(CallArray {
                spec_index: a.spec_index,
                value: a.value,
                layout,
            });
        }
        let n = resolved.first().map_or(0, |a| a.layout.len());
        if n == 0 {
            return Ok(());
        }
        let all_contiguous = resolved.iter().all(|a| a.layout.is_c_contiguous())
            || (self.any_dense_order && one_dense_order(resolved.iter().map(|a| &a.layout)));
        let mut extra: Vec<i64> = vec![n as i64];
        let (variant, work) = if all_contiguous {
            let aligned = resolved.iter().all(|a| a.value.mem.is_aligned(16));
            if self.vectorizable && aligned {
                let k = super::render::tile_elements(&self.spec);
                (Variant::Vectorized, n.div_ceil(k))
            } else {
                (Variant::Contiguous, n)
            }
        } else {
            let layouts: Vec<&Layout> = resolved.iter().map(|a| &a.layout).collect();
            let (cshape, cstrides) = Layout::coalesce(&layouts);
            let c_strides = Layout::c_contiguous(&cshape)?.strides().to_vec();
            let strided: Vec<bool> = cstrides.iter().map(|s| *s != c_strides).collect();
            extra.extend(cshape.iter().map(|&d| d as i64));
            for (k, s) in cstrides.iter().enumerate() {
                if strided[k] {
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
        self.launch(stream, &variant, work, &scalars_and_arrays, &extra)
    }

    /// PyCUDA's ranged call (`range=`): the operation for `i = start, start + step, ...`
    /// while `i < stop` (or `i > stop` for a negative step), as Python's
    /// `range(start, stop, step)`. Every array must be contiguous and hold every index
    /// reached.
    ///
    /// Bounds are indices, never counted from the end: a negative `start`, or a negative
    /// `stop` with a positive step (a range that would silently visit nothing), is
    /// refused with [`CodegenError::NegativeRangeBound`]; `stop == -1` with a negative
    /// step walks down to index 0. For Python's slice semantics (negative bounds from
    /// the end, clamping) use [`ElementwiseKernel::call_slice`]. An empty range such as
    /// `(5, 3, 1)` runs nothing, as Python's does.
    ///
    /// ```no_run
    /// use rucuda_array::{GpuArray, elementwise::ElementwiseKernel};
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let k = unsafe { ElementwiseKernel::new("int *x", "x[i] = i", "mark") }?;
    /// let mut x = GpuArray::<i32>::zeros(&stream, &[8])?;
    /// k.call_range(&stream, 7, 0, -3, &[(&mut x).into()])?;
    /// assert_eq!(x.to_vec()?, vec![0, 1, 0, 0, 4, 0, 0, 7]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn call_range(
        &self,
        stream: &Stream,
        start: i64,
        stop: i64,
        step: i64,
        args: &[KernelValue<'_>],
    ) -> Result<()> {
        if step == 0 {
            return Err(CodegenError::ZeroStep.into());
        }
        if start < 0 || (step > 0 && stop < 0) {
            return Err(CodegenError::NegativeRangeBound { start, stop, step }.into());
        }
        let converted = convert_scalars(&self.spec.name, &self.spec.args, args)?;
        let args = &*converted;
        let (values, arrays) = self.check_args(stream, args)?;
        let count = range_count(start, stop, step);
        if count == 0 {
            return Ok(());
        }
        let last = start + (count as i64 - 1) * step;
        let (lo, hi) = (start.min(last), start.max(last));
        for a in &arrays {
            let len = a.value.layout.len();
            if !a.value.layout.is_c_contiguous() {
                return Err(CodegenError::StridedUnsupported {
                    kernel: self.spec.name.clone(),
                    name: self.spec.args[a.spec_index].name().to_string(),
                    usage: "a ranged call".into(),
                }
                .into());
            }
            if lo < 0 || hi >= len as i64 {
                return Err(CodegenError::RangeOutOfBounds {
                    start,
                    stop,
                    step,
                    reach: if lo < 0 { lo } else { hi },
                    name: self.spec.args[a.spec_index].name().to_string(),
                    len,
                }
                .into());
            }
        }
        let n = arrays.first().map_or(0, |a| a.value.layout.len());
        let extra = [n as i64, start, stop, step];
        self.launch(stream, &Variant::Ranged, count, &values, &extra)
    }

    /// PyCUDA's sliced call (`slice=`): the indices `start:stop:step` of the first array
    /// argument's length, with Python's slice semantics (`None` for the defaults of the
    /// step's direction, negative bounds counting from the end, bounds past either end
    /// clamped), then run as [`ElementwiseKernel::call_range`] runs its range.
    ///
    /// ```no_run
    /// use rucuda_array::{GpuArray, elementwise::ElementwiseKernel};
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let k = unsafe { ElementwiseKernel::new("int *x", "x[i] = 1", "mark") }?;
    /// let mut x = GpuArray::<i32>::zeros(&stream, &[6])?;
    /// k.call_slice(&stream, Some(-3), None, 1, &[(&mut x).into()])?; // the last three
    /// assert_eq!(x.to_vec()?, vec![0, 0, 0, 1, 1, 1]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn call_slice(
        &self,
        stream: &Stream,
        start: Option<i64>,
        stop: Option<i64>,
        step: i64,
        args: &[KernelValue<'_>],
    ) -> Result<()> {
        if step == 0 {
            return Err(CodegenError::ZeroStep.into());
        }
        let (_, arrays) = self.check_args(stream, args)?;
        let n = arrays.first().map_or(0, |a| a.value.layout.len());
        let (first, count, step) = resolve_slice(start, stop, step, n)?;
        if count == 0 {
            return Ok(());
        }
        let stop = first + count as i64 * step;
        // A resolved slice that ends at -1 (walking down to 0) is a valid range.
        self.call_range(stream, first, stop, step, args)
    }

    /// Checks count, kinds, types, mutability and context; returns the values in order
    /// and the array arguments.
    fn check_args<'v>(
        &self,
        stream: &Stream,
        args: &'v [KernelValue<'v>],
    ) -> Result<(Vec<&'v KernelValue<'v>>, Vec<CallArray<'v>>)> {
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
        let mut vector_index = 0usize;
        for (k, (spec, value)) in self.spec.args.iter().zip(args).enumerate() {
            let mismatch = |expected: String| -> ArrayError {
                CodegenError::ArgumentType {
                    kernel: kernel.clone(),
                    name: spec.name().to_string(),
                    expected,
                    got: value.describe(),
                }
                .into()
            };
            match value {
                KernelValue::Scalar(s) => {
                    if spec.is_vector() || s.dtype() != spec.dtype() {
                        return Err(mismatch(describe_spec(spec)));
                    }
                }
                KernelValue::Array(a) => {
                    if !spec.is_vector() || a.dtype != spec.dtype() {
                        return Err(mismatch(describe_spec(spec)));
                    }
                    if self.written[vector_index] && !a.mutable {
                        return Err(mismatch(format!(
                            "{} (the operation writes it: pass `&mut`)",
                            describe_spec(spec)
                        )));
                    }
                    if a.stream.context() != stream.context() {
                        return Err(ArrayError::ContextMismatch);
                    }
                    arrays.push(CallArray {
                        spec_index: k,
                        value: a,
                        layout: a.layout.clone(),
                    });
                    vector_index += 1;
                }
            }
        }
        Ok((args.iter().collect(), arrays))
    }

    fn loaded(&self, stream: &Stream, variant: &Variant) -> Result<LoadedVariant> {
        let ctx = stream.context();
        let key = (ctx.id(), variant.clone());
        let mut map = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = map.get(&key) {
            return Ok(l.clone());
        }
        let rendered = self.spec.render(variant)?;
        let [function] = load_kernels(&*self.compiler, ctx, &rendered.source, [&*rendered.entry])?;
        let sms = ctx
            .device()
            .attribute(DeviceAttribute::MultiprocessorCount)?
            .max(1) as u32;
        let l = LoadedVariant {
            function,
            max_blocks: sms.saturating_mul(BLOCKS_PER_SM),
        };
        map.insert(key, l.clone());
        Ok(l)
    }

    fn launch(
        &self,
        stream: &Stream,
        variant: &Variant,
        work: usize,
        values: &[&KernelValue<'_>],
        extra: &[i64],
    ) -> Result<()> {
        let loaded = self.loaded(stream, variant)?;
        let mut buf = ArgBuffer::new();
        for v in values {
            match v {
                KernelValue::Scalar(s) => s.push_to(&mut buf),
                KernelValue::Array(a) => {
                    buf.push_use(a.use_on(stream)?);
                }
            }
        }
        for &e in extra {
            buf.push(e);
        }
        let blocks = work
            .div_ceil(self.block_size as usize)
            .clamp(1, loaded.max_blocks as usize) as u32;
        let cfg = LaunchConfig::linear(blocks, self.block_size);
        // SAFETY: the kernel was generated from this spec, so its parameters are the
        // packed values in order (types checked in check_args, sizes by the launch
        // check). Every index it touches is in range: contiguous variants visit 0..n
        // of arrays holding n elements from their pointers; the strided variant visits
        // each array's own layout, which was checked against its buffer; the ranged
        // variant's indices were checked against every array's length above. Every
        // rendered variant waits for its predecessor first (the template's first
        // statement, checked by `every_variant_waits_for_its_predecessor_first`), so it
        // may launch as a programmatic dependent launch.
        unsafe {
            loaded
                .function
                .launch_args_programmatic(cfg, stream, &buf)?
        };
        Ok(())
    }
}

fn describe_spec(spec: &ArgSpec) -> String {
    if spec.is_vector() {
        format!("{} array", spec.dtype())
    } else {
        format!("{} scalar", spec.dtype())
    }
}

/// Python's `slice(start, stop, step).indices(len)`: the first index, the count and the
/// step (`ArrayError::InvalidArgument` for bounds beyond `isize`).
pub(crate) fn resolve_slice(
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
    len: usize,
) -> Result<(i64, usize, i64)> {
    let to_isize = |v: i64| {
        isize::try_from(v)
            .map_err(|_| ArrayError::InvalidArgument(format!("slice bound {v} exceeds isize")))
    };
    let range = crate::layout::SliceRange {
        start: start.map(to_isize).transpose()?,
        stop: stop.map(to_isize).transpose()?,
        step: to_isize(step)?,
    };
    let (first, count) = range.resolve(len, 0)?;
    Ok((first as i64, count, step))
}

/// Number of indices `start, start + step, ...` before `stop` (Python's `len(range())`).
pub(crate) fn range_count(start: i64, stop: i64, step: i64) -> usize {
    let (span, step) = if step > 0 {
        (stop as i128 - start as i128, step as i128)
    } else {
        (start as i128 - stop as i128, -(step as i128))
    };
    if span <= 0 {
        0
    } else {
        ((span - 1) / step + 1) as usize
    }
}

/// True when every layout lies densely from element 0 up in one and the same memory
/// order (all F-ordered, say): element `k` in memory is then the same element of each.
fn one_dense_order<'l>(mut layouts: impl Iterator<Item = &'l Layout>) -> bool {
    let Some(first) = layouts.next() else {
        return true;
    };
    first.is_dense_forward() && layouts.all(|l| l.is_dense_forward() && l.same_memory_order(first))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_shared_dense_order_counts() {
        let f = Layout::f_contiguous(&[3, 4]).unwrap();
        let c = Layout::c_contiguous(&[3, 4]).unwrap();
        assert!(one_dense_order([&f, &f].into_iter()));
        assert!(one_dense_order([&c, &c].into_iter()));
        assert!(!one_dense_order([&f, &c].into_iter()));
        let reversed = f.flip(1).unwrap();
        assert!(!one_dense_order([&reversed, &reversed].into_iter()));
        let spec = ElementwiseSpec::parse("float *x, float *y", "y[i] = 2 * x[i]", "k").unwrap();
        assert!(spec.vectorizable() && spec.index_only_in_subscripts());
        let spec = ElementwiseSpec::parse("float *x, float *y", "y[i] = x[i] + i", "k").unwrap();
        assert!(!spec.index_only_in_subscripts());
    }
}
