//! Asynchronous host transfers through page-locked staging (PyCUDA's `get_async` and
//! `set_async`): the copy is queued on a stream and a handle gives the data back (or
//! confirms the upload) once the stream reaches it.
//!
//! Views that are not row-major contiguous are gathered into (or scattered from) a
//! contiguous temporary on the device by the strided copy kernel, on the same stream.
//! Handles keep the staging buffer and any device temporary alive; dropping a handle
//! early waits for its copy.

use rucuda_driver::{Event, EventFlags, HostAllocFlags, PinnedHostBuffer, Stream};

use crate::convert::check_writable;
use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::ordering::{after_on, before_on};
use crate::GpuArray;

/// A device-to-host copy in flight, from [`GpuArray::get_async`].
///
/// Field order matters: the staging buffer is dropped (which waits for the copy) before
/// the device array that the copy reads.
#[must_use = "the data arrives through wait()"]
pub struct PendingGet<T: Element> {
    host: PinnedHostBuffer<T::Storage>,
    done: Event,
    shape: Vec<usize>,
    _source: GpuArray<T>,
}

impl<T: Element> std::fmt::Debug for PendingGet<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingGet")
            .field("dtype", &T::DTYPE)
            .field("shape", &self.shape)
            .finish()
    }
}

impl<T: Element> PendingGet<T> {
    /// True once the copy has finished (never blocks).
    pub fn is_ready(&self) -> Result<bool> {
        Ok(self.done.query()?)
    }

    /// Waits for the copy and returns the elements in row-major order.
    pub fn wait(self) -> Result<Vec<T>> {
        let stored = self.host.as_slice()?;
        Ok(stored.iter().map(|&s| T::from_storage(s)).collect())
    }

    /// Waits for the copy and returns an `ndarray` array of the device array's shape
    /// (feature `ndarray`).
    #[cfg(feature = "ndarray")]
    pub fn wait_ndarray(self) -> Result<ndarray::ArrayD<T>> {
        let shape = self.shape.clone();
        let v = self.wait()?;
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), v).map_err(|e| {
            ArrayError::InvalidArgument(format!("building the host array failed: {e}"))
        })
    }

    /// Waits for the copy and hands back the page-locked buffer holding the elements in
    /// their storage form (to reuse it with [`GpuArray::get_async_with`]).
    pub fn into_pinned(self) -> Result<PinnedHostBuffer<T::Storage>> {
        self.host.synchronize()?;
        Ok(self.host)
    }
}

/// A host-to-device copy in flight, from [`GpuArray::set_async`].
#[must_use = "wait() reports errors and returns the staging buffer"]
pub struct PendingSet<T: Element> {
    host: PinnedHostBuffer<T::Storage>,
    done: Event,
    _staged: Option<GpuArray<T>>,
}

impl<T: Element> std::fmt::Debug for PendingSet<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingSet")
            .field("dtype", &T::DTYPE)
            .field("len", &self.host.len())
            .finish()
    }
}

impl<T: Element> PendingSet<T> {
    /// True once the upload has finished (never blocks).
    pub fn is_ready(&self) -> Result<bool> {
        Ok(self.done.query()?)
    }

    /// Waits for the upload.
    pub fn wait(self) -> Result<()> {
        self.done.synchronize()?;
        Ok(())
    }

    /// Waits for the upload and hands back the page-locked staging buffer.
    pub fn into_pinned(self) -> Result<PinnedHostBuffer<T::Storage>> {
        self.done.synchronize()?;
        self.host.synchronize()?;
        Ok(self.host)
    }
}

