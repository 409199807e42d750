//! [`DeviceBuffer`]: an owned, typed device allocation, freed on its stream (stream-ordered)
//! or synchronously; and borrowed views into it.

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Mutex;

use rucuda_driver_sys::CUdeviceptr;

use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::event::{Event, EventFlags};
use crate::memory::staged;
use crate::repr::DeviceRepr;
use crate::stream::Stream;

/// Anything that names device memory: buffers and views. Its address is what a kernel
/// receives for a pointer parameter.
pub trait DevicePtr {
    /// The device address of the first element.
    fn device_ptr(&self) -> CUdeviceptr;
    /// The size in bytes.
    fn byte_len(&self) -> usize;
    /// Notes that work just enqueued on `stream` uses this memory, so that freeing it
    /// waits for that work (see [`DeviceBuffer::record_use`]). Nothing to do for memory
    /// that is not freed stream-ordered: the default.
    fn record_use(&self, stream: &Stream) -> Result<()> {
        let _ = stream;
        Ok(())
    }
}

/// The legacy per-thread default stream's handle: one handle, a different stream on
/// every host thread, so it is never taken for "the same stream".
const PER_THREAD_STREAM: usize = 2;

fn same_stream(a: &Stream, b: &Stream) -> bool {
    a.raw() == b.raw() && a.raw() as usize != PER_THREAD_STREAM && a.context() == b.context()
}

/// Entries past which [`ForeignUses`] waits for its events and forgets them (only the
/// per-thread stream adds an entry per use).
const MAX_FOREIGN_USES: usize = 64;

/// Streams other than a stream-ordered buffer's own that used it, each with an event
/// recorded after its latest use there. The buffer's free waits for all of them.
#[derive(Default)]
pub(crate) struct ForeignUses(Mutex<Vec<(Stream, Event)>>);

impl std::fmt::Debug for ForeignUses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map_or(0, |v| v.len());
        write!(f, "ForeignUses({n} streams)")
    }
}

impl ForeignUses {
    /// Records an event on `stream` after the work enqueued so far (re-recording the
    /// event of that stream when there is one). Nothing while `stream` is capturing a
    /// graph: captured work runs when the graph is launched, and keeping its buffers
    /// alive until then is the (unsafe) graph launch's contract.
    fn record(&self, stream: &Stream) -> Result<()> {
        if stream.is_capturing()? {
            return Ok(());
        }
        let mut uses = self
            .0
            .lock()
            .map_err(|_| Error::invalid("a buffer's use log was poisoned by a panic"))?;
        if let Some((_, event)) = uses.iter().find(|(s, _)| same_stream(s, stream)) {
            return event.record(stream);
        }
        if uses.len() >= MAX_FOREIGN_USES {
            for (_, event) in uses.iter() {
                event.synchronize()?;
            }
            uses.clear();
        }
        let event = Event::new(stream.context(), EventFlags::DISABLE_TIMING)?;
        event.record(stream)?;
        uses.push((stream.clone(), event));
        Ok(())
    }

    /// Takes every recorded use (for the free).
    fn take(&self) -> Vec<(Stream, Event)> {
        match self.0.lock() {
            Ok(mut v) => std::mem::take(&mut *v),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }
}

/// An owned device allocation of `len` elements of `T` (PyCUDA's `DeviceAllocation`).
///
/// Freed when dropped: with `cuMemFreeAsync` on the stream it was allocated on when it
/// was allocated stream-ordered, else with `cuMemFree`. Freeing twice is impossible:
/// dropping consumes the only owner. Work on other streams that used a stream-ordered
/// buffer through rucuda (launches, async copies and memsets) is recorded with events,
/// and the free waits for it; see [`DeviceBuffer::record_use`] and the
/// [module docs](crate::memory#when-memory-is-freed).
///
/// ```no_run
/// use rucuda_driver::{DeviceBuffer, Device};
/// let ctx = Device::get(0)?.primary_context()?;
/// let buf = DeviceBuffer::from_slice(&ctx, &[1.0f32, 2.0, 3.0])?;
/// assert_eq!(buf.to_vec()?, vec![1.0, 2.0, 3.0]);
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub struct DeviceBuffer<T: DeviceRepr> {
    ptr: CUdeviceptr,
    len: usize,
    ctx: Context,
    free_on: Option<Stream>,
    uses: ForeignUses,
    _marker: PhantomData<T>,
}

// SAFETY: device memory is not tied to a host thread; T is Send + Sync plain data.
unsafe impl<T: DeviceRepr> Send for DeviceBuffer<T> {}
// SAFETY: shared references only read the handle.
unsafe impl<T: DeviceRepr> Sync for DeviceBuffer<T> {}

impl<T: DeviceRepr> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .field("type", &T::C_TYPE)
            .finish()
    }
}

