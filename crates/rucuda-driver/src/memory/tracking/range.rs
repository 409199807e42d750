//! [`DeviceRange`]: memory together with its log, what work receives memory as, and
//! [`DevicePtr`], anything that names device memory.

use rucuda_driver_sys::CUdeviceptr;

use crate::error::{Error, Result};
use crate::streams::stream::Stream;

use super::log::{InUse, UseLog};
use super::pending::Access;

/// A range of memory together with the log of its uses: what work receives memory as.
/// [`DeviceRange::use_on`] is the one way to its address for queued work.
///
/// Safe code gets ranges from memory owners ([`DevicePtr::device_range`]), never from an
/// address; [`DeviceRange::untracked`] is `unsafe`.
#[derive(Clone, Copy)]
pub struct DeviceRange<'a> {
    ptr: CUdeviceptr,
    bytes: usize,
    log: Option<&'a UseLog>,
}

impl std::fmt::Debug for DeviceRange<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceRange")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("bytes", &self.bytes)
            .field("tracked", &self.log.is_some())
            .finish()
    }
}

impl<'a> DeviceRange<'a> {
    /// `bytes` bytes at `ptr` whose uses `log` records.
    ///
    /// # Safety
    /// The range must be memory that stays valid for `'a` and for all work queued through
    /// [`DeviceRange::use_on`] until `log` has seen it finish (the owner's free waits on
    /// the log), and `log` must be the one log every user of that memory goes through.
    pub unsafe fn new(ptr: CUdeviceptr, bytes: usize, log: &'a UseLog) -> DeviceRange<'a> {
        DeviceRange {
            ptr,
            bytes,
            log: Some(log),
        }
    }

    /// A range nobody tracks (memory from another library).
    ///
    /// # Safety
    /// The memory must stay valid until all work queued with it has finished, and nobody
    /// may write it (on the host or the device) while work that uses it is queued.
    pub unsafe fn untracked(ptr: CUdeviceptr, bytes: usize) -> DeviceRange<'a> {
        DeviceRange {
            ptr,
            bytes,
            log: None,
        }
    }

    /// Size in bytes.
    #[inline]
    pub fn byte_len(&self) -> usize {
        self.bytes
    }

    /// The address for work about to be queued on `stream`, which uses the range as
    /// `access` says: orders `stream` after conflicting earlier work on other streams and
    /// records the use, so that later conflicting work, host access and the free wait for
    /// it. Call it right before queueing the work, on the thread that queues it, and keep
    /// the returned [`InUse`] until the work is queued.
    #[inline]
    pub fn use_on(&self, stream: &Stream, access: Access) -> Result<InUse<'a>> {
        match self.log {
            Some(log) => log.note(stream, access, self.ptr),
            None => Ok(InUse::untracked(self.ptr)),
        }
    }

    /// Waits on the host until no queued work conflicts with a host access of this kind
    /// (a read waits for writes; a write for every use).
    pub fn wait_on_host(&self, access: Access) -> Result<()> {
        match self.log {
            Some(log) => log.wait_on_host(access),
            None => Ok(()),
        }
    }

    /// `bytes` bytes from `offset` on, with the same log.
    pub fn sub(&self, offset: usize, bytes: usize) -> Result<DeviceRange<'a>> {
        match offset.checked_add(bytes) {
            Some(end) if end <= self.bytes => Ok(DeviceRange {
                ptr: self.ptr + offset as u64,
                bytes,
                log: self.log,
            }),
            _ => Err(Error::invalid(format!(
                "bytes {offset}..{offset}+{bytes} lie outside a range of {} bytes",
                self.bytes
            ))),
        }
    }

    /// True when the two ranges share a byte.
    pub fn overlaps(&self, other: &DeviceRange<'_>) -> bool {
        let (a0, a1) = (self.ptr, self.ptr + self.bytes as u64);
        let (b0, b1) = (other.ptr, other.ptr + other.bytes as u64);
        a0 < b1 && b0 < a1
    }

    /// True when both ranges start at the same address.
    pub fn same_start(&self, other: &DeviceRange<'_>) -> bool {
        self.ptr == other.ptr
    }

    /// True when both ranges record their uses in one log (views of one allocation).
    pub fn same_log(&self, other: &DeviceRange<'_>) -> bool {
        match (self.log, other.log) {
            (Some(a), Some(b)) => std::ptr::eq(a, b),
            _ => false,
        }
    }

    /// True when the start address is a multiple of `align` bytes (for choosing vector
    /// loads; not an address for work).
    pub fn is_aligned(&self, align: usize) -> bool {
        align == 0 || self.ptr % align as u64 == 0
    }

    /// The log (`None` for untracked memory), for builders that record the use when
    /// their work is queued.
    #[inline]
    pub(crate) fn log(&self) -> Option<&'a UseLog> {
        self.log
    }

    /// The start address for calls that queue no work: pointer attributes, IPC handles,
    /// identity and alignment checks. Work takes its address from
    /// [`DeviceRange::use_on`]; only `unsafe` code could queue work with this one.
    #[inline]
    pub fn address(&self) -> CUdeviceptr {
        self.ptr
    }
}

