//! [`GpuArray`]: a device buffer shared by views, plus a [`Layout`] saying which of its
//! elements this array is and in what order.

mod create;
mod host_io;
mod views;

use std::sync::Arc;

use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::{Context, DeviceBuffer, DevicePtr, Stream};

use crate::dtype::{DType, Element};
use crate::layout::Layout;

/// The allocation behind an array and its views, with the stream its work is ordered on.
struct Storage<T: Element> {
    buffer: DeviceBuffer<T::Storage>,
    stream: Stream,
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
/// let host = ndarray::Array2::from_shape_fn((3, 4), |(r, c)| (10 * r + c) as f32);
/// let a = GpuArray::from_ndarray(&stream, &host)?;
/// let col = a.slice(&[SliceArg::All, SliceArg::index(1)])?;
/// assert_eq!(col.to_vec()?, vec![1.0, 11.0, 21.0]);
/// assert_eq!(a.transpose().to_ndarray()?, host.t().into_dyn());
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
    fn from_buffer(buffer: DeviceBuffer<T::Storage>, stream: &Stream, layout: Layout) -> Self {
        GpuArray {
            storage: Arc::new(Storage {
                buffer,
                stream: stream.clone(),
            }),
            layout,
        }
    }

    /// A view of the same buffer with another layout (checked by the caller).
    fn with_layout(&self, layout: Layout) -> Self {
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
    pub fn buffer(&self) -> &DeviceBuffer<T::Storage> {
        &self.storage.buffer
    }

    /// True when both arrays are views of one buffer.
    pub fn shares_buffer_with<U: Element>(&self, other: &GpuArray<U>) -> bool {
        std::ptr::eq(
            Arc::as_ptr(&self.storage).cast::<u8>(),
            Arc::as_ptr(&other.storage).cast::<u8>(),
        )
    }

    /// The device address of the element at index 0 on every axis (what a kernel's
    /// pointer argument receives; elements at negative strides lie below it).
    pub fn device_ptr(&self) -> CUdeviceptr {
        self.storage.buffer.device_ptr() + (self.layout.offset() * T::DTYPE.size_bytes()) as u64
    }

    /// The device address of buffer element `k`.
    fn element_ptr(&self, k: usize) -> CUdeviceptr {
        self.storage.buffer.device_ptr() + (k * T::DTYPE.size_bytes()) as u64
    }
}