pub(crate) fn byte_size<T>(len: usize) -> Result<usize> {
    len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
        Error::invalid(format!(
            "{len} elements of {} bytes overflow usize",
            std::mem::size_of::<T>()
        ))
    })
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Allocates `len` elements with `cuMemAlloc` (contents unspecified: any bit pattern
    /// is a valid `T`). PyCUDA's `mem_alloc`.
    pub fn uninit(ctx: &Context, len: usize) -> Result<Self> {
        let bytes = byte_size::<T>(len)?;
        ctx.bind()?;
        let mut ptr: CUdeviceptr = 0;
        if bytes > 0 {
            // SAFETY: writes one device pointer; freed on drop.
            unsafe { call!(cuMemAlloc_v2(&mut ptr, bytes))? };
        }
        Ok(DeviceBuffer {
            ptr,
            len,
            ctx: ctx.clone(),
            free_on: None,
            uses: ForeignUses::default(),
            _marker: PhantomData,
        })
    }

    /// Allocates `len` elements stream-ordered (`cuMemAllocAsync` on `stream`); freed on
    /// the same stream. Falls back to [`DeviceBuffer::uninit`] (plus a stream
    /// synchronisation) where the device has no memory pools.
    pub fn uninit_async(stream: &Stream, len: usize) -> Result<Self> {
        let ctx = stream.context();
        if !ctx.supports_memory_pools() {
            stream.synchronize()?;
            return Self::uninit(ctx, len);
        }
        let bytes = byte_size::<T>(len)?;
        ctx.bind()?;
        let mut ptr: CUdeviceptr = 0;
        if bytes > 0 {
            // SAFETY: writes one device pointer; freed on drop on this stream.
            unsafe { call!(cuMemAllocAsync(&mut ptr, bytes, stream.raw()))? };
        }
        Ok(DeviceBuffer {
            ptr,
            len,
            ctx: ctx.clone(),
            free_on: Some(stream.clone()),
            uses: ForeignUses::default(),
            _marker: PhantomData,
        })
    }

    /// Allocates `len` zeroed elements; they are zero when it returns, for work on any
    /// stream.
    pub fn zeros(ctx: &Context, len: usize) -> Result<Self> {
        let buf = Self::uninit(ctx, len)?;
        buf.ctx.bind()?;
        if buf.byte_len() > 0 {
            // SAFETY: the range lies inside the allocation.
            unsafe { call!(cuMemsetD8_v2(buf.ptr, 0, buf.byte_len()))? };
            super::memset::finish_legacy_stream()?;
        }
        Ok(buf)
    }

    /// Allocates and copies `data` to the device (PyCUDA's `to_device`).
    pub fn from_slice(ctx: &Context, data: &[T]) -> Result<Self> {
        let mut buf = Self::uninit(ctx, data.len())?;
        buf.copy_from_host(data)?;
        Ok(buf)
    }

    /// Takes ownership of memory another library allocated with `cuMemAlloc`.
    ///
    /// # Safety
    /// `ptr` must be a `cuMemAlloc` allocation of `ctx` holding at least `len` elements,
    /// owned by nobody else: it is freed with `cuMemFree` on drop.
    pub unsafe fn from_raw(ctx: &Context, ptr: CUdeviceptr, len: usize) -> Self {
        DeviceBuffer {
            ptr,
            len,
            ctx: ctx.clone(),
            free_on: None,
            uses: ForeignUses::default(),
            _marker: PhantomData,
        }
    }

    /// Gives up ownership: the memory is no longer freed on drop.
    pub fn into_raw(self) -> CUdeviceptr {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never dropped, so each field is read exactly once.
        unsafe {
            drop(std::ptr::read(&me.ctx));
            drop(std::ptr::read(&me.free_on));
            drop(std::ptr::read(&me.uses));
        }
        me.ptr
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(crate) fn ptr_ref(&self) -> &CUdeviceptr {
        &self.ptr
    }

    /// True when it holds no element.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The context it belongs to.
    #[inline]
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The stream it is freed on, if it was allocated stream-ordered.
    pub fn stream(&self) -> Option<&Stream> {
        self.free_on.as_ref()
    }

    /// Notes that work just enqueued on `stream` uses this buffer. For a buffer freed
    /// stream-ordered on another stream, an event is recorded on `stream` (one per
    /// stream, re-recorded on later uses) and the free waits for it, so dropping the
    /// buffer right after queueing work on any stream is safe. rucuda's own operations
    /// call this (launches with buffer or view arguments, async copies and memsets,
    /// rucuda-array's kernels); call it yourself after handing the buffer's raw address
    /// to work on another stream (an [`ArgBuffer`](crate::ArgBuffer), a raw driver call).
    /// Free for a buffer used on its own stream, and for synchronously freed buffers.
    ///
    /// ```no_run
    /// use rucuda_driver::*;
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let (home, other) = (Stream::new(&ctx, StreamFlags::NON_BLOCKING)?, Stream::new(&ctx, StreamFlags::NON_BLOCKING)?);
    /// let buf = DeviceBuffer::<u8>::uninit_async(&home, 1 << 20)?;
    /// let mut args = ArgBuffer::new();
    /// args.push_ptr(&buf);
    /// // ... launch with `args` on `other` ...
    /// buf.record_use(&other)?;
    /// drop(buf); // freed on `home` once `other` has passed this point
    /// # Ok::<(), Error>(())
    /// ```
    pub fn record_use(&self, stream: &Stream) -> Result<()> {
        match &self.free_on {
            Some(own) if !same_stream(own, stream) => self.uses.record(stream),
            _ => Ok(()),
        }
    }

    /// Copies `src` (same length) from the host, synchronously. Large pageable copies
    /// are staged through page-locked buffers (see `memory/staged.rs`).
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        self.check_len(src.len())?;
        // SAFETY: both ranges hold `byte_len` bytes; `src` is borrowed for the call.
        unsafe { staged::copy_htod(&self.ctx, self.ptr, src.as_ptr().cast(), self.byte_len()) }
    }

    /// Copies to `dst` (same length) on the host, synchronously (staged when large).
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        self.check_len(dst.len())?;
        // SAFETY: both ranges hold `byte_len` bytes; any bit pattern is a valid T.
        unsafe {
            staged::copy_dtoh(
                &self.ctx,
                dst.as_mut_ptr().cast(),
                self.ptr,
                self.byte_len(),
            )
        }
    }

    /// Copies the whole buffer into a new `Vec` (PyCUDA's `from_device`).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut v = Vec::<T>::with_capacity(self.len);
        // SAFETY: the Vec has capacity for `len` elements; the copy fills all of them
        // (any bit pattern is a valid T) before `set_len`.
        unsafe {
            staged::copy_dtoh(&self.ctx, v.as_mut_ptr().cast(), self.ptr, self.byte_len())?;
            v.set_len(self.len);
        }
        Ok(v)
    }

    /// Copies from another device buffer of the same length (device to device).
    pub fn copy_from_device(&mut self, src: &impl DevicePtr) -> Result<()> {
        if src.byte_len() != self.byte_len() {
            return Err(Error::invalid(format!(
                "copy of {} bytes into a buffer of {} bytes",
                src.byte_len(),
                self.byte_len()
            )));
        }
        if self.len == 0 {
            return Ok(());
        }
        self.ctx.bind()?;
        // SAFETY: both ranges hold `byte_len` bytes.
        unsafe { call!(cuMemcpyDtoD_v2(self.ptr, src.device_ptr(), self.byte_len())) }
    }

    /// A read-only view of `range`.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceView<'_, T>> {
        let (start, end) = resolve_range(range, self.len)?;
        Ok(DeviceView {
            ptr: self.ptr + (start * std::mem::size_of::<T>()) as u64,
            len: end - start,
            owner: self.free_on.as_ref().map(|s| (s, &self.uses)),
            _marker: PhantomData,
        })
    }

    /// A mutable view of `range`.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceViewMut<'_, T>> {
        let (start, end) = resolve_range(range, self.len)?;
        Ok(DeviceViewMut {
            ptr: self.ptr + (start * std::mem::size_of::<T>()) as u64,
            len: end - start,
            owner: self.free_on.as_ref().map(|s| (s, &self.uses)),
            _marker: PhantomData,
        })
    }

    fn check_len(&self, other: usize) -> Result<()> {
        if other == self.len {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "host slice has {other} elements, device buffer has {}",
                self.len
            )))
        }
    }

    /// Frees now and returns any error (instead of queueing it on the context).
    pub fn free(self) -> Result<()> {
        let me = std::mem::ManuallyDrop::new(self);
        let r = me.release();
        // SAFETY: `me` is never dropped, so each field is read exactly once.
        unsafe {
            drop(std::ptr::read(&me.ctx));
            drop(std::ptr::read(&me.free_on));
            drop(std::ptr::read(&me.uses));
        }
        r
    }

    fn release(&self) -> Result<()> {
        if self.ptr == 0 {
            return Ok(());
        }
        self.ctx.make_current()?;
        match &self.free_on {
            Some(s) => {
                // Order the free after every other stream's recorded use of the buffer;
                // where that cannot be queued, wait for the use here.
                let mut first_err = None;
                for (_, event) in self.uses.take() {
                    // SAFETY: the stream and the event are alive (we hold both).
                    let waited = unsafe { call!(cuStreamWaitEvent(s.raw(), event.raw(), 0)) };
                    if waited.is_err() {
                        // SAFETY: the event is alive.
                        if let Err(e) = unsafe { call!(cuEventSynchronize(event.raw())) } {
                            first_err.get_or_insert(e);
                        }
                    }
                }
                // SAFETY: allocated with cuMemAllocAsync; freed once, ordered on its
                // stream after its own work and after every recorded use on other
                // streams (the waits above).
                let freed = unsafe { call!(cuMemFreeAsync(self.ptr, s.raw())) };
                first_err.map_or(freed, Err)
            }
            // SAFETY: allocated with cuMemAlloc; freed once. cuMemFree synchronizes with
            // the device before freeing memory of this kind, so no queued work still
            // uses it (see the module docs, "When memory is freed").
            None => unsafe { call!(cuMemFree_v2(self.ptr)) },
        }
    }
}

