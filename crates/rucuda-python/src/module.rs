//! `Module` and `Function`: loading device code and launching kernels with the argument
//! buffer the Python side packs (PyCUDA's struct format strings).

use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rucuda_driver::sys::{
    CUdeviceptr, CUfunction_attribute, CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT,
    CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT,
};
use rucuda_driver::LaunchConfig;

use crate::context::{current, with_pushed, InContext};
use crate::errors::{cu, raise, OrRaise};
use crate::pack::{pack_call, packed_size, Format};

/// A loaded module (PyCUDA's `Module`); it holds its context.
#[pyclass(module = "rucuda._native", frozen)]
pub struct Module {
    inner: InContext<rucuda_driver::Module>,
}

/// `module_from_buffer(image)`: loads PTX, a cubin or a fatbin into the current context.
#[pyfunction]
pub fn module_from_buffer(py: Python<'_>, image: &[u8]) -> PyResult<Module> {
    let ctx = current()?;
    let image = image.to_vec();
    let inner = py
        .allow_threads(|| rucuda_driver::Module::load_data(&ctx, &image))
        .or_raise()?;
    Ok(Module {
        inner: InContext::new(ctx, inner),
    })
}

/// `module_from_file(path)`.
#[pyfunction]
pub fn module_from_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Module> {
    let ctx = current()?;
    let inner = py
        .allow_threads(|| rucuda_driver::Module::from_file(&ctx, &path))
        .or_raise()?;
    Ok(Module {
        inner: InContext::new(ctx, inner),
    })
}

#[pymethods]
impl Module {
    fn get_function(&self, name: &str) -> PyResult<Function> {
        let ctx = self.inner.context();
        // The launch limits (parameter layout, block limits) are read here, with the
        // module's context pushed: reading them binds the function's context, which on a
        // PyCUDA-style stack would replace whatever context is on top at launch time.
        let f = with_pushed(ctx, || {
            let f = self.inner.function(name)?;
            f.param_layout()?;
            Ok::<_, rucuda_driver::Error>(f)
        })
        .or_raise()?;
        Ok(Function {
            format: std::sync::Mutex::new(None),
            overlap: AtomicBool::new(false),
            inner: InContext::new(self.inner.context().clone(), f),
        })
    }

    /// `(address, size in bytes)` of a `__device__` or `__constant__` variable.
    fn get_global(&self, name: &str) -> PyResult<(u64, usize)> {
        let c = CString::new(name)
            .map_err(|_| raise("LogicError", "global name contains NUL".into()))?;
        let (mut ptr, mut bytes): (CUdeviceptr, usize) = (0, 0);
        // SAFETY: writes an address and a size; the module is alive.
        unsafe {
            cu!(cuModuleGetGlobal_v2(
                &mut ptr,
                &mut bytes,
                self.inner.raw(),
                c.as_ptr()
            ))
        }
        .map_err(|_| {
            raise(
                "LogicError",
                format!("the module has no global named `{name}`"),
            )
        })?;
        Ok((ptr, bytes))
    }
}

/// A kernel (PyCUDA's `Function`); it holds its module.
#[pyclass(module = "rucuda._native", frozen, dict, weakref)]
pub struct Function {
    inner: InContext<rucuda_driver::Function>,
    /// The `prepare` format, parsed for the Rust packer (None: not prepared, or a format
    /// only the Python path packs).
    format: std::sync::Mutex<Option<std::sync::Arc<Format>>>,
    /// Whether launches may overlap the previous kernel on their stream (see
    /// `_overlaps_predecessor`).
    overlap: AtomicBool,
}

/// Parameters whose pointers [`launch_words`] builds on the stack.
const STACK_PARAMS: usize = 16;

