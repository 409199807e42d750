//! [`GpuArray`]: a device buffer shared by views, plus a [`Layout`] saying which of its
//! elements this array is and in what order.

mod create;
mod foreign;
mod host_io;
#[cfg(feature = "ndarray")]
mod ndarray_io;
mod order;
mod view_dtype;
mod views;

use std::sync::Arc;

use rucuda_driver::{Access, Context, DeviceBuffer, DevicePtr, DeviceRange, Stream};

use crate::dtype::{DType, Element};
use crate::layout::Layout;
use crate::memory::ArrayMemory;

/// The allocation behind an array and its views, with the stream its work is ordered on.
///
/// `buffer` either owns the allocation (`owner` is `None`) or, for arrays that see another
/// array's memory as another element type (`reinterpret`, `real`, `imag`), is a
/// non-owning alias of that memory sharing its use log
/// ([`DeviceBuffer::alias_of`]), while `owner` keeps the allocation's real owner alive.
struct Storage<T: Element> {
    buffer: DeviceBuffer<T::Storage>,
    /// Keeps the real owner of an aliased allocation alive (never read).
    _owner: Option<Arc<dyn Send + Sync>>,
    stream: Stream,
}

impl<T: Element> DevicePtr for Storage<T> {
    fn device_range(&self) -> DeviceRange<'_> {
        self.buffer.device_range()
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
                buffer,
                _owner: None,
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
        // SAFETY: the caller vouches for size, alignment and contents; the alias never
        // frees the memory and shares the owner's use log; `owner` keeps the real owner
        // (and its allocation) alive as long as the alias.
        let buffer = unsafe { DeviceBuffer::alias_of(&other.storage.buffer, buffer_len) };
        let owner: Arc<dyn Send + Sync> = Arc::clone(&other.storage) as _;
        GpuArray {
            storage: Arc::new(Storage {
                buffer,
                _owner: Some(owner),
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
    /// For an array that sees another array's memory as another type (`reinterpret`,
    /// `real`, `imag`) it is an alias sharing the owner's use log, so work queued through
    /// either is ordered against the other and the owner's free waits for both.
    pub fn buffer(&self) -> &DeviceBuffer<T::Storage> {
        self.keep_for_capture();
        &self.storage.buffer
    }

    /// Lets a graph this thread is capturing (`crate::graph`) use this array's memory:
    /// the graph keeps the allocation alive. Free when nothing captures; called wherever
    /// the array's memory is handed out.
    #[inline]
    fn keep_for_capture(&self) {
        rucuda_driver::keep_alive_for_capture(&self.storage);
    }

    /// The address of element 0 for your own work about to be queued on `stream` (a
    /// kernel launched with it as a pointer argument), which uses the array as `access`
    /// says: `stream` waits for conflicting earlier work on other streams, and the use is
    /// recorded so that the array's free, host reads and later conflicting work wait for
    /// it. Elements at negative strides lie below this address.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_driver::Access;
    /// let a = rucuda_array::GpuArray::<f32>::zeros(&stream, &[256])?;
    /// let used = a.use_on(&stream, Access::Write)?;
    /// // ... launch a kernel on `stream` with `rucuda_driver::DevicePointerArg(used.ptr())`,
    /// // then let `used` go ...
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn use_on(
        &self,
        stream: &Stream,
        access: Access,
    ) -> crate::Result<rucuda_driver::InUse<'_>> {
        self.memory().use_on(stream, access)
    }

    /// The memory of this array for the operations: the buffer and element 0's offset.
    pub(crate) fn memory(&self) -> ArrayMemory<'_> {
        self.keep_for_capture();
        ArrayMemory {
            range: self.storage.buffer.device_range(),
            offset: self.layout.offset() * T::DTYPE.size_bytes(),
        }
    }

    /// The contiguous elements `start..start + count` of the buffer (not of the layout).
    pub(crate) fn buffer_elements(
        &self,
        start: usize,
        count: usize,
    ) -> crate::Result<DeviceRange<'_>> {
        self.keep_for_capture();
        let size = T::DTYPE.size_bytes();
        Ok(self
            .storage
            .buffer
            .device_range()
            .sub(start * size, count * size)?)
    }

    /// True when both arrays are views of one buffer (also across `reinterpret`, `real`
    /// and `imag`, which see one allocation as another element type).
    pub fn shares_buffer_with<U: Element>(&self, other: &GpuArray<U>) -> bool {
        let (a, b) = (
            self.storage.buffer.device_range(),
            other.storage.buffer.device_range(),
        );
        a.same_log(&b) || a.overlaps(&b)
    }
}
