//! [`ManagedBuffer`]: unified memory from `cuMemAllocManaged`, addressable by the host and
//! by kernels at the same address (PyCUDA's `managed_empty`/`managed_zeros` and their
//! `_like` forms), with stream attachment, prefetching and usage advice.
//!
//! # The host-access rule
//! The host may touch managed memory only while no kernel that could use it runs. On
//! devices without `CONCURRENT_MANAGED_ACCESS` (Windows, pre-Pascal GPUs) touching *any*
//! managed memory while *any* kernel of the device runs kills the process. So host access
//! takes `&mut self` (no kernel argument borrows the buffer meanwhile) and synchronises
//! first: [`ManagedBuffer::host_slice`] waits for the whole context,
//! [`ManagedBuffer::host_slice_after`] only for the stream the buffer is attached to
//! (see [`ManagedBuffer::attach`]). The `unsafe` `*_unsynchronized` forms skip the wait.

use std::marker::PhantomData;

use rucuda_driver_sys::{CUdeviceptr, CUmemLocation, CUmemLocationType, CUmem_advise};

use crate::context::Context;
use crate::device::Device;
use crate::error::{call, Error, Result};
use crate::memory::device_buffer::DeviceView;
use crate::memory::device_buffer::DeviceViewMut;
use crate::memory::kernel_arg::memory_kernel_arg;
use crate::memory::pointer::DevicePtrMut;
use crate::memory::tracking::DevicePtr;
use crate::memory::tracking::{Access, DeviceRange, UseLog};
use crate::repr::byte_size;
use crate::repr::DeviceRepr;
use crate::streams::stream::Stream;

bitflags::bitflags! {
    /// Who may access managed memory (PyCUDA's `mem_attach_flags`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct MemAttachFlags: u32 {
        /// Every stream of every device.
        const GLOBAL = 1;
        /// The host only (until attached otherwise).
        const HOST = 2;
        /// The host and one stream ([`ManagedBuffer::attach`] only).
        const SINGLE = 4;
    }
}

/// A processor that memory can live on or be accessed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemLocation {
    /// A device's memory.
    Device(Device),
    /// Host memory.
    Host,
    /// Host memory on a NUMA node.
    HostNuma(i32),
    /// Host memory on the NUMA node of the calling thread.
    HostNumaCurrent,
}

impl MemLocation {
    pub(crate) fn raw(self) -> CUmemLocation {
        let (type_, id) = match self {
            MemLocation::Device(d) => (CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, d.raw()),
            MemLocation::Host => (CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST, 0),
            MemLocation::HostNuma(n) => (CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST_NUMA, n),
            MemLocation::HostNumaCurrent => {
                (CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0)
            }
        };
        CUmemLocation { type_, id }
    }
}

/// Usage advice for managed memory (`cuMemAdvise`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemAdvice {
    /// Mostly read: processors that read it get read-only copies.
    SetReadMostly,
    /// Undoes [`MemAdvice::SetReadMostly`].
    UnsetReadMostly,
    /// Prefer to keep the pages at this location.
    SetPreferredLocation(MemLocation),
    /// Undoes [`MemAdvice::SetPreferredLocation`].
    UnsetPreferredLocation,
    /// This processor accesses it: keep it mapped there.
    SetAccessedBy(MemLocation),
    /// Undoes [`MemAdvice::SetAccessedBy`] for this processor.
    UnsetAccessedBy(MemLocation),
}

impl MemAdvice {
    /// The raw advice and location; `default` is used where the driver ignores it.
    fn raw(self, default: MemLocation) -> (CUmem_advise, CUmemLocation) {
        use CUmem_advise as A;
        let (advice, loc) = match self {
            MemAdvice::SetReadMostly => (A::CU_MEM_ADVISE_SET_READ_MOSTLY, default),
            MemAdvice::UnsetReadMostly => (A::CU_MEM_ADVISE_UNSET_READ_MOSTLY, default),
            MemAdvice::SetPreferredLocation(l) => (A::CU_MEM_ADVISE_SET_PREFERRED_LOCATION, l),
            MemAdvice::UnsetPreferredLocation => {
                (A::CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, default)
            }
            MemAdvice::SetAccessedBy(l) => (A::CU_MEM_ADVISE_SET_ACCESSED_BY, l),
            MemAdvice::UnsetAccessedBy(l) => (A::CU_MEM_ADVISE_UNSET_ACCESSED_BY, l),
        };
        (advice, loc.raw())
    }
}

