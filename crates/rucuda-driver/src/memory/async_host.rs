//! [`PageLockedHost`]: the host memory an asynchronous copy may read or write —
//! page-locked memory whose uses go through its own log, held for as long as a queued
//! copy needs it: [`PinnedHostBuffer`]s and registered memory that owns its elements.

use crate::memory::pinned::PinnedHostBuffer;
use crate::memory::registered::RegisteredHostMemory;
use crate::memory::tracking::DeviceRange;
use crate::repr::DeviceRepr;

mod sealed {
    /// Only rucuda's page-locked kinds are [`PageLockedHost`](super::PageLockedHost):
    /// the copies trust what they say about their memory.
    pub trait Sealed {}
}

/// Page-locked host memory of `T` that [`memcpy_htod_async`](crate::memcpy_htod_async)
/// and [`memcpy_dtoh_async`](crate::memcpy_dtoh_async) queue copies from and into. Its
/// uses go through its own log: host access through `Deref` and giving the memory back
/// wait for the queued copies, so a copy never reads or writes memory the host is using
/// or that went back.
///
/// Implemented by [`PinnedHostBuffer`] (`cuMemHostAlloc`, PyCUDA's `pagelocked_empty`)
/// and by [`RegisteredHostMemory<'static, T>`](RegisteredHostMemory)
/// (`cuMemHostRegister`, PyCUDA's `register_host_memory`), which owns its elements
/// ([`RegisteredHostMemory::from_vec`]) or borrows them for `'static`. A registration
/// that borrows a shorter-lived slice cannot take asynchronous copies: forgetting it
/// (`std::mem::forget` is safe) would end the borrow while a copy still used the slice.
/// Copy such memory synchronously ([`memcpy_htod`](crate::memcpy_htod)) or register a
/// `Vec` you give back with [`RegisteredHostMemory::into_vec`].
///
/// The trait is sealed: other types cannot implement it.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
/// let host = RegisteredHostMemory::from_vec(&ctx, vec![1.5f32; 4096], HostRegisterFlags::empty())?;
/// let mut dev = DeviceBuffer::<f32>::uninit(&ctx, 4096)?;
/// memcpy_htod_async(&mut dev, &host, &stream)?;
/// let data = host.into_vec()?; // waits for the copy, unregisters
/// # Ok::<(), Error>(())
/// ```
///
/// A registration borrowing a local slice is refused at compile time:
///
/// ```compile_fail
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
/// let mut local = vec![0f32; 16];
/// let host = register_host_memory(&ctx, &mut local[..], HostRegisterFlags::empty())?;
/// let mut dev = DeviceBuffer::<f32>::uninit(&ctx, 16)?;
/// memcpy_htod_async(&mut dev, &host, &stream)?; // not 'static: no PageLockedHost
/// # Ok::<(), Error>(())
/// ```
pub trait PageLockedHost<T: DeviceRepr>: sealed::Sealed {
    /// The host memory as a range for queued copies: its "address" is the host address
    /// and its log the memory's own.
    fn copy_range(&self) -> DeviceRange<'_>;

    /// Number of elements.
    fn elements(&self) -> usize;
}

impl<T: DeviceRepr> sealed::Sealed for PinnedHostBuffer<T> {}

impl<T: DeviceRepr> PageLockedHost<T> for PinnedHostBuffer<T> {
    fn copy_range(&self) -> DeviceRange<'_> {
        self.host_range()
    }

    fn elements(&self) -> usize {
        self.len()
    }
}

impl<T: DeviceRepr> sealed::Sealed for RegisteredHostMemory<'static, T> {}

/// Only `'static` registrations: the elements stay valid whatever happens to this value
/// (an owned `Vec` is leaked rather than freed while still registered or in use, and a
/// `'static` borrow never ends), so a queued copy cannot outlive them.
impl<T: DeviceRepr> PageLockedHost<T> for RegisteredHostMemory<'static, T> {
    fn copy_range(&self) -> DeviceRange<'_> {
        self.host_range()
    }

    fn elements(&self) -> usize {
        self.len()
    }
}
