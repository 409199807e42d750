//! `Stream` and `Event`.

use pyo3::prelude::*;
use rucuda_driver::{EventFlags, StreamFlags};

use crate::context::{current, InContext};
use crate::errors::{raise, OrRaise};

/// A CUDA stream (PyCUDA's `Stream`); it holds its context.
#[pyclass(module = "rucuda._native", frozen)]
pub struct Stream {
    pub(crate) inner: InContext<rucuda_driver::Stream>,
}

#[pymethods]
impl Stream {
    #[new]
    #[pyo3(signature = (flags = 0))]
    fn new(flags: u32) -> PyResult<Stream> {
        let flags = StreamFlags::from_bits(flags)
            .ok_or_else(|| raise("LogicError", format!("Stream: unknown flags {flags:#x}")))?;
        let ctx = current()?;
        let inner = rucuda_driver::Stream::new(&ctx, flags).or_raise()?;
        Ok(Stream {
            inner: InContext::new(ctx, inner),
        })
    }

    /// Waits for the stream's work (GIL released).
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.inner.synchronize()).or_raise()
    }

    fn is_done(&self) -> PyResult<bool> {
        self.inner.is_done().or_raise()
    }

    fn wait_for_event(&self, event: &Event) -> PyResult<()> {
        self.inner.wait_event(&event.inner).or_raise()
    }

    #[getter]
    fn handle(&self) -> usize {
        self.inner.raw() as usize
    }

    fn __int__(&self) -> usize {
        self.inner.raw() as usize
    }
}

/// A CUDA event (PyCUDA's `Event`).
#[pyclass(module = "rucuda._native", frozen)]
pub struct Event {
    pub(crate) inner: InContext<rucuda_driver::Event>,
}

#[pymethods]
impl Event {
    #[new]
    #[pyo3(signature = (flags = 0))]
    fn new(flags: u32) -> PyResult<Event> {
        let flags = EventFlags::from_bits(flags)
            .ok_or_else(|| raise("LogicError", format!("Event: unknown flags {flags:#x}")))?;
        let ctx = current()?;
        let inner = rucuda_driver::Event::new(&ctx, flags).or_raise()?;
        Ok(Event {
            inner: InContext::new(ctx, inner),
        })
    }

    /// Records the event on `stream` (the null stream when None); returns self.
    #[pyo3(signature = (stream = None))]
    fn record<'py>(slf: Bound<'py, Self>, stream: Option<&Stream>) -> PyResult<Bound<'py, Self>> {
        {
            let me = slf.get();
            match stream {
                Some(s) => me.inner.record(&s.inner),
                None => me.inner.record(&rucuda_driver::Stream::null(&current()?)),
            }
            .or_raise()?;
        }
        Ok(slf)
    }

    /// Waits for the event (GIL released); returns self.
    fn synchronize<'py>(slf: Bound<'py, Self>, py: Python<'py>) -> PyResult<Bound<'py, Self>> {
        {
            let me = slf.get();
            py.allow_threads(|| me.inner.synchronize()).or_raise()?;
        }
        Ok(slf)
    }

    fn query(&self) -> PyResult<bool> {
        self.inner.query().or_raise()
    }

    /// Milliseconds since `earlier`.
    fn time_since(&self, earlier: &Event) -> PyResult<f32> {
        self.inner.time_since(&earlier.inner).or_raise()
    }

    /// Milliseconds until `later`.
    fn time_till(&self, later: &Event) -> PyResult<f32> {
        self.inner.time_till(&later.inner).or_raise()
    }

    #[getter]
    fn handle(&self) -> usize {
        self.inner.raw() as usize
    }
}
