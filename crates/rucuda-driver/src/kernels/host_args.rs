//! PyCUDA's `In` / `Out` / `InOut` host-array arguments (its `ArgumentHandler`s) and
//! its `time_kernel=True`: launching a kernel directly on host slices.
//!
//! [`HostArgs`] collects a kernel's arguments in order: values, host slices to copy in
//! ([`HostArgs::input`], PyCUDA's `drv.In(a)`), out ([`HostArgs::output`], `drv.Out(a)`)
//! or both ways ([`HostArgs::in_out`], `drv.InOut(a)`), and device buffers. For each
//! slice a temporary device buffer is allocated on the call's stream; the kernel gets its
//! address. [`Function::call_with_host_args`] then copies the inputs in, launches, copies
//! the outputs back once the kernel has completed (the copies are queued behind it on the
//! same stream), waits for all of it, and frees the temporaries. The slices stay
//! borrowed until then, so nothing can touch them while the device does.
//!
//! This is the convenient path for tests and one-off calls; for repeated launches keep
//! data in [`DeviceBuffer`]s and use [`Function::launch`] or a [`crate::PreparedLaunch`].
//!
//! ```no_run
//! use rucuda_driver::*;
//! let ctx = Device::get(0)?.primary_context()?;
//! # let module = Module::load_data(&ctx, b"")?;
//! let saxpy = module.function("saxpy")?;
//! let (x, y) = (vec![1.0f32; 1000], vec![2.0f32; 1000]);
//! let mut out = vec![0.0f32; 1000];
//! let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
//! let args = HostArgs::new(&stream)
//!     .value(3.0f32)
//!     .input(&x)
//!     .input(&y)
//!     .output(&mut out)
//!     .value(1000u64);
//! // SAFETY: saxpy(float a, const float* x, const float* y, float* out, unsigned long long n).
//! let seconds = unsafe { saxpy.call_with_host_args_timed(LaunchConfig::for_elements(1000, 256), args)? };
//! assert_eq!(out[0], 5.0);
//! println!("kernel took {seconds} s");
//! # Ok::<(), Error>(())
//! ```

use std::ffi::c_void;
use std::marker::PhantomData;

use rucuda_driver_sys::CUdeviceptr;

use crate::error::{call, Error, Result};
use crate::kernels::function::Function;
use crate::kernels::launch::{ArgBuffer, KernelArgs, LaunchConfig};
use crate::memory::device_buffer::DeviceBuffer;
use crate::memory::kernel_arg::DevicePointerArg;
use crate::memory::tracking::Access;
use crate::memory::tracking::DevicePtr;
use crate::memory::tracking::InUse;
use crate::repr::DeviceRepr;
use crate::streams::event::{Event, EventFlags};
use crate::streams::stream::Stream;

/// One host slice and its temporary device copy.
struct HostCopy {
    /// The slice's first byte (read for inputs, written for outputs).
    host: *mut c_void,
    bytes: usize,
    /// Index into `HostArgs::temps`.
    temp: usize,
}

/// The arguments of one [`Function::call_with_host_args`] call, in kernel parameter
/// order. Builder methods never fail: a failed temporary allocation is reported by the
/// call, which then launches nothing.
///
/// `'a` is the borrow of the host slices and device buffers: they cannot be used
/// elsewhere until the call has returned (or the `HostArgs` is dropped).
///
/// ```no_run
/// use rucuda_driver::*;
/// # let ctx = Device::get(0)?.primary_context()?;
/// # let kernel = Module::load_data(&ctx, b"")?.function("k")?;
/// let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
/// let table = DeviceBuffer::from_slice(&ctx, &[1.0f32; 16])?;
/// let mut hist = vec![0u32; 16];
/// let args = HostArgs::new(&stream).device(&table).in_out(&mut hist).value(16i32);
/// assert_eq!(args.len(), 3);
/// // SAFETY: k(const float* table, unsigned* hist, int n) touches [0, n) of each.
/// unsafe { kernel.call_with_host_args(LaunchConfig::linear(1, 16), args)? };
/// # Ok::<(), Error>(())
/// ```
pub struct HostArgs<'a> {
    stream: Stream,
    args: ArgBuffer<'a>,
    /// Size in bytes of each argument, for the launch check made before any copy.
    sizes: Vec<usize>,
    temps: Vec<DeviceBuffer<u8>>,
    copies_in: Vec<HostCopy>,
    copies_out: Vec<HostCopy>,
    error: Option<Error>,
    _borrows: PhantomData<&'a mut [u8]>,
}

impl std::fmt::Debug for HostArgs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostArgs")
            .field("args", &self.args.len())
            .field("copies_in", &self.copies_in.len())
            .field("copies_out", &self.copies_out.len())
            .field("error", &self.error)
            .finish()
    }
}

