//! [`GpuArray`]: a device buffer shared by views, plus a [`Layout`] saying which of its
//! elements this array is and in what order.

mod create;
mod host_io;
#[cfg(feature = "ndarray")]
mod ndarray_io;
mod views;

use std::mem::ManuallyDrop;
use std::sync::Arc;

use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::{Context, DeviceBuffer, DevicePtr, Stream};

use crate::dtype::{DType, Element};
use crate::layout::Layout;

/// The allocation behind an array and its views, with the stream its work is ordered on.
///
/// `buffer` either owns the allocation (`owner` is `None`) or, for arrays that see another
/// array's memory as another element type (`reinterpret`, `real`, `imag`), is a
/// non-owning handle to that memory that is never dropped, while `owner` keeps the
/// allocation's real owner alive (and receives the uses recorded on other streams, so that
/// its free waits for them).
struct Storage<T: Element> {
    buffer: ManuallyDrop<DeviceBuffer<T::Storage>>,
    owner: Option<Arc<dyn DevicePtr + Send + Sync>>,
    stream: Stream,
}

/// A storage as the device memory it stands for: recording a use reaches the buffer that
/// really frees the memory (the owner's, for aliasing storages).
impl<T: Element> DevicePtr for Storage<T> {
    fn device_ptr(&self) -> CUdeviceptr {
        self.buffer.device_ptr()
    }

    fn byte_len(&self) -> usize {
        self.buffer.byte_len()
    }

    fn record_use(&self, stream: &Stream) -> rucuda_driver::Result<()> {
        match &self.owner {
            None => self.buffer.record_use(stream),
            Some(owner) => owner.record_use(stream),
        }
    }
}

impl<T: Element> Drop for Storage<T> {
    fn drop(&mut self) {
        if self.owner.is_none() {
            // SAFETY: an owning storage drops its buffer exactly once, here; aliasing
            // storages never drop theirs (the owner frees the memory).
            unsafe { ManuallyDrop::drop(&mut self.buffer) };
        }
    }
}

/// An n-dimensional array in device memory (PyCUDA's `GPUArray`).
///
/// Views (slices, transposes, reshapes, broadcasts) share the buffer: writes through one
/// are seen by all, as in NumPy. Work on an array (copies, kernels) is ordered on its
/// *home stream*, the stream it was created on; host copies wait for it. Element counts
/// and offsets are 64-bit everywhere, so arrays of more than 2^31 elements work.
///
/// ```no_run
/// use rucuda_array::{GpuArray, SliceArg};
/// use rucuda_driver::{Device, Stream};
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::null(&ctx);
/// let host: Vec<f32> = (0..3).flat_map(|r| (0..4).map(move |c| (10 * r + c) as f32)).collect();
/// let a = GpuArray::from_shape_slice(&stream, &[3, 4], &host)?;
/// let col = a.slice(&[SliceArg::All, SliceArg::index(1)])?;
/// assert_eq!(col.to_vec()?, vec![1.0, 11.0, 21.0]);
/// assert_eq!(a.transpose().to_vec()?[..3], [0.0, 10.0, 20.0]);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub struct GpuArray<T: Element> {
    storage: Arc<Storage<T>>,
    layout: Layout,
}

impl<T: Element> std::fmt::Debug for GpuArray<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuArray")
            .field("dtype", &T::DTYPE)
            .field("shape", &self.layout.shape())
            .field("strides", &self.layout.strides())
            .field("offset", &self.layout.offset())
            .field("buffer", &self.storage.buffer)
            .finish()
    }
}

impl<T: Element> GpuArray<T> {
    pub(crate) fn from_buffer(
        buffer: DeviceBuffer<T::Storage>,
        stream: &Stream,
        layout: Layout,
    ) -> Self {
        GpuArray {
            storage: Arc::new(Storage {
                buffer: ManuallyDrop::new(buffer),
                owner: None,
                stream: stream.clone(),
            }),
            layout,
        }
    }

    /// An array of element type `T` over the memory of `other`'s buffer (seen as
    /// `buffer_len` elements of `T`), with `layout` in elements of `T`, keeping `other`'s
    /// allocation alive. Used by `reinterpret`, `real` and `imag`.
    ///
    /// # Safety
    /// `buffer_len * size_of::<T::Storage>()` must not exceed the byte size of `other`'s
    /// buffer, its address must be aligned for `T::Storage`, every bit pattern of those
    /// bytes must be a valid `T::Storage` (true for the plain storage types), and
    /// `layout` must lie inside `0..buffer_len`.
    pub(crate) unsafe fn alias_of<U: Element>(
        other: &GpuArray<U>,
        buffer_len: usize,
        layout: Layout,
    ) -> Self {
        let base = other.storage.buffer.device_ptr();
        // SAFETY: the caller vouches for size, alignment and contents; the handle is
        // wrapped in ManuallyDrop inside an aliasing storage, so it never frees the
        // memory, and `owner` keeps the real owner (and its allocation) alive.
        let buffer = unsafe { DeviceBuffer::from_raw(other.context(), base, buffer_len) };
        let owner: Arc<dyn DevicePtr + Send + Sync> = Arc::clone(&other.storage) as _;
        GpuArray {
            storage: Arc::new(Storage {
                buffer: ManuallyDrop::new(buffer),
                owner: Some(owner),
                stream: other.stream().clone(),
            }),
            layout,
        }
    }