/// Launches `f` with `size` bytes of arguments packed in `words` (PyCUDA's struct
/// layout) on the raw stream `stream`; with `overlap`, as a programmatic dependent launch
/// where the device allows it.
///
/// Where the driver tells the kernel's parameter layout (CUDA 12.4+) and the packed bytes
/// end where the parameters do, the driver gets one pointer per parameter into `words`:
/// on an H200 that launch took 3.40 µs of host time against 4.03 for the same arguments
/// as one packed buffer (`CU_LAUNCH_PARAM_BUFFER_POINTER`). Everything else keeps the
/// packed buffer, so that the driver still refuses a buffer of the wrong size.
///
/// # Safety
/// The kernel's accesses are not checked; the caller vouches for the arguments.
/// `size <= 8 * words.len()`. With `overlap`, every thread of the kernel executes
/// `griddepcontrol.wait` before its first access to global memory.
unsafe fn launch_words(
    f: &rucuda_driver::Function,
    cfg: &LaunchConfig,
    words: &mut [u64],
    size: usize,
    stream: usize,
    overlap: bool,
) -> rucuda_driver::Result<()> {
    debug_assert!(size <= words.len() * 8);
    let stream = stream as rucuda_driver::sys::CUstream;
    if let Some(layout) = f.param_layout()? {
        let end = layout.iter().map(|&(o, n)| o + n).max().unwrap_or(0);
        if layout.len() <= STACK_PARAMS && end == size {
            let base = words.as_mut_ptr().cast::<u8>();
            let mut ptrs = [std::ptr::null_mut::<c_void>(); STACK_PARAMS];
            for (p, &(offset, _)) in ptrs.iter_mut().zip(layout) {
                // SAFETY: `offset` + the parameter's size <= `end` = `size` bytes,
                // inside `words`.
                *p = unsafe { base.add(offset) }.cast();
            }
            // SAFETY: one pointer per parameter, each to that parameter's bytes inside
            // `words`, which outlives the call; the rest is the caller's contract.
            return unsafe { f.launch_on_handle(cfg, stream, &mut ptrs[..layout.len()], overlap) };
        }
    }
    let mut size = size;
    let mut extra: [*mut c_void; 5] = [
        std::ptr::without_provenance_mut(CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT as usize),
        words.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT as usize),
        (&mut size as *mut usize).cast(),
        std::ptr::null_mut(), // CU_LAUNCH_PARAM_END (0)
    ];
    let no_extra = size == 0;
    // SAFETY: `extra` and the buffers it points to live across the call; the caller
    // vouches for the kernel's accesses.
    unsafe {
        cu!(cuLaunchKernel(
            f.raw(),
            cfg.grid.0,
            cfg.grid.1,
            cfg.grid.2,
            cfg.block.0,
            cfg.block.1,
            cfg.block.2,
            cfg.shared_mem_bytes,
            stream,
            std::ptr::null_mut(),
            if no_extra {
                std::ptr::null_mut()
            } else {
                extra.as_mut_ptr()
            }
        ))
    }
}

/// A grid or block given as a sequence of 1 to 3 integers, padded with ones (PyCUDA's
/// `grid=(n, 1)`, `block=(256, 1, 1)`); None for anything else, which the Python path
/// converts (`int()` of each item) or refuses with PyCUDA's messages.
fn dims3(obj: &Bound<'_, PyAny>) -> Option<(u32, u32, u32)> {
    let mut d = [1u32; 3];
    let mut n = 0;
    for item in obj.try_iter().ok()? {
        if n == 3 {
            return None;
        }
        d[n] = item.ok()?.extract::<u32>().ok()?;
        n += 1;
    }
    (n > 0).then_some((d[0], d[1], d[2]))
}

/// One 8-byte kernel argument: an allocation's address, or an integer (anything with
/// `__index__`; negative values as two's complement).
fn word_of(x: &Bound<'_, PyAny>) -> PyResult<u64> {
    match x.downcast::<crate::memory::DeviceAllocation>() {
        Ok(a) => Ok(a.borrow().address()),
        Err(_) => x
            .extract::<i64>()
            .map(|v| v as u64)
            .or_else(|_| x.extract::<u64>()),
    }
}

/// A launch's shape as Python gives it: grid and block sequences, shared bytes, stream.
struct Shape<'a, 'py> {
    grid: &'a Bound<'py, PyAny>,
    block: &'a Bound<'py, PyAny>,
    shared: u32,
    stream: usize,
}