/// Managed (unified) memory holding `len` elements of `T` (PyCUDA's `ManagedAllocation`).
/// Kernels take it like a [`DeviceBuffer`](crate::DeviceBuffer) (`&buf`, `&mut buf`); the
/// host reads and writes it through [`ManagedBuffer::host_slice`] and friends (see the
/// module's host-access rule). Freed with `cuMemFree` when dropped.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let mut x = managed_zeros::<f32>(&ctx, 1024, MemAttachFlags::GLOBAL)?;
/// x.host_slice_mut()?.fill(1.0);
/// // ... launch kernels with `&mut x` ...
/// let sum: f32 = x.host_slice()?.iter().sum();
/// # Ok::<(), Error>(())
/// ```
pub struct ManagedBuffer<T: DeviceRepr> {
    ptr: CUdeviceptr,
    len: usize,
    ctx: Context,
    uses: UseLog,
    _marker: PhantomData<T>,
}

// SAFETY: managed memory is not tied to a host thread; T is Send + Sync plain data; host
// access goes through `&mut self`.
unsafe impl<T: DeviceRepr> Send for ManagedBuffer<T> {}
// SAFETY: shared references only read the handle.
unsafe impl<T: DeviceRepr> Sync for ManagedBuffer<T> {}

impl<T: DeviceRepr> std::fmt::Debug for ManagedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagedBuffer")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .field("type", &T::C_TYPE)
            .finish()
    }
}

impl<T: DeviceRepr> ManagedBuffer<T> {
    /// Allocates `len` elements of managed memory, visible to every stream
    /// ([`MemAttachFlags::GLOBAL`]) or first to the host only ([`MemAttachFlags::HOST`]).
    /// PyCUDA's `managed_empty`: the contents are unspecified.
    pub fn empty(ctx: &Context, len: usize, flags: MemAttachFlags) -> Result<Self> {
        if flags != MemAttachFlags::GLOBAL && flags != MemAttachFlags::HOST {
            return Err(Error::invalid(format!(
                "managed memory is allocated with GLOBAL or HOST, not {flags:?} \
                 (SINGLE is for ManagedBuffer::attach)"
            )));
        }
        let bytes = byte_size::<T>(len)?;
        ctx.bind_verified()?;
        let mut ptr: CUdeviceptr = 0;
        if bytes > 0 {
            // SAFETY: writes one pointer; freed on drop.
            unsafe { call!(cuMemAllocManaged(&mut ptr, bytes, flags.bits()))? };
            if ptr as usize % std::mem::align_of::<T>() != 0 {
                let buf = ManagedBuffer::<u8> {
                    ptr,
                    len: bytes,
                    ctx: ctx.clone(),
                    uses: UseLog::new(),
                    _marker: PhantomData,
                };
                drop(buf);
                return Err(Error::invalid(format!(
                    "cuMemAllocManaged returned {ptr:#x}, not aligned for {}",
                    T::C_TYPE
                )));
            }
        }
        Ok(ManagedBuffer {
            ptr,
            len,
            ctx: ctx.clone(),
            uses: UseLog::new(),
            _marker: PhantomData,
        })
    }

