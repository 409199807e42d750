//! What the page-locked host memory kinds share ([`PinnedHostBuffer`](crate::PinnedHostBuffer)
//! from `cuMemHostAlloc`, [`RegisteredHostMemory`](crate::RegisteredHostMemory) from
//! `cuMemHostRegister`): the elements, the context that page-locked them, the log of their
//! uses by queued work, the mapped device address and views, and host access that waits
//! for that work. Each kind adds how its memory is made and given back, and
//! [`page_locked_api!`] writes the public methods they have in common once;
//! [`page_locked_device_api!`] those that lend the memory to queued work, for the kinds
//! that own it.

use std::ptr::NonNull;

use rucuda_driver_sys::CUdeviceptr;

use crate::context::Context;
use crate::error::{call, Result};
use crate::memory::tracking::{Access, DeviceRange, UseLog};
use crate::repr::DeviceRepr;

/// `len` elements of page-locked host memory known to `ctx`, with the log of their uses.
pub(crate) struct PageLocked<T: DeviceRepr> {
    ptr: NonNull<T>,
    len: usize,
    ctx: Context,
    uses: UseLog,
}

impl<T: DeviceRepr> std::fmt::Debug for PageLocked<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageLocked")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("type", &T::C_TYPE)
            .finish()
    }
}

impl<T: DeviceRepr> PageLocked<T> {
    /// # Safety
    /// `ptr..ptr + len` must be valid host memory, exclusively this value's, page-locked
    /// in `ctx` (or empty) for as long as this value lives.
    pub(crate) unsafe fn new(ptr: NonNull<T>, len: usize, ctx: &Context) -> PageLocked<T> {
        PageLocked {
            ptr,
            len,
            ctx: ctx.clone(),
            uses: UseLog::new(),
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(crate) fn context(&self) -> &Context {
        &self.ctx
    }

    #[inline]
    pub(crate) fn as_ptr(&self) -> *mut T {
        self.ptr.as_ptr()
    }

    pub(crate) fn byte_len(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// True when no byte is page-locked (nothing to map, query or give back).
    pub(crate) fn is_void(&self) -> bool {
        self.byte_len() == 0
    }

    /// The device address of the mapped memory (`cuMemHostGetDevicePointer`); 0 for no
    /// memory.
    pub(crate) fn device_pointer(&self) -> Result<CUdeviceptr> {
        if self.is_void() {
            return Ok(0);
        }
        self.ctx.bind()?;
        let mut dptr: CUdeviceptr = 0;
        // SAFETY: writes one device pointer; the host pointer is page-locked memory of
        // this context; flags must be 0.
        unsafe {
            call!(cuMemHostGetDevicePointer_v2(
                &mut dptr,
                self.as_ptr().cast(),
                0
            ))?
        };
        Ok(dptr)
    }

    /// The mapped memory as a range whose uses go through this memory's log.
    pub(crate) fn mapped_range(&self) -> Result<DeviceRange<'_>> {
        let dptr = self.device_pointer()?;
        // SAFETY: the mapping covers our `len` elements for as long as `self` lives, which
        // the range borrows; `uses` is the one log of this memory, which host access and
        // the release wait on.
        Ok(unsafe { DeviceRange::new(dptr, self.byte_len(), &self.uses) })
    }

    /// The host memory as a range for asynchronous copies: its "address" is the host
    /// address, and its log is this memory's.
    pub(crate) fn host_range(&self) -> DeviceRange<'_> {
        // SAFETY: `len` elements at `ptr` live as long as `self`; `uses` is the log every
        // use of this memory goes through.
        unsafe { DeviceRange::new(self.as_ptr() as usize as u64, self.byte_len(), &self.uses) }
    }

    /// Waits on the host until no queued work conflicts with a host access of this kind.
    pub(crate) fn wait(&self, access: Access) -> Result<()> {
        self.uses.wait_on_host(access)
    }

    /// The elements, after waiting for queued work that writes them.
    pub(crate) fn as_slice(&self) -> Result<&[T]> {
        self.wait(Access::Read)?;
        // SAFETY: `len` initialised elements (page-locked memory holds some bit pattern,
        // valid for T), no queued work writes them any more, and `&self` forbids host
        // writes.
        Ok(unsafe { std::slice::from_raw_parts(self.as_ptr(), self.len) })
    }

    /// The elements, writable, after waiting for all queued work that uses them.
    pub(crate) fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.wait(Access::Write)?;
        // SAFETY: as for `as_slice`; `&mut self` makes this the only access.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.as_ptr(), self.len) })
    }

    /// The elements for `Deref`, which cannot fail. Where the wait fails (the memory is
    /// used by work on a stream that is capturing a graph, a wait that would close a
    /// cycle of threads, a broken context) the error is queued on the context, returned
    /// by its next call, and the slice is **empty**: handing out the elements could race
    /// work that may still write them. [`PageLocked::as_slice`] returns the error instead.
    pub(crate) fn deref_slice(&self) -> &[T] {
        if let Err(e) = self.wait(Access::Read) {
            self.ctx.defer_error(e);
            return &[];
        }
        // SAFETY: as for `as_slice`; queued writes finished.
        unsafe { std::slice::from_raw_parts(self.as_ptr(), self.len) }
    }