impl Function {
    /// [`run`](Self::run) on a [`Shape`], first checked against the kernel's parameters
    /// when `sizes` (each argument's bytes) is given; the time (or None) for Python, or
    /// `NotImplemented` when the grid or block needs the Python path's conversions.
    ///
    /// # Safety
    /// As [`run`](Self::run).
    unsafe fn run_shaped(
        &self,
        py: Python<'_>,
        shape: &Shape<'_, '_>,
        words: &mut [u64],
        size: usize,
        sizes: Option<&[usize]>,
        timed: bool,
    ) -> PyResult<PyObject> {
        let (Some(grid), Some(block)) = (dims3(shape.grid), dims3(shape.block)) else {
            return Ok(py.NotImplemented());
        };
        let cfg = LaunchConfig {
            grid,
            block,
            shared_mem_bytes: shape.shared,
        };
        if let Some(sizes) = sizes {
            self.inner.check_launch(&cfg, sizes).or_raise()?;
        }
        // SAFETY: the caller's contract.
        let t = unsafe { self.run(py, &cfg, words, size, shape.stream, timed) }?;
        Ok(t.into_pyobject(py)?.into_any().unbind())
    }

    /// Launches `size` bytes of packed arguments; the kernel's time in seconds when
    /// `timed`.
    ///
    /// # Safety
    /// PyCUDA's contract: the caller vouches for the arguments.
    unsafe fn run(
        &self,
        py: Python<'_>,
        cfg: &LaunchConfig,
        words: &mut [u64],
        size: usize,
        stream: usize,
        timed: bool,
    ) -> PyResult<Option<f64>> {
        if !timed {
            // SAFETY: the caller's contract.
            unsafe { launch_words(&self.inner, cfg, words, size, stream, self.overlaps()) }
                .or_raise()?;
            return Ok(None);
        }
        let ctx = InContext::context(&self.inner).clone();
        // Events are made and released with the kernel's context pushed, so that the
        // caller's context stack is left as it was.
        let ms = with_pushed(&ctx, || -> rucuda_driver::Result<f32> {
            let start = rucuda_driver::Event::new(&ctx, rucuda_driver::EventFlags::DEFAULT)?;
            let end = rucuda_driver::Event::new(&ctx, rucuda_driver::EventFlags::DEFAULT)?;
            // SAFETY: the stream handle is the caller's live stream (or 0, the null
            // stream); the wrapper does not destroy it.
            let s = unsafe { rucuda_driver::Stream::from_raw(&ctx, stream as _) };
            start.record(&s)?;
            // SAFETY: the caller's contract.
            unsafe { launch_words(&self.inner, cfg, words, size, stream, self.overlaps()) }?;
            end.record(&s)?;
            py.allow_threads(|| end.synchronize())?;
            end.time_since(&start)
        })
        .or_raise()?;
        Ok(Some(f64::from(ms) / 1e3))
    }
}

impl Function {
    /// Whether launches overlap the previous kernel on their stream.
    fn overlaps(&self) -> bool {
        self.overlap.load(Ordering::Relaxed)
    }

    /// Launches on the legacy default stream with `size` bytes of arguments packed in
    /// `words`, the GIL held (a launch does not block).
    ///
    /// # Safety
    /// As [`launch_words`]: the caller vouches for the arguments.
    pub(crate) unsafe fn launch_packed(
        &self,
        cfg: &LaunchConfig,
        words: &mut [u64],
        size: usize,
    ) -> PyResult<()> {
        // SAFETY: the caller's contract.
        unsafe { launch_words(&self.inner, cfg, words, size, 0, self.overlaps()) }.or_raise()
    }
}