    /// Allocates `len` zeroed elements (PyCUDA's `managed_zeros`), zeroed on the device.
    pub fn zeros(ctx: &Context, len: usize, flags: MemAttachFlags) -> Result<Self> {
        let buf = Self::empty(ctx, len, flags)?;
        if buf.byte_len() > 0 {
            buf.ctx.bind()?;
            // SAFETY: the range lies inside the allocation.
            unsafe { call!(cuMemsetD8_v2(buf.ptr, 0, buf.byte_len()))? };
            // The memset may still run: finish it before the host can look.
            buf.ctx.synchronize()?;
        }
        Ok(buf)
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds no element.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The context it was allocated in.
    #[inline]
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The address, the same for the host and the device (PyCUDA's `get_device_pointer`).
    #[inline]
    pub fn as_ptr(&self) -> *const T {
        self.ptr as usize as *const T
    }

    /// The elements, after waiting for all work of the context.
    pub fn host_slice(&mut self) -> Result<&[T]> {
        self.uses.wait_on_host(Access::Write)?;
        self.ctx.synchronize()?;
        // SAFETY: no work of the context runs, `&mut self` keeps the buffer out of new
        // kernel arguments while the slice lives.
        Ok(unsafe { self.host_slice_unsynchronized() })
    }

    /// The elements, writable, after waiting for all work of the context.
    pub fn host_slice_mut(&mut self) -> Result<&mut [T]> {
        self.uses.wait_on_host(Access::Write)?;
        self.ctx.synchronize()?;
        // SAFETY: as for `host_slice`.
        Ok(unsafe { self.host_slice_mut_unsynchronized() })
    }

    /// The elements, after waiting for `stream` only: for a buffer attached to `stream`
    /// with [`MemAttachFlags::SINGLE`] (or [`MemAttachFlags::HOST`]), or on devices with
    /// concurrent managed access when only `stream` uses it. Work queued through rucuda
    /// (launches, copies) on any stream is waited for too, through the buffer's log.
    pub fn host_slice_after(&mut self, stream: &Stream) -> Result<&[T]> {
        self.uses.wait_on_host(Access::Write)?;
        stream.synchronize()?;
        // SAFETY: the work that may use the buffer has finished (caller's choice of
        // stream, see the docs); `&mut self` keeps it out of new kernel arguments.
        Ok(unsafe { self.host_slice_unsynchronized() })
    }

    /// The elements, writable, after waiting for `stream` only (see
    /// [`ManagedBuffer::host_slice_after`]).
    pub fn host_slice_mut_after(&mut self, stream: &Stream) -> Result<&mut [T]> {
        self.uses.wait_on_host(Access::Write)?;
        stream.synchronize()?;
        // SAFETY: as for `host_slice_after`.
        Ok(unsafe { self.host_slice_mut_unsynchronized() })
    }

    /// The elements with no synchronisation.
    ///
    /// # Safety
    /// No kernel or copy may write the buffer while the slice lives, and on devices
    /// without concurrent managed access no kernel of the device may run at all.
    pub unsafe fn host_slice_unsynchronized(&self) -> &[T] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `len` elements of host-accessible memory; the caller rules out device
        // writes and concurrent-access faults.
        unsafe { std::slice::from_raw_parts(self.ptr as usize as *const T, self.len) }
    }

    /// The elements, writable, with no synchronisation.
    ///
    /// # Safety
    /// As for [`ManagedBuffer::host_slice_unsynchronized`], and no device work may read
    /// the buffer meanwhile either.
    pub unsafe fn host_slice_mut_unsynchronized(&mut self) -> &mut [T] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: as above; `&mut self` makes this the only host access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr as usize as *mut T, self.len) }
    }

    /// A read-only device view.
    pub fn view(&self) -> DeviceView<'_, T> {
        // SAFETY: the allocation holds `len` elements and outlives the borrow.
        unsafe { DeviceView::from_range(self.device_range(), self.len) }
    }

    /// A writable device view.
    pub fn view_mut(&mut self) -> DeviceViewMut<'_, T> {
        let len = self.len;
        // SAFETY: the memory lives as long as `self` (borrowed mutably by the view);
        // `uses` is its one log.
        let range =
            unsafe { DeviceRange::new(self.ptr, len * std::mem::size_of::<T>(), &self.uses) };
        // SAFETY: the allocation holds `len` elements; the view borrows `self` mutably.
        unsafe { DeviceViewMut::from_range(range, len) }
    }

    /// Changes who may access the memory, ordered on `stream` (`cuStreamAttachMemAsync`,
    /// PyCUDA's `attach`): [`MemAttachFlags::SINGLE`] makes it private to the host and
    /// `stream`, so the host may use it while kernels run on other streams.
    ///
    /// ```no_run
    /// use rucuda_driver::*;
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    /// let mut x = managed_zeros::<u32>(&ctx, 256, MemAttachFlags::GLOBAL)?;
    /// x.attach(&stream, MemAttachFlags::SINGLE)?;
    /// x.host_slice_mut_after(&stream)?[0] = 7;
    /// # Ok::<(), Error>(())
    /// ```
    pub fn attach(&mut self, stream: &Stream, flags: MemAttachFlags) -> Result<()> {
        if flags.bits().count_ones() != 1 {
            return Err(Error::invalid(format!(
                "attach takes exactly one of GLOBAL, HOST, SINGLE, not {flags:?}"
            )));
        }
        if self.len == 0 {
            return Ok(());
        }
        stream.context().bind()?;
        // SAFETY: the whole allocation (length 0 means all of it); handles are alive.
        unsafe {
            call!(cuStreamAttachMemAsync(
                stream.raw(),
                self.ptr,
                0,
                flags.bits()
            ))
        }
    }

    /// Migrates the memory to `location` ahead of use, ordered on `stream`
    /// (`cuMemPrefetchAsync`). Needs a device with concurrent managed access.
    pub fn prefetch(&self, location: MemLocation, stream: &Stream) -> Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        stream.context().bind()?;
        // SAFETY: the range is our allocation; flags must be 0.
        unsafe {
            call!(cuMemPrefetchAsync_v2(
                self.ptr,
                self.byte_len(),
                location.raw(),
                0,
                stream.raw()
            ))
        }
    }

    /// Gives the driver usage advice for the whole buffer (`cuMemAdvise`).
    ///
    /// ```no_run
    /// use rucuda_driver::*;
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let x = managed_zeros::<f32>(&ctx, 1 << 20, MemAttachFlags::GLOBAL)?;
    /// x.advise(MemAdvice::SetReadMostly)?;
    /// x.advise(MemAdvice::SetPreferredLocation(MemLocation::Device(ctx.device())))?;
    /// # Ok::<(), Error>(())
    /// ```
    pub fn advise(&self, advice: MemAdvice) -> Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        self.ctx.bind()?;
        let (advice, location) = advice.raw(MemLocation::Device(self.ctx.device()));
        // SAFETY: the range is our allocation.
        unsafe { call!(cuMemAdvise_v2(self.ptr, self.byte_len(), advice, location)) }
    }

    fn release(&self) -> Result<()> {
        if self.ptr == 0 {
            return Ok(());
        }
        // Where the wait fails the memory is leaked rather than freed under queued work.
        self.uses.wait_on_host(Access::Write)?;
        self.ctx.make_current()?;
        // SAFETY: allocated with cuMemAllocManaged, freed once; no recorded use is pending.
        unsafe { call!(cuMemFree_v2(self.ptr)) }
    }

    /// Frees now and returns any error (instead of queueing it on the context).
    pub fn free(self) -> Result<()> {
        let mut me = std::mem::ManuallyDrop::new(self);
        let r = me.release();
        // SAFETY: `me` is never dropped, so the context handle is dropped exactly once.
        unsafe {
            std::ptr::drop_in_place(&mut me.ctx);
            std::ptr::drop_in_place(&mut me.uses);
        }
        r
    }
}

