//! The array operators' fast path, native: `a op b` between two `GPUArray`s of one
//! fast-path signature (`pycuda._ops`), once the Python side has made the kernel and
//! registered it here. One native call then reads the operands' signatures, allocator and
//! addresses, allocates the result, launches, and makes the result array from the
//! signature's attributes: about half the host time the same steps take in Python.
//!
//! Whatever this table does not know (a first use, another allocator, another context,
//! addresses that are not `DeviceAllocation`s) answers None, and the Python path runs
//! (and registers what it learns).

use std::collections::HashMap;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rucuda_driver::LaunchConfig;

use crate::memory::{mem_alloc_async_in, DeviceAllocation};
use crate::module::Function;

/// Entries kept before the table starts over (each holds its signature and kernel alive).
const MOST_ENTRIES: usize = 1 << 14;

/// What one `(context, signature, operator)` launches.
struct Entry {
    /// The signature and the operator, kept alive so that their addresses (the key) are
    /// never reused while the entry exists.
    _sig: Py<PyAny>,
    _op: Py<PyAny>,
    function: Py<Function>,
    /// The context whose handle is in the key: the result's allocations go there
    /// without looking it up again.
    ctx: rucuda_driver::Context,
    /// The default allocator, which the operands' must be.
    allocator: Py<PyAny>,
    /// The result's attributes, all but `gpudata`.
    attributes: Py<PyDict>,
    elements: u64,
    nbytes: usize,
    blocks: u32,
}

/// The registered fast kernels by `(context handle, signature address, operator address)`.
#[pyclass(module = "rucuda._native")]
pub struct FastTable {
    entries: HashMap<(usize, usize, usize), Entry>,
    /// `object.__new__`, which makes each result (looked up once, not per result).
    new_object: Py<PyAny>,
}

#[pymethods]
impl FastTable {
    #[new]
    fn new(py: Python<'_>) -> PyResult<FastTable> {
        Ok(FastTable {
            entries: HashMap::new(),
            new_object: py
                .get_type::<PyAny>()
                .getattr(intern!(py, "__new__"))?
                .unbind(),
        })
    }

    /// Registers `function` (the kernel `z[i] = a[i] op b[i]` taking `(z, a, b, n)`) for
    /// arrays of signature `sig` (its `result` dict: the attributes of a result made by
    /// `allocator`) under `op` in the current context, launched with at most `most_blocks`
    /// blocks of 256 threads. False (nothing registered) when `function` is not a native
    /// kernel.
    fn register(
        &mut self,
        py: Python<'_>,
        sig: &Bound<'_, PyAny>,
        op: &Bound<'_, PyAny>,
        function: &Bound<'_, PyAny>,
        most_blocks: u32,
        allocator: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let Ok(function) = function.downcast::<Function>() else {
            return Ok(false);
        };
        let attributes = sig
            .getattr(intern!(py, "result"))?
            .downcast_into::<PyDict>()?;
        let elements: u64 = attributes
            .get_item(intern!(py, "size"))?
            .map_or(Ok(0), |v| v.extract())?;
        let nbytes: usize = attributes
            .get_item(intern!(py, "nbytes"))?
            .map_or(Ok(0), |v| v.extract())?;
        let blocks = u32::try_from(elements.div_ceil(256))
            .unwrap_or(u32::MAX)
            .clamp(1, most_blocks.max(1));
        let ctx = crate::context::current()?;
        if self.entries.len() >= MOST_ENTRIES {
            self.entries.clear();
        }
        self.entries.insert(
            (
                ctx.raw() as usize,
                sig.as_ptr() as usize,
                op.as_ptr() as usize,
            ),
            Entry {
                _sig: sig.clone().unbind(),
                _op: op.clone().unbind(),
                function: function.clone().unbind(),
                ctx,
                allocator: allocator.clone().unbind(),
                attributes: attributes.unbind(),
                elements,
                nbytes,
                blocks,
            },
        );
        Ok(true)
    }

    /// Forgets every entry (`pycuda.tools.clear_context_caches`).
    fn clear(&mut self) {
        self.entries.clear();
    }

    fn __len__(&self) -> usize {
        self.entries.len()
    }

    /// `a op b` when both operands carry the same registered signature, `a`'s allocator
    /// is the registered one and both addresses are `DeviceAllocation`s; else None.
    fn binary<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        op: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if self.entries.is_empty() {
            return Ok(None);
        }
        let sig = a.getattr(intern!(py, "_fast"))?;
        if !sig.is(&b.getattr(intern!(py, "_fast"))?) {
            return Ok(None);
        }
        // No current context (or no driver): the Python path says what is wrong.
        let Ok(ctx) = crate::context::current_context_handle() else {
            return Ok(None);
        };
        let Some(e) = self
            .entries
            .get(&(ctx, sig.as_ptr() as usize, op.as_ptr() as usize))
        else {
            return Ok(None);
        };
        if !a
            .getattr(intern!(py, "allocator"))?
            .is(e.allocator.bind(py))
        {
            return Ok(None);
        }
        let (x, y) = (
            a.getattr(intern!(py, "gpudata"))?,
            b.getattr(intern!(py, "gpudata"))?,
        );
        let (Ok(x), Ok(y)) = (
            x.downcast::<DeviceAllocation>(),
            y.downcast::<DeviceAllocation>(),
        ) else {
            return Ok(None);
        };
        let (x, y) = (x.borrow().address(), y.borrow().address());
        let z = mem_alloc_async_in(e.ctx.clone(), e.nbytes)?;
        let mut words = [z.address(), x, y, e.elements];
        let cfg = LaunchConfig {
            grid: (e.blocks, 1, 1),
            block: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the kernel was registered for this signature: it reads `elements`
        // elements at each operand (arrays of that signature, so at least that long) and
        // writes as many into `z`, just allocated with the signature's bytes (freed in
        // stream order if the launch fails).
        unsafe { e.function.get().launch_packed(&cfg, &mut words, 32) }?;
        let attributes = e.attributes.bind(py).copy()?;
        attributes.set_item(intern!(py, "gpudata"), Bound::new(py, z)?)?;
        let result = self.new_object.bind(py).call1((a.get_type(),))?;
        result.setattr(intern!(py, "__dict__"), attributes)?;
        Ok(Some(result))
    }
}