#[pymethods]
impl Function {
    /// Launches with the packed argument buffer; `sizes` (each argument's bytes) lets
    /// rucuda check the call against the kernel's parameters first. Returns the kernel's
    /// time in seconds when `timed`, else None.
    ///
    /// Like PyCUDA's, this trusts the arguments: device addresses are not checked.
    #[pyo3(signature = (grid, block, args, sizes = None, stream = 0, shared = 0, timed = false))]
    #[allow(clippy::too_many_arguments)]
    fn _launch(
        &self,
        py: Python<'_>,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        args: &[u8],
        sizes: Option<Vec<usize>>,
        stream: usize,
        shared: u32,
        timed: bool,
    ) -> PyResult<Option<f64>> {
        let cfg = LaunchConfig {
            grid,
            block,
            shared_mem_bytes: shared,
        };
        if let Some(sizes) = sizes {
            self.inner.check_launch(&cfg, &sizes).or_raise()?;
        }
        let mut words = vec![0u64; args.len().div_ceil(8).max(1)];
        for (i, b) in args.iter().enumerate() {
            words[i / 8] |= u64::from(*b) << ((i % 8) * 8);
        }
        // SAFETY: PyCUDA's contract: the caller vouches for the arguments.
        unsafe { self.run(py, &cfg, &mut words, args.len(), stream, timed) }
    }

    /// Parses `prepare`'s format for the Rust packer; a format it does not handle leaves
    /// `_prepared_launch` to answer `NotImplemented` (the Python path packs it).
    fn _set_format(&self, fmt: &str) {
        let parsed = Format::parse(fmt).map(std::sync::Arc::new);
        *self.format.lock().unwrap_or_else(|e| e.into_inner()) = parsed;
    }

    /// `prepared_call` packed and launched here: `NotImplemented` when the format or an
    /// argument needs the Python path, else None (the time in seconds when `timed`).
    ///
    /// Like PyCUDA's, this trusts the arguments: device addresses are not checked.
    #[pyo3(signature = (grid, block, args, stream = 0, shared = 0, timed = false))]
    #[allow(clippy::too_many_arguments)]
    fn _prepared_launch(
        &self,
        py: Python<'_>,
        grid: &Bound<'_, PyAny>,
        block: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        stream: usize,
        shared: u32,
        timed: bool,
    ) -> PyResult<PyObject> {
        let format = self
            .format
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let Some(format) = format else {
            return Ok(py.NotImplemented());
        };
        let Some(mut words) = format.pack(args) else {
            return Ok(py.NotImplemented());
        };
        let size = format.byte_size();
        let shape = Shape {
            grid,
            block,
            shared,
            stream,
        };
        // SAFETY: PyCUDA's contract: the caller vouches for the arguments.
        unsafe { self.run_shaped(py, &shape, &mut words, size, None, timed) }
    }

    /// `Function.__call__`'s common arguments (NumPy scalars, allocations, arrays)
    /// packed, checked against the kernel's parameters and launched here;
    /// `NotImplemented` when one needs the Python path.
    ///
    /// Like PyCUDA's, this trusts the arguments: device addresses are not checked.
    #[pyo3(signature = (args, grid, block, stream = 0, shared = 0, timed = false))]
    #[allow(clippy::too_many_arguments)]
    fn _call_launch(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        grid: &Bound<'_, PyAny>,
        block: &Bound<'_, PyAny>,
        stream: usize,
        shared: u32,
        timed: bool,
    ) -> PyResult<PyObject> {
        let Some((mut words, sizes)) = pack_call(args) else {
            return Ok(py.NotImplemented());
        };
        let size = packed_size(&sizes);
        let shape = Shape {
            grid,
            block,
            shared,
            stream,
        };
        // SAFETY: PyCUDA's contract: the caller vouches for the arguments.
        unsafe { self.run_shaped(py, &shape, &mut words, size, Some(&sizes), timed) }
    }