impl<T: DeviceRepr> Drop for ManagedBuffer<T> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            self.ctx.defer_error(e);
        }
    }
}

impl<T: DeviceRepr> DevicePtr for ManagedBuffer<T> {
    #[inline]
    fn device_range(&self) -> DeviceRange<'_> {
        // SAFETY: the memory lives as long as `self`; `uses` is its one log.
        unsafe { DeviceRange::new(self.ptr, self.len * std::mem::size_of::<T>(), &self.uses) }
    }
}

impl<T: DeviceRepr> DevicePtrMut for ManagedBuffer<T> {}

memory_kernel_arg!(Read; [T: DeviceRepr] &ManagedBuffer<T>);
memory_kernel_arg!(Write; [T: DeviceRepr] &mut ManagedBuffer<T>);

/// `len` elements of managed memory, contents unspecified (PyCUDA's `managed_empty`).
pub fn managed_empty<T: DeviceRepr>(
    ctx: &Context,
    len: usize,
    flags: MemAttachFlags,
) -> Result<ManagedBuffer<T>> {
    ManagedBuffer::empty(ctx, len, flags)
}

/// `len` zeroed elements of managed memory (PyCUDA's `managed_zeros`).
pub fn managed_zeros<T: DeviceRepr>(
    ctx: &Context,
    len: usize,
    flags: MemAttachFlags,
) -> Result<ManagedBuffer<T>> {
    ManagedBuffer::zeros(ctx, len, flags)
}

/// Managed memory as long as `like`, contents unspecified (PyCUDA's `managed_empty_like`).
pub fn managed_empty_like<T: DeviceRepr>(
    ctx: &Context,
    like: &[T],
    flags: MemAttachFlags,
) -> Result<ManagedBuffer<T>> {
    ManagedBuffer::empty(ctx, like.len(), flags)
}

/// Zeroed managed memory as long as `like` (PyCUDA's `managed_zeros_like`).
pub fn managed_zeros_like<T: DeviceRepr>(
    ctx: &Context,
    like: &[T],
    flags: MemAttachFlags,
) -> Result<ManagedBuffer<T>> {
    ManagedBuffer::zeros(ctx, like.len(), flags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rucuda_driver_sys::CUmemAttach_flags;

    #[test]
    fn attach_flags_match_the_driver_constants() {
        assert_eq!(
            MemAttachFlags::GLOBAL.bits(),
            CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL.0
        );
        assert_eq!(
            MemAttachFlags::HOST.bits(),
            CUmemAttach_flags::CU_MEM_ATTACH_HOST.0
        );
        assert_eq!(
            MemAttachFlags::SINGLE.bits(),
            CUmemAttach_flags::CU_MEM_ATTACH_SINGLE.0
        );
    }

    #[test]
    fn locations_and_advice_map_to_raw_values() {
        let host = MemLocation::Host.raw();
        assert_eq!(host.type_, CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST);
        let numa = MemLocation::HostNuma(3).raw();
        assert_eq!(
            (numa.type_, numa.id),
            (CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST_NUMA, 3)
        );
        let (a, l) = MemAdvice::SetAccessedBy(MemLocation::Host).raw(MemLocation::HostNuma(1));
        assert_eq!(a, CUmem_advise::CU_MEM_ADVISE_SET_ACCESSED_BY);
        assert_eq!(l.type_, CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST);
        let (a, l) = MemAdvice::SetReadMostly.raw(MemLocation::HostNuma(1));
        assert_eq!(a, CUmem_advise::CU_MEM_ADVISE_SET_READ_MOSTLY);
        assert_eq!(l.id, 1);
    }
}