impl<T: Element> GpuArray<T> {
    /// Queues a copy of the elements (row-major) to page-locked host memory on `stream`
    /// and returns at once; [`PendingGet::wait`] gives the data (PyCUDA's `get_async`).
    /// The copy waits for work queued on this array's home stream.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::<f32>::arange(&stream, 0.0, 4.0, 1.0)?;
    /// let pending = a.transpose().get_async(&stream)?;
    /// // ... other host work ...
    /// assert_eq!(pending.wait()?, vec![0.0, 1.0, 2.0, 3.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn get_async(&self, stream: &Stream) -> Result<PendingGet<T>> {
        let host = PinnedHostBuffer::<T::Storage>::empty(
            stream.context(),
            self.len(),
            HostAllocFlags::empty(),
        )?;
        self.get_async_with(stream, host)
    }

    /// [`GpuArray::get_async`] into a page-locked buffer of your own (of exactly `len`
    /// elements in storage form), e.g. one handed back by [`PendingGet::into_pinned`].
    pub fn get_async_with(
        &self,
        stream: &Stream,
        mut host: PinnedHostBuffer<T::Storage>,
    ) -> Result<PendingGet<T>> {
        if host.len() != self.len() {
            return Err(ArrayError::LengthMismatch {
                device: self.len(),
                host: host.len(),
            });
        }
        if self.context() != stream.context() {
            return Err(ArrayError::ContextMismatch);
        }
        let source = if self.is_c_contiguous() {
            before_on(stream, &[self.stream()])?;
            self.view()
        } else {
            let tmp = GpuArray::<T>::empty(stream, self.shape())?;
            tmp.copy_from(self)?;
            tmp
        };
        if !source.is_empty() {
            let src = source.memory().elements(source.nbytes())?;
            crate::device_copy::device_to_host_async(stream, &mut host, src)?;
        }
        let done = Event::new(stream.context(), EventFlags::DISABLE_TIMING)?;
        done.record(stream)?;
        Ok(PendingGet {
            host,
            done,
            shape: self.shape().to_vec(),
            _source: source,
        })
    }

    /// Queues a copy of `data` (row-major, through a page-locked staging buffer) into
    /// this array or view on `stream` and returns at once (PyCUDA's `set_async`). Work
    /// queued later on this array's home stream sees the new values.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::<i32>::zeros(&stream, &[3])?;
    /// a.set_async(&stream, &[1, 2, 3])?.wait()?;
    /// assert_eq!(a.to_vec()?, vec![1, 2, 3]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn set_async(&self, stream: &Stream, data: &[T]) -> Result<PendingSet<T>> {
        if data.len() != self.len() {
            return Err(ArrayError::LengthMismatch {
                device: self.len(),
                host: data.len(),
            });
        }
        let host = PinnedHostBuffer::from_slice(
            stream.context(),
            &T::slice_to_storage(data),
            HostAllocFlags::empty(),
        )?;
        self.set_async_from(stream, host)
    }

    /// [`GpuArray::set_async`] from a page-locked buffer of your own holding the elements
    /// in storage form (no host-side copy); [`PendingSet::into_pinned`] returns it.
    pub fn set_async_from(
        &self,
        stream: &Stream,
        host: PinnedHostBuffer<T::Storage>,
    ) -> Result<PendingSet<T>> {
        if host.len() != self.len() {
            return Err(ArrayError::LengthMismatch {
                device: self.len(),
                host: host.len(),
            });
        }
        if self.context() != stream.context() {
            return Err(ArrayError::ContextMismatch);
        }
        check_writable(self.layout())?;
        let mut staged = None;
        if !self.is_empty() {
            if self.is_c_contiguous() {
                before_on(stream, &[self.stream()])?;
                let dst = self.memory().elements(self.nbytes())?;
                crate::device_copy::host_to_device_async(stream, dst, &host)?;
                after_on(stream, &[self.stream()])?;
            } else {
                let tmp = GpuArray::<T>::empty(stream, self.shape())?;
                let dst = tmp.memory().elements(tmp.nbytes())?;
                crate::device_copy::host_to_device_async(stream, dst, &host)?;
                self.copy_from(&tmp)?;
                staged = Some(tmp);
            }
        }
        let done = Event::new(stream.context(), EventFlags::DISABLE_TIMING)?;
        match &staged {
            // The scatter ran on the home stream: done when it is.
            Some(_) => done.record(self.stream())?,
            None => done.record(stream)?,
        }
        Ok(PendingSet {
            host,
            done,
            _staged: staged,
        })
    }
}