/// Anything that names device memory: buffers, views, and the other memory kinds. Work
/// receives it as a [`DeviceRange`], whose [`use_on`](DeviceRange::use_on) records the
/// use.
pub trait DevicePtr {
    /// The memory with the log of its uses.
    fn device_range(&self) -> DeviceRange<'_>;

    /// The size in bytes.
    #[inline]
    fn byte_len(&self) -> usize {
        self.device_range().byte_len()
    }
}

impl<P: DevicePtr + ?Sized> DevicePtr for &P {
    fn device_range(&self) -> DeviceRange<'_> {
        (**self).device_range()
    }
}

impl<P: DevicePtr + ?Sized> DevicePtr for &mut P {
    fn device_range(&self) -> DeviceRange<'_> {
        (**self).device_range()
    }
}

/// Lets the graph that this thread is capturing through a
/// [`CaptureSession`](crate::CaptureSession) use `owner`'s memory: the graph keeps a
/// clone of `owner` (and with it the memory) for as long as it can be replayed, and every
/// replay notes its uses in the memory's log. Work on memory that no owner was registered
/// for makes the capture fail. Does nothing when this thread captures nothing.
///
/// ```no_run
/// # use rucuda_driver::*;
/// # use std::sync::Arc;
/// # let ctx = Device::get(0)?.primary_context()?;
/// let buf = Arc::new(DeviceBuffer::<f32>::zeros(&ctx, 256)?);
/// keep_alive_for_capture(&buf); // before queueing captured work on `buf`
/// # Ok::<(), Error>(())
/// ```
#[inline]
pub fn keep_alive_for_capture<P: DevicePtr + Send + Sync + 'static>(owner: &std::sync::Arc<P>) {
    if !super::capture::any_active() {
        return;
    }
    let range = owner.device_range();
    if let Some(log) = range.log() {
        super::capture::keep_alive(log as *const UseLog as usize, || {
            std::sync::Arc::clone(owner) as super::capture::Keeper
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::tracking::pending::HELD;
    use std::cell::Cell;

    #[test]
    fn ranges_check_their_bounds_and_overlaps() {
        let log = UseLog::new();
        // SAFETY: no work is queued with these ranges.
        let r = unsafe { DeviceRange::new(0x1000, 256, &log) };
        assert_eq!(r.sub(16, 240).unwrap().byte_len(), 240);
        assert!(r.sub(16, 241).is_err());
        assert!(r.sub(usize::MAX, 2).is_err());
        let a = r.sub(0, 16).unwrap();
        let b = r.sub(16, 16).unwrap();
        assert!(!a.overlaps(&b));
        assert!(r.overlaps(&b));
        assert!(a.same_log(&b));
        // SAFETY: as above.
        let other = unsafe { DeviceRange::untracked(0x1000, 4) };
        assert!(!other.same_log(&a) && other.overlaps(&a));
        assert!(r.is_aligned(256) && !b.is_aligned(32));
        assert!(log.is_idle());
    }

    #[test]
    fn an_untracked_use_is_never_pending() {
        // SAFETY: no work is queued with this range.
        let r = unsafe { DeviceRange::untracked(0x2000, 8) };
        let held_before = HELD.with(Cell::get);
        let null = InUse::null();
        assert_eq!((null.ptr(), HELD.with(Cell::get)), (0, held_before));
        assert_eq!(r.address(), 0x2000);
    }
}