    /// A view of the same buffer with another layout (checked by the caller).
    pub(crate) fn with_layout(&self, layout: Layout) -> Self {
        GpuArray {
            storage: Arc::clone(&self.storage),
            layout,
        }
    }

    /// Another handle to the same elements (a view of the whole array).
    pub fn view(&self) -> Self {
        self.with_layout(self.layout.clone())
    }

    /// The layout: shape, strides and offset in elements.
    #[inline]
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The lengths of the axes.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        self.layout.shape()
    }

    /// The strides of the axes, in elements (NumPy's strides divided by the item size).
    #[inline]
    pub fn strides(&self) -> &[isize] {
        self.layout.strides()
    }

    /// Number of dimensions.
    #[inline]
    pub fn ndim(&self) -> usize {
        self.layout.ndim()
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.layout.len()
    }

    /// True when it has no element.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.layout.is_empty()
    }

    /// The element type.
    #[inline]
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }

    /// Bytes of its elements (`len * item size`; a view counts only its own elements).
    pub fn nbytes(&self) -> usize {
        self.len() * T::DTYPE.size_bytes()
    }

    /// Row-major contiguous.
    pub fn is_c_contiguous(&self) -> bool {
        self.layout.is_c_contiguous()
    }

    /// Column-major contiguous.
    pub fn is_f_contiguous(&self) -> bool {
        self.layout.is_f_contiguous()
    }

    /// The stream its work is ordered on.
    pub fn stream(&self) -> &Stream {
        &self.storage.stream
    }

    /// Its context.
    pub fn context(&self) -> &Context {
        self.storage.buffer.context()
    }

    /// The whole buffer behind this array and its views (elements in their storage type).
    ///
    /// For an array that sees another array's memory as another type (`reinterpret`,
    /// `real`, `imag`) this is a handle that does not own the memory: record uses on
    /// other streams with [`GpuArray::record_use`], which reaches the owner.
    pub fn buffer(&self) -> &DeviceBuffer<T::Storage> {
        &self.storage.buffer
    }

    /// Notes that work just enqueued on `stream` uses this array's memory, so that its
    /// stream-ordered free (on the home stream of the array that owns the allocation)
    /// waits for that work (see `DeviceBuffer::record_use`). rucuda-array's kernels do
    /// this for their array arguments.
    pub fn record_use(&self, stream: &Stream) -> crate::Result<()> {
        Ok(self.storage.record_use(stream)?)
    }

    /// The memory behind this array as a `DevicePtr` whose `record_use` reaches the
    /// allocation's owner (for kernels that take arrays type-erased).
    pub(crate) fn use_recorder(&self) -> &dyn DevicePtr {
        &*self.storage
    }

    /// True when both arrays are views of one buffer (also across `reinterpret`, `real`
    /// and `imag`, which see one allocation as another element type).
    pub fn shares_buffer_with<U: Element>(&self, other: &GpuArray<U>) -> bool {
        let (a, b) = (&self.storage.buffer, &other.storage.buffer);
        let bytes = |p: u64, len: usize, size: usize| (p, p + (len * size) as u64);
        let (a0, a1) = bytes(a.device_ptr(), a.len(), T::DTYPE.size_bytes());
        let (b0, b1) = bytes(b.device_ptr(), b.len(), U::DTYPE.size_bytes());
        std::ptr::eq(
            Arc::as_ptr(&self.storage).cast::<u8>(),
            Arc::as_ptr(&other.storage).cast::<u8>(),
        ) || (a0 < b1 && b0 < a1)
    }

    /// The device address of the element at index 0 on every axis (what a kernel's
    /// pointer argument receives; elements at negative strides lie below it).
    pub fn device_ptr(&self) -> CUdeviceptr {
        self.storage.buffer.device_ptr() + (self.layout.offset() * T::DTYPE.size_bytes()) as u64
    }

    /// The device address of buffer element `k`.
    pub(crate) fn element_ptr(&self, k: usize) -> CUdeviceptr {
        self.storage.buffer.device_ptr() + (k * T::DTYPE.size_bytes()) as u64
    }
}