    /// A 1-D launch of 8-byte arguments (addresses and 64-bit integers), as the array
    /// operations' generated kernels take them: their fastest path, on the null stream.
    ///
    /// Like PyCUDA's, this trusts the arguments: device addresses are not checked.
    #[pyo3(signature = (grid_x, block_x, *words))]
    fn _launch_words(
        &self,
        py: Python<'_>,
        grid_x: u32,
        block_x: u32,
        words: &Bound<'_, PyTuple>,
    ) -> PyResult<()> {
        let mut w: Vec<u64> = Vec::with_capacity(words.len().max(1));
        for x in words.iter() {
            w.push(word_of(&x)?);
        }
        let size = w.len() * 8;
        if w.is_empty() {
            w.push(0);
        }
        let cfg = LaunchConfig {
            grid: (grid_x, 1, 1),
            block: (block_x, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: PyCUDA's contract: the caller vouches for the arguments.
        unsafe { self.run(py, &cfg, &mut w, size, 0, false) }.map(|_| ())
    }

    /// [`_launch_words`](Self::_launch_words) with a new stream-ordered allocation of
    /// `nbytes` (`mem_alloc_async`'s) as the first argument, which it returns: the array
    /// operators' result and launch in one call. The allocation is freed if the launch
    /// fails.
    ///
    /// Like PyCUDA's, this trusts the arguments: device addresses are not checked.
    #[pyo3(signature = (nbytes, grid_x, block_x, *words))]
    fn _launch_new(
        &self,
        py: Python<'_>,
        nbytes: usize,
        grid_x: u32,
        block_x: u32,
        words: &Bound<'_, PyTuple>,
    ) -> PyResult<crate::memory::DeviceAllocation> {
        let out = crate::memory::mem_alloc_async(nbytes)?;
        let mut w: Vec<u64> = Vec::with_capacity(words.len() + 1);
        w.push(out.address());
        for x in words.iter() {
            w.push(word_of(&x)?);
        }
        let size = w.len() * 8;
        let cfg = LaunchConfig {
            grid: (grid_x, 1, 1),
            block: (block_x, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: PyCUDA's contract: the caller vouches for the arguments; the first is
        // the new allocation, which lives on in the returned object (or is freed, in
        // stream order, after a failed launch).
        unsafe { self.run(py, &cfg, &mut w, size, 0, false) }?;
        Ok(out)
    }

    /// Lets later launches of this kernel overlap the previous kernel on their stream
    /// (programmatic dependent launch, compute capability 9.0+; the host spends about
    /// 0.7 µs less per launch and the device starts the kernel earlier). For rucuda's own
    /// generated kernels only, whose every thread executes `griddepcontrol.wait` before
    /// touching global memory (the templates in `rucuda/cuda/` begin with
    /// `RUCUDA_WAIT_FOR_PREDECESSOR()`): a kernel without that wait could race with the
    /// kernel before it.
    fn _overlaps_predecessor(&self) {
        self.overlap.store(true, Ordering::Relaxed);
    }

    /// Whether `_overlaps_predecessor` was called.
    #[getter]
    fn _overlapping(&self) -> bool {
        self.overlaps()
    }

    /// The bytes of each kernel parameter, when the driver can tell (CUDA 12.4+).
    fn param_sizes(&self) -> PyResult<Option<Vec<usize>>> {
        self.inner.param_sizes().or_raise()
    }

    /// One `function_attribute` by its driver number.
    fn get_attribute(&self, attr: u32) -> PyResult<i32> {
        let mut v = 0i32;
        // SAFETY: writes one int; the function is alive.
        unsafe {
            cu!(cuFuncGetAttribute(
                &mut v,
                CUfunction_attribute(attr),
                self.inner.raw()
            ))
        }
        .or_raise()?;
        Ok(v)
    }

    fn set_attribute(&self, attr: u32, value: i32) -> PyResult<()> {
        // SAFETY: the function is alive.
        unsafe {
            cu!(cuFuncSetAttribute(
                self.inner.raw(),
                CUfunction_attribute(attr),
                value
            ))
        }
        .or_raise()
    }

    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    #[getter]
    fn handle(&self) -> usize {
        self.inner.raw() as usize
    }
}

/// Compiles `sources` as relocatable device code (NVRTC unless an option needs nvcc),
/// links them (with `libcudadevrt` when `cudadevrt`) and loads the result into the
/// current context: PyCUDA's `DynamicSourceModule`.
#[pyfunction]
#[pyo3(signature = (sources, options = Vec::new(), no_extern_c = false, cudadevrt = true, include_dirs = Vec::new()))]
pub fn link_sources(
    py: Python<'_>,
    sources: Vec<String>,
    options: Vec<String>,
    no_extern_c: bool,
    cudadevrt: bool,
    include_dirs: Vec<std::path::PathBuf>,
) -> PyResult<Module> {
    let ctx = current()?;
    let mut opts = rucuda_jit::CompileOptions::new()
        .options(options)
        .no_extern_c(no_extern_c);
    for d in include_dirs {
        opts = opts.include_dir(d);
    }
    let linked = py
        .allow_threads(|| -> rucuda_jit::Result<rucuda_jit::LinkedModule> {
            let mut linker = rucuda_jit::Linker::new(&ctx)?;
            for s in &sources {
                linker.add_source(s, &opts)?;
            }
            if cudadevrt {
                linker.add_cudadevrt()?;
            }
            linker.link()
        })
        .or_raise()?;
    Ok(Module {
        inner: InContext::new(ctx, linked.module),
    })
}

/// The kinds `Linker.add_data`/`add_file` take: PyCUDA's `jit_input_type` values.
fn link_input(kind: u32) -> PyResult<rucuda_jit::LinkInput> {
    use rucuda_jit::LinkInput as L;
    Ok(match kind {
        0 => L::Cubin,
        1 => L::Ptx,
        2 => L::Fatbin,
        3 => L::Object,
        4 => L::Library,
        5 => L::LtoIr,
        other => {
            return Err(raise(
                "LogicError",
                format!("unknown jit_input_type {other}"),
            ))
        }
    })
}

/// PyCUDA's `Linker` (`cuLink*` through rucuda-jit): inputs added one by one, then
/// `link()` loads the result into the context the linker was made in.
#[pyclass(module = "rucuda._native", unsendable)]
pub struct Linker {
    ctx: rucuda_driver::Context,
    inner: Option<rucuda_jit::Linker>,
}

impl Linker {
    fn linker(&mut self) -> PyResult<&mut rucuda_jit::Linker> {
        self.inner
            .as_mut()
            .ok_or_else(|| raise("LogicError", "the linker has already linked".into()))
    }
}

#[pymethods]
impl Linker {
    #[new]
    fn new() -> PyResult<Linker> {
        let ctx = current()?;
        let inner = rucuda_jit::Linker::new(&ctx).or_raise()?;
        Ok(Linker {
            ctx,
            inner: Some(inner),
        })
    }

    /// Adds an image in memory of a `jit_input_type` kind.
    #[pyo3(signature = (data, kind, name = "unknown"))]
    fn add_data(&mut self, data: &[u8], kind: u32, name: &str) -> PyResult<()> {
        let kind = link_input(kind)?;
        let ctx = self.ctx.clone();
        let linker = self.linker()?;
        with_pushed(&ctx, || linker.add_data(kind, data, name).map(|_| ())).or_raise()
    }

    /// Adds a file of a `jit_input_type` kind.
    fn add_file(&mut self, path: std::path::PathBuf, kind: u32) -> PyResult<()> {
        let kind = link_input(kind)?;
        let ctx = self.ctx.clone();
        let linker = self.linker()?;
        with_pushed(&ctx, || linker.add_file(&path, Some(kind)).map(|_| ())).or_raise()
    }

    /// Adds `libcudadevrt.a` (found in the CUDA toolkit).
    fn add_cudadevrt(&mut self) -> PyResult<()> {
        let ctx = self.ctx.clone();
        let linker = self.linker()?;
        with_pushed(&ctx, || linker.add_cudadevrt().map(|_| ())).or_raise()
    }

    /// Links and loads the result; the linker cannot be used afterwards.
    fn link(&mut self) -> PyResult<Module> {
        let linker = self
            .inner
            .take()
            .ok_or_else(|| raise("LogicError", "the linker has already linked".into()))?;
        let ctx = self.ctx.clone();
        // The link state is not Send: the GIL stays held (linking takes milliseconds).
        let linked = with_pushed(&ctx, || linker.link()).or_raise()?;
        Ok(Module {
            inner: InContext::new(ctx, linked.module),
        })
    }
}