impl<'a> HostArgs<'a> {
    /// An empty argument list for a call on `stream` (which also orders the copies and
    /// the temporary allocations).
    pub fn new(stream: &Stream) -> HostArgs<'a> {
        HostArgs {
            stream: stream.clone(),
            args: ArgBuffer::new(),
            sizes: Vec::new(),
            temps: Vec::new(),
            copies_in: Vec::new(),
            copies_out: Vec::new(),
            error: None,
            _borrows: PhantomData,
        }
    }

    /// Number of kernel arguments so far.
    pub fn len(&self) -> usize {
        self.args.len()
    }

    /// True when there is no argument yet.
    pub fn is_empty(&self) -> bool {
        self.args.is_empty()
    }

    /// A value argument (a number, vector type or `#[repr(C)]` struct), passed as is.
    pub fn value<T: DeviceRepr>(mut self, value: T) -> Self {
        self.args.push(value);
        self.sizes.push(std::mem::size_of::<T>());
        self
    }

    /// A device buffer or view the kernel reads, passed as its address.
    pub fn device<P: DevicePtr>(mut self, mem: &'a P) -> Self {
        let used = mem.device_range().use_on(&self.stream, Access::Read);
        self.push_use(used);
        self
    }

    /// A device buffer or view the kernel writes, passed as its address.
    pub fn device_mut<P: DevicePtr>(mut self, mem: &'a mut P) -> Self {
        let mem: &'a P = mem;
        let used = mem.device_range().use_on(&self.stream, Access::Write);
        self.push_use(used);
        self
    }

    /// Pushes the address of a use (kept until the call is queued), or 0 after recording
    /// the error (reported by the call).
    fn push_use(&mut self, used: Result<InUse<'a>>) {
        match used {
            Ok(used) => {
                self.args.push_use(used);
                self.sizes.push(std::mem::size_of::<CUdeviceptr>());
            }
            Err(e) => {
                self.error.get_or_insert(e);
                self.push_address(0);
            }
        }
    }

    /// PyCUDA's `In(host)`: copied to a temporary device buffer before the launch; the
    /// kernel gets that buffer's address.
    pub fn input<T: DeviceRepr>(mut self, host: &'a [T]) -> Self {
        let ptr = host.as_ptr().cast_mut().cast::<c_void>();
        if let Some(temp) = self.temp(std::mem::size_of_val(host)) {
            self.copies_in.push(HostCopy {
                host: ptr,
                bytes: std::mem::size_of_val(host),
                temp,
            });
        }
        self
    }

    /// PyCUDA's `Out(host)`: the kernel gets a temporary device buffer of the same size
    /// (contents unspecified), copied back into `host` after the kernel.
    pub fn output<T: DeviceRepr>(mut self, host: &'a mut [T]) -> Self {
        let bytes = std::mem::size_of_val(host);
        let ptr = host.as_mut_ptr().cast::<c_void>();
        if let Some(temp) = self.temp(bytes) {
            self.copies_out.push(HostCopy {
                host: ptr,
                bytes,
                temp,
            });
        }
        self
    }

    /// PyCUDA's `InOut(host)`: copied in before the launch and back after it.
    pub fn in_out<T: DeviceRepr>(mut self, host: &'a mut [T]) -> Self {
        let bytes = std::mem::size_of_val(host);
        let ptr = host.as_mut_ptr().cast::<c_void>();
        if let Some(temp) = self.temp(bytes) {
            self.copies_in.push(HostCopy {
                host: ptr,
                bytes,
                temp,
            });
            self.copies_out.push(HostCopy {
                host: ptr,
                bytes,
                temp,
            });
        }
        self
    }

    /// Allocates a temporary of `bytes` on the stream and pushes its address; on failure
    /// records the error, pushes a null address (keeping the argument count) and
    /// returns `None`.
    fn temp(&mut self, bytes: usize) -> Option<usize> {
        if self.error.is_some() {
            self.push_address(0);
            return None;
        }
        match DeviceBuffer::<u8>::uninit_async(&self.stream, bytes) {
            Ok(buf) => {
                // The temporary is this list's own: no other thread can use it before the
                // call, so its use need not stay pending.
                match buf.device_range().use_on(&self.stream, Access::Write) {
                    Ok(used) => self.push_address(used.ptr()),
                    Err(e) => {
                        self.error.get_or_insert(e);
                        self.push_address(0);
                    }
                }
                self.temps.push(buf);
                Some(self.temps.len() - 1)
            }
            Err(e) => {
                self.error = Some(e);
                self.push_address(0);
                None
            }
        }
    }

    /// Pushes a device address: what a kernel's pointer parameter receives.
    fn push_address(&mut self, ptr: CUdeviceptr) {
        self.args.push(DevicePointerArg(ptr));
        self.sizes.push(std::mem::size_of::<CUdeviceptr>());
    }
}

impl Function {
    /// Launches with host-slice arguments (PyCUDA's `__call__` with `In`/`Out`/`InOut`):
    /// copies inputs in, launches on the arguments' stream after
    /// [`Function::check_launch`], copies outputs back behind the kernel, and returns once
    /// everything has completed. The temporaries are freed on the stream.
    ///
    /// # Safety
    /// As for [`Function::launch`]: the arguments must be what the kernel expects (the
    /// argument sizes are checked, not their types), and the kernel must stay inside the
    /// buffers it is given.
    pub unsafe fn call_with_host_args(&self, cfg: LaunchConfig, args: HostArgs<'_>) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { self.run_with_host_args(cfg, args, false) }.map(|_| ())
    }