impl<T: DeviceRepr> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            self.ctx.defer_error(e);
        }
    }
}

impl<T: DeviceRepr> DevicePtr for DeviceBuffer<T> {
    #[inline]
    fn device_ptr(&self) -> CUdeviceptr {
        self.ptr
    }
    #[inline]
    fn byte_len(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
    #[inline]
    fn record_use(&self, stream: &Stream) -> Result<()> {
        DeviceBuffer::record_use(self, stream)
    }
}

pub(crate) fn resolve_range(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(Error::invalid(format!(
            "range {start}..{end} out of bounds for length {len}"
        )));
    }
    Ok((start, end))
}

/// A borrowed, read-only range of a [`DeviceBuffer`].
#[derive(Debug, Clone, Copy)]
pub struct DeviceView<'a, T> {
    ptr: CUdeviceptr,
    len: usize,
    /// The owning buffer's stream and use log, when it is freed stream-ordered.
    owner: Option<(&'a Stream, &'a ForeignUses)>,
    _marker: PhantomData<&'a T>,
}

/// A borrowed, writable range of a [`DeviceBuffer`].
#[derive(Debug)]
pub struct DeviceViewMut<'a, T> {
    ptr: CUdeviceptr,
    len: usize,
    /// The owning buffer's stream and use log, when it is freed stream-ordered.
    owner: Option<(&'a Stream, &'a ForeignUses)>,
    _marker: PhantomData<&'a mut T>,
}

