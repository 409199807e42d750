//! Launching kernels: the configuration, typed argument tuples, the checks made before
//! the driver sees a launch, and the prepared (checked once) form.

use std::ffi::c_void;
use std::sync::Arc;

use rucuda_driver_sys::CUdeviceptr;

use crate::error::{call, Error, Result};
use crate::kernels::function::{Function, FunctionAttribute};
use crate::kernels::programmatic;
use crate::memory::kernel_arg::DevicePointerArg;
use crate::memory::kernel_arg::KernelArg;
use crate::memory::kernel_arg::Param;
use crate::memory::tracking::capture;
use crate::memory::tracking::Access;
use crate::memory::tracking::DevicePtr;
use crate::memory::tracking::InUse;
use crate::repr::DeviceRepr;
use crate::streams::event::{Event, EventFlags};
use crate::streams::stream::Stream;

/// Grid and block shape plus dynamic shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// A 1D launch of `grid` blocks of `block` threads.
    ///
    /// ```
    /// let cfg = rucuda_driver::LaunchConfig::linear(80, 256);
    /// assert_eq!(cfg.block, (256, 1, 1));
    /// ```
    pub fn linear(grid: u32, block: u32) -> LaunchConfig {
        LaunchConfig {
            grid: (grid, 1, 1),
            block: (block, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// Enough `block`-thread blocks to cover `n` elements, one per thread.
    ///
    /// ```
    /// let cfg = rucuda_driver::LaunchConfig::for_elements(1000, 256);
    /// assert_eq!(cfg.grid.0, 4);
    /// ```
    pub fn for_elements(n: usize, block: u32) -> LaunchConfig {
        let block = block.max(1);
        let grid = n.div_ceil(block as usize).clamp(1, u32::MAX as usize) as u32;
        LaunchConfig::linear(grid, block)
    }

    /// The same shape with `bytes` of dynamic shared memory.
    pub fn with_shared_mem(mut self, bytes: u32) -> LaunchConfig {
        self.shared_mem_bytes = bytes;
        self
    }
}

/// A tuple of kernel arguments, `()` up to 16 elements.
pub trait KernelArgs {
    /// Number of arguments.
    const COUNT: usize;
    /// Calls `f` with the argument pointers and sizes, in order, for a launch on `stream`
    /// (memory arguments record their use on it first, and fail with `None`).
    fn with_params<R>(
        &self,
        stream: Option<&Stream>,
        f: impl FnOnce(&mut [*mut c_void], &[usize]) -> Result<R>,
    ) -> Result<R>;
}

impl KernelArgs for () {
    const COUNT: usize = 0;
    fn with_params<R>(
        &self,
        _stream: Option<&Stream>,
        f: impl FnOnce(&mut [*mut c_void], &[usize]) -> Result<R>,
    ) -> Result<R> {
        f(&mut [], &[])
    }
}

macro_rules! tuple_args {
    ($n:literal; $($name:ident $idx:tt),+) => {
        impl<$($name: KernelArg),+> KernelArgs for ($($name,)+) {
            const COUNT: usize = $n;
            #[inline]
            fn with_params<R>(
                &self,
                stream: Option<&Stream>,
                f: impl FnOnce(&mut [*mut c_void], &[usize]) -> Result<R>,
            ) -> Result<R> {
                let params = [$(self.$idx.param(stream)?),+];
                let mut addrs = [0 as CUdeviceptr; $n];
                for (slot, p) in addrs.iter_mut().zip(&params) {
                    if let Param::Address(a) = p {
                        *slot = a.ptr();
                    }
                }
                let mut ptrs = [std::ptr::null_mut::<c_void>(); $n];
                let mut sizes = [0usize; $n];
                for i in 0..$n {
                    (ptrs[i], sizes[i]) = match params[i] {
                        Param::Bytes(p, size) => (p, size),
                        Param::Address(_) => (
                            (&addrs[i] as *const CUdeviceptr).cast_mut().cast(),
                            std::mem::size_of::<CUdeviceptr>(),
                        ),
                    };
                }
                f(&mut ptrs, &sizes)
            }
        }
    };
}
tuple_args!(1; A 0);
tuple_args!(2; A 0, B 1);
tuple_args!(3; A 0, B 1, C 2);
tuple_args!(4; A 0, B 1, C 2, D 3);
tuple_args!(5; A 0, B 1, C 2, D 3, E 4);
tuple_args!(6; A 0, B 1, C 2, D 3, E 4, F 5);
tuple_args!(7; A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_args!(8; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_args!(9; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_args!(10; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_args!(11; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_args!(12; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
tuple_args!(13; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12);
tuple_args!(14; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13);
tuple_args!(15; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14);
tuple_args!(16; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15);

/// A launch argument list built at run time (for code generators and PyCUDA-style
/// dynamic calls): each argument's bytes are copied in, 8-byte aligned. Memory arguments
/// keep their [`InUse`] until the list is dropped, after the launch is queued.
#[derive(Debug, Default)]
pub struct ArgBuffer<'a> {
    storage: Vec<u64>,
    offsets: Vec<(usize, usize)>,
    uses: Vec<InUse<'a>>,
}

impl<'a> ArgBuffer<'a> {
    /// An empty list.
    pub fn new() -> ArgBuffer<'a> {
        ArgBuffer::default()
    }

    /// Appends a value argument.
    pub fn push<T: DeviceRepr>(&mut self, value: T) -> &mut Self {
        let size = std::mem::size_of::<T>();
        let start = self.storage.len();
        self.storage.resize(start + size.div_ceil(8).max(1), 0);
        // SAFETY: the new words hold at least `size` bytes; T is plain data.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&value as *const T).cast::<u8>(),
                self.storage.as_mut_ptr().add(start).cast::<u8>(),
                size,
            )
        };
        self.offsets.push((start, size));
        self
    }

    /// Appends a value argument given as its bytes (a struct of a code generator's, of a
    /// size known only at run time). An empty slice appends a one-byte zero.
    ///
    /// ```
    /// let mut args = rucuda_driver::ArgBuffer::new();
    /// args.push_bytes(&[1, 2, 3]).push(7u32);
    /// assert_eq!(args.len(), 2);
    /// ```
    pub fn push_bytes(&mut self, bytes: &[u8]) -> &mut Self {
        let start = self.storage.len();
        self.storage
            .resize(start + bytes.len().div_ceil(8).max(1), 0);
        let words = &mut self.storage[start..];
        for (k, chunk) in bytes.chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            words[k] = u64::from_ne_bytes(w);
        }
        self.offsets.push((start, bytes.len().max(1)));
        self
    }

    /// Appends the address of `mem` for a launch on `stream` that uses it as `access`
    /// says, recording the use in its log (see [`DeviceRange::use_on`](crate::DeviceRange::use_on)).
    pub fn push_memory(
        &mut self,
        mem: &'a impl DevicePtr,
        stream: &Stream,
        access: Access,
    ) -> Result<&mut Self> {
        let used = mem.device_range().use_on(stream, access)?;
        Ok(self.push_use(used))
    }

    /// Appends the address of a use (from [`DeviceRange::use_on`](crate::DeviceRange::use_on)
    /// on the launch's stream) and keeps the use until the list is dropped.
    pub fn push_use(&mut self, used: InUse<'a>) -> &mut Self {
        self.push(DevicePointerArg(used.ptr()));
        self.uses.push(used);
        self
    }

    /// Number of arguments.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    fn with_params<R>(
        &self,
        f: impl FnOnce(&mut [*mut c_void], &[usize]) -> Result<R>,
    ) -> Result<R> {
        let base = self.storage.as_ptr();
        let mut ptrs: Vec<*mut c_void> = self
            .offsets
            .iter()
            // SAFETY: each offset lies inside `storage`.
            .map(|&(o, _)| unsafe { base.add(o) }.cast_mut().cast())
            .collect();
        let sizes: Vec<usize> = self.offsets.iter().map(|&(_, s)| s).collect();
        f(&mut ptrs, &sizes)
    }
}

impl Function {
    /// Checks a launch without making it: argument count and sizes against the kernel's
    /// parameters, block and grid against the device, shared memory against the limit.
    pub fn check_launch(&self, cfg: &LaunchConfig, sizes: &[usize]) -> Result<()> {
        let l = self.limits()?;
        let refuse = |problem: String| Error::LaunchCheck {
            kernel: self.name().to_string(),
            problem,
        };
        if let Some(expected) = &l.param_sizes {
            if expected.len() != sizes.len() {
                return Err(refuse(format!(
                    "it takes {} arguments ({} bytes each), {} were given",
                    expected.len(),
                    fmt_sizes(expected),
                    sizes.len()
                )));
            }
            if let Some(i) = (0..sizes.len()).find(|&i| expected[i] != sizes[i]) {
                return Err(refuse(format!(
                    "argument {i} has {} bytes, the kernel's parameter {i} has {} (all parameters: {})",
                    sizes[i],
                    expected[i],
                    fmt_sizes(expected)
                )));
            }
        }
        let (bx, by, bz) = cfg.block;
        let (gx, gy, gz) = cfg.grid;
        if bx == 0 || by == 0 || bz == 0 || gx == 0 || gy == 0 || gz == 0 {
            return Err(refuse(format!(
                "empty grid {:?} or block {:?}",
                cfg.grid, cfg.block
            )));
        }
        let threads = bx as u64 * by as u64 * bz as u64;
        if threads > l.max_threads_per_block as u64 {
            return Err(refuse(format!(
                "block {:?} has {threads} threads, this kernel allows at most {}",
                cfg.block, l.max_threads_per_block
            )));
        }
        if bx > l.max_block[0] || by > l.max_block[1] || bz > l.max_block[2] {
            return Err(refuse(format!(
                "block {:?} exceeds the device's {:?}",
                cfg.block, l.max_block
            )));
        }
        if gx > l.max_grid[0] || gy > l.max_grid[1] || gz > l.max_grid[2] {
            return Err(refuse(format!(
                "grid {:?} exceeds the device's {:?}",
                cfg.grid, l.max_grid
            )));
        }
        if cfg.shared_mem_bytes > l.max_dynamic_shared {
            let live = self
                .attribute(FunctionAttribute::MaxDynamicSharedSizeBytes)?
                .max(0) as u32;
            if cfg.shared_mem_bytes > live {
                return Err(refuse(format!(
                    "{} bytes of dynamic shared memory asked, the kernel allows {live} \
                     (raise it with set_max_dynamic_shared_memory; static use: {} bytes)",
                    cfg.shared_mem_bytes, l.static_shared
                )));
            }
        }
        Ok(())
    }

    /// Launches the kernel on `stream` with a tuple of arguments (references to values,
    /// buffers or views), after [`Function::check_launch`].
    ///
    /// # Safety
    /// The kernel's memory accesses are not checked: the arguments must be what the
    /// kernel expects (types, not only sizes), and every buffer it touches must stay alive
    /// and unaliased by host writes until the work on `stream` is done.
    ///
    /// ```no_run
    /// # use rucuda_driver::*;
    /// # let ctx = Device::get(0)?.primary_context()?;
    /// # let module = Module::load_data(&ctx, b"")?;
    /// let scale = module.function("scale")?;
    /// let mut x = DeviceBuffer::from_slice(&ctx, &[1.0f32; 1024])?;
    /// let stream = Stream::null(&ctx);
    /// // SAFETY: scale(float* x, float a, unsigned n) writes x[0..n).
    /// unsafe { scale.launch(LaunchConfig::for_elements(1024, 256), &stream, (&mut x, 2.0f32, 1024u32))? };
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    #[inline]
    pub unsafe fn launch<A: KernelArgs>(
        &self,
        cfg: LaunchConfig,
        stream: &Stream,
        args: A,
    ) -> Result<()> {
        // SAFETY: forwarded contract; no overlap.
        unsafe { self.launch_checked(cfg, stream, args, false) }
    }

    /// Launches with an [`ArgBuffer`] built at run time, after the same checks.
    ///
    /// # Safety
    /// As for [`Function::launch`]; and every address in `args` must come from
    /// [`ArgBuffer::push_memory`] (or [`DeviceRange::use_on`](crate::DeviceRange::use_on))
    /// for this stream.
    pub unsafe fn launch_args(
        &self,
        cfg: LaunchConfig,
        stream: &Stream,
        args: &ArgBuffer,
    ) -> Result<()> {
        // SAFETY: forwarded contract; no overlap.
        unsafe { self.launch_buffer(cfg, stream, args, false) }
    }

    /// [`Function::launch`] for a kernel that waits for its stream's previous kernel
    /// itself: on a device of compute capability 9.0 or newer, where the
    /// [`ProgrammaticPolicy`](crate::ProgrammaticPolicy) allows (by default, always), the
    /// launch may start before the previous kernel on `stream` has finished (programmatic
    /// dependent launch), which shortens the gap between dependent kernels, most of all in
    /// graphs. Elsewhere it is a plain launch.
    ///
    /// # Safety
    /// As for [`Function::launch`]; and every thread of the kernel executes
    /// `griddepcontrol.wait` (`cudaGridDependencySynchronize()`) before its first access
    /// to global memory, so that nothing it reads or writes can race with the kernel
    /// before it.
    #[inline]
    pub unsafe fn launch_programmatic<A: KernelArgs>(
        &self,
        cfg: LaunchConfig,
        stream: &Stream,
        args: A,
    ) -> Result<()> {
        // SAFETY: forwarded contract, the wait included.
        unsafe { self.launch_checked(cfg, stream, args, true) }
    }

    /// [`Function::launch_args`] with [`Function::launch_programmatic`]'s overlap.
    ///
    /// # Safety
    /// As for [`Function::launch_args`] and [`Function::launch_programmatic`].
    pub unsafe fn launch_args_programmatic(
        &self,
        cfg: LaunchConfig,
        stream: &Stream,
        args: &ArgBuffer,
    ) -> Result<()> {
        // SAFETY: forwarded contract, the wait included.
        unsafe { self.launch_buffer(cfg, stream, args, true) }
    }

    /// The checks, then the launch of a tuple of arguments; `overlap` as in
    /// [`Function::launch_raw`].
    ///
    /// # Safety
    /// As for [`Function::launch`], and for [`Function::launch_programmatic`] with
    /// `overlap`.
    #[inline]
    unsafe fn launch_checked<A: KernelArgs>(
        &self,
        cfg: LaunchConfig,
        stream: &Stream,
        args: A,
        overlap: bool,
    ) -> Result<()> {
        args.with_params(Some(stream), |ptrs, sizes| {
            self.check_launch(&cfg, sizes)?;
            // SAFETY: checked above; the caller vouches for the kernel (and its wait).
            unsafe { self.launch_raw(&cfg, stream, ptrs, overlap) }
        })
    }

    /// [`Function::launch_checked`] for an [`ArgBuffer`].
    ///
    /// # Safety
    /// As for [`Function::launch_args`], and for [`Function::launch_programmatic`] with
    /// `overlap`.
    unsafe fn launch_buffer(
        &self,
        cfg: LaunchConfig,
        stream: &Stream,
        args: &ArgBuffer,
        overlap: bool,
    ) -> Result<()> {
        args.with_params(|ptrs, sizes| {
            self.check_launch(&cfg, sizes)?;
            // SAFETY: checked above; the caller vouches for the kernel (and its wait).
            unsafe { self.launch_raw(&cfg, stream, ptrs, overlap) }
        })
    }

    /// Launches cooperatively (`cuLaunchCooperativeKernel`): all blocks resident at once,
    /// so grid-wide synchronisation works.
    ///
    /// # Safety
    /// As for [`Function::launch`].
    pub unsafe fn launch_cooperative<A: KernelArgs>(
        &self,
        cfg: LaunchConfig,
        stream: &Stream,
        args: A,
    ) -> Result<()> {
        args.with_params(Some(stream), |ptrs, sizes| {
            self.check_launch(&cfg, sizes)?;
            self.context().bind()?;
            self.keep_for_capture();
            // SAFETY: checked above; the caller vouches for the kernel's accesses.
            unsafe {
                call!(cuLaunchCooperativeKernel(
                    self.raw(),
                    cfg.grid.0,
                    cfg.grid.1,
                    cfg.grid.2,
                    cfg.block.0,
                    cfg.block.1,
                    cfg.block.2,
                    cfg.shared_mem_bytes,
                    stream.raw(),
                    ptrs.as_mut_ptr()
                ))
            }
        })
    }

    /// A plain launch, or with `overlap` a programmatic dependent launch where the device
    /// and the [`ProgrammaticPolicy`](crate::ProgrammaticPolicy) allow.
    ///
    /// # Safety
    /// `ptrs` must match the kernel's parameters; see [`Function::launch`]. With
    /// `overlap`, the kernel waits for its predecessor first (see
    /// [`Function::launch_programmatic`]).
    #[inline]
    unsafe fn launch_raw(
        &self,
        cfg: &LaunchConfig,
        stream: &Stream,
        ptrs: &mut [*mut c_void],
        overlap: bool,
    ) -> Result<()> {
        self.context().bind()?;
        let overlap = overlap
            && self.limits()?.programmatic
            && crate::ProgrammaticPolicy::current().applies_to(stream);
        // SAFETY: the caller checked the arguments and vouches for the kernel (and, with
        // `overlap`, its wait); the context is bound.
        unsafe { self.launch_now(cfg, stream.raw(), ptrs, overlap) }
    }

    /// The launch itself: programmatic with `overlap` (already decided), else plain.
    ///
    /// # Safety
    /// As for [`Function::launch_on_handle`], with `overlap` meaning the launch is made
    /// programmatic as it stands.
    #[inline]
    unsafe fn launch_now(
        &self,
        cfg: &LaunchConfig,
        stream: rucuda_driver_sys::CUstream,
        ptrs: &mut [*mut c_void],
        overlap: bool,
    ) -> Result<()> {
        self.keep_for_capture();
        let params = if ptrs.is_empty() {
            std::ptr::null_mut()
        } else {
            ptrs.as_mut_ptr()
        };
        if overlap {
            // SAFETY: the caller's contract, the wait included.
            return unsafe { programmatic::launch_overlapping(self.raw(), cfg, stream, params) };
        }
        // SAFETY: the caller's contract.
        unsafe {
            call!(cuLaunchKernel(
                self.raw(),
                cfg.grid.0,
                cfg.grid.1,
                cfg.grid.2,
                cfg.block.0,
                cfg.block.1,
                cfg.block.2,
                cfg.shared_mem_bytes,
                stream,
                params,
                std::ptr::null_mut()
            ))
        }
    }

    /// Launches on a raw stream handle (`0`: the legacy default stream) with one pointer
    /// per parameter, for a foreign context stack such as PyCUDA's: the calling thread's
    /// current context is left as it is (no checks, no binding); with `overlap`, as a
    /// programmatic dependent launch (see [`Function::launch_programmatic`]) where the
    /// device allows it and the [`ProgrammaticPolicy`](crate::ProgrammaticPolicy) is
    /// `All` (the policy's `Capture` needs a [`Stream`] to look at).
    ///
    /// # Safety
    /// The function's context is current on the calling thread; `stream` is a live
    /// stream of it (or 0); `params` holds one valid pointer per kernel parameter, to a
    /// value of that parameter's size, as `cuLaunchKernel` takes them; the caller
    /// vouches for every access the kernel makes; with `overlap`, every thread of the
    /// kernel executes `griddepcontrol.wait` before its first access to global memory.
    pub unsafe fn launch_on_handle(
        &self,
        cfg: &LaunchConfig,
        stream: rucuda_driver_sys::CUstream,
        params: &mut [*mut c_void],
        overlap: bool,
    ) -> Result<()> {
        let overlap = overlap
            && self.limits()?.programmatic
            && crate::ProgrammaticPolicy::current() == crate::ProgrammaticPolicy::All;
        // SAFETY: the caller's contract, the wait included.
        unsafe { self.launch_now(cfg, stream, params, overlap) }
    }

    /// Where this thread captures a graph, the graph keeps the function (and with it its
    /// module) alive: its kernel nodes point into the module's code.
    #[inline]
    fn keep_for_capture(&self) {
        capture::keep_code(Arc::as_ptr(&self.inner) as usize, || {
            Arc::new(self.clone()) as capture::Keeper
        });
    }

    /// Fixes the launch shape and argument layout once (PyCUDA's `prepare`): later
    /// [`PreparedLaunch::launch`] calls skip the checks.
    pub fn prepare(&self, cfg: LaunchConfig, arg_sizes: &[usize]) -> Result<PreparedLaunch> {
        self.check_launch(&cfg, arg_sizes)?;
        Ok(PreparedLaunch {
            function: self.clone(),
            cfg,
            sizes: arg_sizes.to_vec(),
        })
    }
}

fn fmt_sizes(s: &[usize]) -> String {
    s.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A kernel with its shape and argument sizes checked once (PyCUDA's prepared call).
#[derive(Debug, Clone)]
pub struct PreparedLaunch {
    function: Function,
    cfg: LaunchConfig,
    sizes: Vec<usize>,
}

impl PreparedLaunch {
    /// The launch shape.
    pub fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// Launches on `stream` (PyCUDA's `prepared_async_call`; use the null stream for
    /// `prepared_call`). Only the argument sizes are compared (a few integer compares).
    ///
    /// # Safety
    /// As for [`Function::launch`].
    #[inline]
    pub unsafe fn launch<A: KernelArgs>(&self, stream: &Stream, args: A) -> Result<()> {
        args.with_params(Some(stream), |ptrs, sizes| {
            if sizes != self.sizes.as_slice() {
                return Err(Error::LaunchCheck {
                    kernel: self.function.name().to_string(),
                    problem: format!(
                        "prepared for argument sizes [{}], called with [{}]",
                        fmt_sizes(&self.sizes),
                        fmt_sizes(sizes)
                    ),
                });
            }
            // SAFETY: shape and layout checked in `prepare`; the caller vouches for the kernel.
            unsafe { self.function.launch_raw(&self.cfg, stream, ptrs, false) }
        })
    }

    /// Launches and waits, returning the kernel's device time in seconds measured with
    /// events (PyCUDA's `prepared_timed_call`).
    ///
    /// # Safety
    /// As for [`Function::launch`].
    pub unsafe fn launch_timed<A: KernelArgs>(&self, stream: &Stream, args: A) -> Result<f64> {
        let ctx = self.function.context();
        let (start, end) = (
            Event::new(ctx, EventFlags::DEFAULT)?,
            Event::new(ctx, EventFlags::DEFAULT)?,
        );
        start.record(stream)?;
        // SAFETY: forwarded contract.
        unsafe { self.launch(stream, args)? };
        end.record(stream)?;
        end.synchronize()?;
        Ok(end.time_since(&start)? as f64 / 1000.0)
    }
}