    /// The elements for `DerefMut`, as [`PageLocked::deref_slice`] (empty where the wait
    /// fails).
    pub(crate) fn deref_slice_mut(&mut self) -> &mut [T] {
        if let Err(e) = self.wait(Access::Write) {
            self.ctx.defer_error(e);
            return &mut [];
        }
        // SAFETY: as for `deref_slice`; `&mut self` makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(self.as_ptr(), self.len) }
    }
}

/// The public methods every page-locked kind has, for a type whose field `mem` is its
/// [`PageLocked`] memory: length, context, the mapped address and views, `Deref`.
macro_rules! page_locked_api {
    ($ty:ident $(<$lt:lifetime>)?) => {
        impl<$($lt,)? T: DeviceRepr> $ty<$($lt,)? T> {
            /// Number of elements.
            #[inline]
            pub fn len(&self) -> usize {
                self.mem.len()
            }

            /// True when it holds no element.
            #[inline]
            pub fn is_empty(&self) -> bool {
                self.mem.len() == 0
            }

            /// The context it was page-locked in.
            #[inline]
            pub fn context(&self) -> &$crate::context::Context {
                self.mem.context()
            }

            /// The host address of the first element.
            #[inline]
            pub fn as_ptr(&self) -> *const T {
                self.mem.as_ptr()
            }

            /// The device address of the memory (`cuMemHostGetDevicePointer`, PyCUDA's
            /// `get_device_pointer`): page-lock it with the `DEVICEMAP` flag (on systems
            /// with unified addressing all page-locked memory is mapped).
            pub fn device_pointer(&self) -> $crate::error::Result<rucuda_driver_sys::CUdeviceptr> {
                self.mem.device_pointer()
            }

            /// Waits for all queued work that uses this memory (copies, kernels through
            /// its mapped views).
            pub fn synchronize(&self) -> $crate::error::Result<()> {
                self.mem.wait($crate::memory::tracking::Access::Write)
            }

            /// The elements, after waiting for queued work that writes them.
            pub fn as_slice(&self) -> $crate::error::Result<&[T]> {
                self.mem.as_slice()
            }

            /// The elements, writable, after waiting for all queued work that uses them.
            pub fn as_mut_slice(&mut self) -> $crate::error::Result<&mut [T]> {
                self.mem.as_mut_slice()
            }
        }

        impl<$($lt,)? T: DeviceRepr> std::ops::Deref for $ty<$($lt,)? T> {
            type Target = [T];
            /// Waits for queued work that writes the memory first (the slice is empty where
            /// the wait fails: the error is queued on the context; `as_slice` returns it).
            fn deref(&self) -> &[T] {
                self.mem.deref_slice()
            }
        }

        impl<$($lt,)? T: DeviceRepr> std::ops::DerefMut for $ty<$($lt,)? T> {
            /// Waits for all queued work that uses the memory first (empty where the wait
            /// fails, as for `Deref`).
            fn deref_mut(&mut self) -> &mut [T] {
                self.mem.deref_slice_mut()
            }
        }
    };
}
pub(crate) use page_locked_api;

/// The methods that lend page-locked memory to queued work (device views, the range async
/// copies use), for a type whose field `mem` is its [`PageLocked`] memory. Only for kinds
/// that own their memory (`'static`): a registration borrowing a slice could be
/// `mem::forget`-ed while queued work still wrote, ending the borrow under the GPU.
macro_rules! page_locked_device_api {
    ($ty:ident $(<$lt:lifetime>)?) => {
        impl<T: DeviceRepr> $ty<$($lt,)? T> {
            /// The mapped memory as a read-only device view, for kernels that read it.
            /// Its uses go through this memory's log, which host access and the release
            /// wait on.
            pub fn device_view(&self) -> $crate::error::Result<$crate::memory::device_buffer::DeviceView<'_, T>> {
                let range = self.mem.mapped_range()?;
                // SAFETY: the mapping covers our `len` elements and lives as long as
                // `self`, which the view borrows (so the host cannot write meanwhile).
                Ok(unsafe { $crate::memory::device_buffer::DeviceView::from_range(range, self.len()) })
            }

            /// The mapped memory as a writable device view, for kernels that write it. The
            /// host sees their writes through `Deref`, which waits for them.
            pub fn device_view_mut(&mut self) -> $crate::error::Result<$crate::memory::device_buffer::DeviceViewMut<'_, T>> {
                let len = self.len();
                let range = self.mem.mapped_range()?;
                // SAFETY: as for `device_view`; the view borrows `self` mutably.
                Ok(unsafe { $crate::memory::device_buffer::DeviceViewMut::from_range(range, len) })
            }

            /// The host memory as a range for asynchronous copies: its "address" is the
            /// host address, and its log is this memory's, which host access and the
            /// release wait on.
            pub fn host_range(&self) -> $crate::memory::tracking::DeviceRange<'_> {
                self.mem.host_range()
            }

        }
    };
}
pub(crate) use page_locked_device_api;