macro_rules! view_impl {
    ($v:ident) => {
        impl<T> $v<'_, T> {
            #[inline]
            pub(crate) fn ptr_ref(&self) -> &CUdeviceptr {
                &self.ptr
            }
            /// Number of elements.
            pub fn len(&self) -> usize {
                self.len
            }
            /// True when empty.
            pub fn is_empty(&self) -> bool {
                self.len == 0
            }
        }
        impl<T> DevicePtr for $v<'_, T> {
            #[inline]
            fn device_ptr(&self) -> CUdeviceptr {
                self.ptr
            }
            #[inline]
            fn byte_len(&self) -> usize {
                self.len * std::mem::size_of::<T>()
            }
            #[inline]
            fn record_use(&self, stream: &Stream) -> Result<()> {
                match self.owner {
                    Some((own, uses)) if !same_stream(own, stream) => uses.record(stream),
                    _ => Ok(()),
                }
            }
        }
    };
}
view_impl!(DeviceView);
view_impl!(DeviceViewMut);

impl<T> DeviceView<'_, T> {
    /// A view of `len` elements at `ptr` (mapped host memory, managed memory, ...).
    ///
    /// # Safety
    /// `ptr..ptr + len * size_of::<T>()` must be device-accessible memory that stays valid
    /// and is not written by the host for the view's lifetime.
    pub(crate) unsafe fn from_raw_parts(ptr: CUdeviceptr, len: usize) -> Self {
        DeviceView {
            ptr,
            len,
            owner: None,
            _marker: PhantomData,
        }
    }
}

impl<T> DeviceViewMut<'_, T> {
    /// A writable view of `len` elements at `ptr` (mapped host memory, managed memory, ...).
    ///
    /// # Safety
    /// `ptr..ptr + len * size_of::<T>()` must be device-accessible memory that stays valid
    /// and is accessed by nobody else for the view's lifetime.
    pub(crate) unsafe fn from_raw_parts(ptr: CUdeviceptr, len: usize) -> Self {
        DeviceViewMut {
            ptr,
            len,
            owner: None,
            _marker: PhantomData,
        }
    }
}