    /// [`Function::call_with_host_args`] that also returns the kernel's own run time in
    /// seconds, measured with events around the launch only (PyCUDA's
    /// `time_kernel=True`; the copies are not included).
    ///
    /// # Safety
    /// As for [`Function::call_with_host_args`].
    pub unsafe fn call_with_host_args_timed(
        &self,
        cfg: LaunchConfig,
        args: HostArgs<'_>,
    ) -> Result<f64> {
        // SAFETY: forwarded contract.
        let t = unsafe { self.run_with_host_args(cfg, args, true) }?;
        t.ok_or_else(|| Error::invalid("timed call produced no time"))
    }

    /// Launches a tuple of arguments like [`Function::launch`], waits for the kernel and
    /// returns its run time in seconds, measured with events on `stream` (PyCUDA's
    /// `time_kernel=True` for device arguments).
    ///
    /// ```no_run
    /// # use rucuda_driver::*;
    /// # let ctx = Device::get(0)?.primary_context()?;
    /// # let spin = Module::load_data(&ctx, b"")?.function("spin")?;
    /// let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    /// // SAFETY: spin(unsigned long long cycles) touches no memory.
    /// let s = unsafe { spin.launch_timed(LaunchConfig::linear(1, 1), &stream, (1_000_000u64,))? };
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Safety
    /// As for [`Function::launch`].
    pub unsafe fn launch_timed<A: KernelArgs>(
        &self,
        cfg: LaunchConfig,
        stream: &Stream,
        args: A,
    ) -> Result<f64> {
        let ctx = self.context();
        let (start, end) = (
            Event::new(ctx, EventFlags::DEFAULT)?,
            Event::new(ctx, EventFlags::DEFAULT)?,
        );
        start.record(stream)?;
        // SAFETY: forwarded contract.
        unsafe { self.launch(cfg, stream, args)? };
        end.record(stream)?;
        end.synchronize()?;
        Ok(end.time_since(&start)? as f64 / 1000.0)
    }

    /// # Safety
    /// As for [`Function::launch`].
    unsafe fn run_with_host_args(
        &self,
        cfg: LaunchConfig,
        mut args: HostArgs<'_>,
        timed: bool,
    ) -> Result<Option<f64>> {
        if let Some(e) = args.error.take() {
            return Err(e);
        }
        if args.stream.context() != self.context() {
            return Err(Error::invalid(format!(
                "kernel `{}` and the stream of its HostArgs belong to different contexts",
                self.name()
            )));
        }
        // Refuse a bad launch before copying anything.
        self.check_launch(&cfg, &args.sizes)?;
        let stream = args.stream.clone();
        let events = if timed {
            let ctx = self.context();
            Some((
                Event::new(ctx, EventFlags::DEFAULT)?,
                Event::new(ctx, EventFlags::DEFAULT)?,
            ))
        } else {
            None
        };
        // Everything queued below is waited for before returning, on success and on
        // error alike, so no copy can touch a host slice after its borrow ends.
        let queued = (|| -> Result<()> {
            stream.context().bind()?;
            for c in &args.copies_in {
                if c.bytes == 0 {
                    continue;
                }
                let dst = temp_use(&args.temps, c, &stream)?;
                // SAFETY: the temporary holds `bytes` bytes; the host slice holds `bytes`
                // readable bytes and stays borrowed until the stream is synchronised below.
                unsafe {
                    call!(cuMemcpyHtoDAsync_v2(
                        dst.ptr(),
                        c.host.cast_const(),
                        c.bytes,
                        stream.raw()
                    ))?
                };
            }
            if let Some((start, _)) = &events {
                start.record(&stream)?;
            }
            // SAFETY: the caller vouches for the kernel; the temporaries live until the
            // stream is synchronised (they are freed on it after that).
            unsafe { self.launch_args(cfg, &stream, &args.args)? };
            if let Some((_, end)) = &events {
                end.record(&stream)?;
            }
            stream.context().bind()?;
            for c in &args.copies_out {
                if c.bytes == 0 {
                    continue;
                }
                let src = temp_use(&args.temps, c, &stream)?;
                // SAFETY: the host slice holds `bytes` writable bytes, borrowed mutably
                // until the stream is synchronised below; any bit pattern is a valid
                // DeviceRepr value.
                unsafe {
                    call!(cuMemcpyDtoHAsync_v2(
                        c.host,
                        src.ptr(),
                        c.bytes,
                        stream.raw()
                    ))?
                };
            }
            Ok(())
        })();
        let synced = stream.synchronize();
        queued?;
        synced?;
        match events {
            Some((start, end)) => Ok(Some(end.time_since(&start)? as f64 / 1000.0)),
            None => Ok(None),
        }
    }
}

fn temp_use<'t>(temps: &'t [DeviceBuffer<u8>], c: &HostCopy, stream: &Stream) -> Result<InUse<'t>> {
    temps
        .get(c.temp)
        .ok_or_else(|| Error::invalid("host argument without its temporary buffer"))?
        .device_range()
        .use_on(stream, Access::Write)
}
