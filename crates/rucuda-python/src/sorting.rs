//! The sort family for the Python face: `pycuda.gpuarray.sort`, `argsort`, `topk`,
//! `unique`, `searchsorted`, `histogram` and `bincount`, by rucuda-array's kernels.
//!
//! A Python array comes in as `(address, shape, byte strides, dtype char, the array)`
//! and is viewed as a `GpuArray` on the legacy default stream, the stream PyCUDA's
//! arrays work on, so the work is ordered after what Python queued before. The view
//! keeps the Python array alive until the work that uses it has run. Each result goes
//! back as `(ArrayHolder, shape, byte strides, dtype char)`, and Python wraps it in a
//! `GPUArray` whose `gpudata` is the holder.

use half::f16;
use pyo3::exceptions::{PyNotImplementedError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use rucuda_array::sort::{Side, SortOrder};
use rucuda_array::{ArrayError, Element, GpuArray};
use rucuda_driver::{Access, Stream};

use crate::context::current;
use crate::errors::{class_of, raise};

/// A Python array as the native functions take it: its address, shape, strides in
/// bytes, NumPy dtype character, and the array itself (kept alive while work uses it).
#[derive(FromPyObject)]
pub struct ArrayArg(u64, Vec<usize>, Vec<isize>, String, Py<PyAny>);

/// A result for Python: the holder (its `gpudata`), shape, strides in bytes and NumPy
/// dtype character.
type Out = (ArrayHolder, Vec<usize>, Vec<isize>, &'static str);

/// rucuda-array's error as the Python exception PyCUDA users expect.
fn array_err(e: ArrayError) -> PyErr {
    match e {
        ArrayError::Driver(d) => raise(class_of(d.kind()), d.to_string()),
        ArrayError::UnsupportedType { .. } => PyTypeError::new_err(e.to_string()),
        ArrayError::InvalidArgument(_)
        | ArrayError::Layout(_)
        | ArrayError::LengthMismatch { .. }
        | ArrayError::IndexOutOfBounds { .. } => PyValueError::new_err(e.to_string()),
        other => raise("Error", other.to_string()),
    }
}

/// Runs `$body` with `$T` the Rust type of NumPy's dtype character `$char`; any other
/// character is a `TypeError` (or `$fallback`, with the character as `$other`).
macro_rules! by_dtype {
    ($char:expr, $T:ident => $body:expr) => {
        by_dtype!($char, $T => $body, other => Err(PyTypeError::new_err(unsupported_dtype(other))))
    };
    ($char:expr, $T:ident => $body:expr, $other:ident => $fallback:expr) => {
        by_dtype!(@arms $char, $T, $body, $other, $fallback;
            "?" => bool, "b" => i8, "B" => u8, "h" => i16, "H" => u16, "i" => i32,
            "I" => u32, "l" | "q" => i64, "L" | "Q" => u64, "e" => f16, "f" => f32,
            "d" => f64)
    };
    (@arms $char:expr, $T:ident, $body:expr, $other:ident, $fallback:expr;
        $($($c:literal)|+ => $ty:ty),+) => {
        match $char {
            $($($c)|+ => {
                type $T = $ty;
                $body
            })+
            $other => $fallback,
        }
    };
}

/// The message for a dtype the sort family does not take.
fn unsupported_dtype(char: &str) -> String {
    format!("the sort family takes booleans, integers and float16/32/64 arrays, not dtype {char:?}")
}

/// NumPy's dtype character of `T` (one of [`by_dtype`]'s).
fn dtype_char<T: Element>() -> &'static str {
    use rucuda_array::DType as D;
    match T::DTYPE {
        D::Bool => "?",
        D::I8 => "b",
        D::U8 => "B",
        D::I16 => "h",
        D::U16 => "H",
        D::I32 => "i",
        D::U32 => "I",
        D::I64 => "l",
        D::U64 => "L",
        D::F16 => "e",
        D::F32 => "f",
        D::F64 => "d",
        _ => "V",
    }
}

/// The legacy default stream of the current context.
fn legacy() -> PyResult<Stream> {
    Ok(Stream::null(&current()?))
}

/// `a` viewed as a `GpuArray<T>` on `stream`.
fn view<T: Element>(stream: &Stream, a: ArrayArg) -> PyResult<GpuArray<T>> {
    let ArrayArg(ptr, shape, byte_strides, _char, keeper) = a;
    let size = std::mem::size_of::<T>() as isize;
    let strides: Vec<isize> = byte_strides
        .iter()
        .map(|&s| {
            if s % size == 0 {
                Ok(s / size)
            } else {
                Err(PyValueError::new_err(format!(
                    "strides {byte_strides:?} are not multiples of the item size {size}"
                )))
            }
        })
        .collect::<PyResult<_>>()?;
    // SAFETY: PyCUDA's contract: `ptr` with this shape and these strides is the memory of
    // a GPUArray of the current context holding `T`s (the dtype character says which),
    // kept alive by `keeper` until the view and the work queued with it are gone; the
    // work is queued on the legacy stream after everything Python queued there.
    unsafe { GpuArray::<T>::from_device_ptr(stream, ptr, &shape, Some(&strides), keeper) }
        .map_err(array_err)
}

/// A result array for Python.
fn out<T: Element>(a: GpuArray<T>) -> PyResult<Out> {
    let size = std::mem::size_of::<T>() as isize;
    let shape = a.shape().to_vec();
    let strides = a.strides().iter().map(|&s| s * size).collect();
    Ok((ArrayHolder::new(a)?, shape, strides, dtype_char::<T>()))
}

/// What an [`ArrayHolder`] keeps: a rucuda-array result of any element type.
trait Held: Send + Sync {
    /// Records that the work queued on the legacy stream so far may use the memory:
    /// the free that follows then waits for it.
    fn used_by_legacy_work(&self);
}

impl<T: Element> Held for GpuArray<T> {
    fn used_by_legacy_work(&self) {
        // Nothing to report to from a destructor; the context being gone took the
        // memory with it.
        let _ = self.use_on(&Stream::null(self.context()), Access::Write);
    }
}

/// The memory of a sort-family result (a `GPUArray`'s `gpudata`): `int()` gives the
/// address of its element 0. Work Python queues with the address goes to the legacy
/// stream (or a blocking stream, which the legacy stream waits for), as PyCUDA's
/// contract has it; when the holder goes, its free waits for the legacy stream's work.
#[pyclass(module = "rucuda._native", frozen)]
pub struct ArrayHolder {
    array: Box<dyn Held>,
    address: u64,
}

impl ArrayHolder {
    fn new<T: Element>(a: GpuArray<T>) -> PyResult<ArrayHolder> {
        let address = {
            let used = a
                .use_on(&Stream::null(a.context()), Access::Write)
                .map_err(array_err)?;
            used.ptr()
        };
        Ok(ArrayHolder {
            array: Box::new(a),
            address,
        })
    }
}

impl Drop for ArrayHolder {
    fn drop(&mut self) {
        self.array.used_by_legacy_work();
    }
}

#[pymethods]
impl ArrayHolder {
    fn __int__(&self) -> u64 {
        self.address
    }

    fn __index__(&self) -> u64 {
        self.address
    }
}

fn order_of(descending: bool) -> SortOrder {
    if descending {
        SortOrder::Descending
    } else {
        SortOrder::Ascending
    }
}

/// `sort(a, axis, descending, positions)`: the sorted copy along `axis` (stable, NaNs
/// last), or with `positions` the `int64` positions that sort it (NumPy's `argsort`).
#[pyfunction]
pub fn array_sort(
    py: Python<'_>,
    a: ArrayArg,
    axis: isize,
    descending: bool,
    positions: bool,
) -> PyResult<Out> {
    let stream = legacy()?;
    let char = a.3.clone();
    by_dtype!(char.as_str(), T => {
        let a = view::<T>(&stream, a)?;
        if positions {
            let p = py
                .allow_threads(|| a.argsort_axis(axis, order_of(descending)))
                .map_err(array_err)?;
            out(p)
        } else {
            let s = py
                .allow_threads(|| a.sort_axis(axis, order_of(descending)))
                .map_err(array_err)?;
            out(s)
        }
    })
}

/// `topk(a, k, axis, largest)`: the `k` largest (or smallest) elements along `axis`,
/// sorted, and their `int64` positions.
#[pyfunction]
pub fn array_topk(
    py: Python<'_>,
    a: ArrayArg,
    k: usize,
    axis: isize,
    largest: bool,
) -> PyResult<(Out, Out)> {
    let stream = legacy()?;
    let char = a.3.clone();
    by_dtype!(char.as_str(), T => {
        let a = view::<T>(&stream, a)?;
        let (v, i) = py
            .allow_threads(|| a.topk_axis(k, axis, largest))
            .map_err(array_err)?;
        Ok((out(v)?, out(i)?))
    })
}

/// `unique(a, all)`: the distinct values of the flattened array; with `all`, also the
/// first indices, the inverse and the counts (NumPy's `return_*`).
#[pyfunction]
pub fn array_unique(py: Python<'_>, a: ArrayArg, all: bool) -> PyResult<Vec<Out>> {
    let stream = legacy()?;
    let char = a.3.clone();
    by_dtype!(char.as_str(), T => {
        let a = view::<T>(&stream, a)?;
        if all {
            let u = py.allow_threads(|| a.unique_all()).map_err(array_err)?;
            Ok(vec![out(u.values)?, out(u.first_indices)?, out(u.inverse)?, out(u.counts)?])
        } else {
            Ok(vec![out(py.allow_threads(|| a.unique()).map_err(array_err)?)?])
        }
    })
}

/// `searchsorted(a, v, right)`: where each of `v` (of `a`'s dtype) goes in the sorted
/// 1-D `a` (`int64`, of `v`'s shape).
#[pyfunction]
pub fn array_searchsorted(py: Python<'_>, a: ArrayArg, v: ArrayArg, right: bool) -> PyResult<Out> {
    if a.3 != v.3 {
        return Err(PyTypeError::new_err(format!(
            "searchsorted: the queries' dtype {:?} is not the array's {:?}",
            v.3, a.3
        )));
    }
    let stream = legacy()?;
    let char = a.3.clone();
    let side = if right { Side::Right } else { Side::Left };
    by_dtype!(char.as_str(), T => {
        let a = view::<T>(&stream, a)?;
        let v = view::<T>(&stream, v)?;
        out(py.allow_threads(|| a.searchsorted(&v, side)).map_err(array_err)?)
    })
}

/// `histogram(a, bins, range, edges)`: the `int64` counts of the flattened array, in
/// `bins` even bins over `range` (None: the data's minimum and maximum) or between the
/// increasing `edges` when given; and the bins' edges.
#[pyfunction]
#[pyo3(signature = (a, bins, range = None, edges = None))]
pub fn array_histogram(
    py: Python<'_>,
    a: ArrayArg,
    bins: usize,
    range: Option<(f64, f64)>,
    edges: Option<Vec<f64>>,
) -> PyResult<(Out, Vec<f64>)> {
    let stream = legacy()?;
    let char = a.3.clone();
    by_dtype!(char.as_str(), T => {
        let a = view::<T>(&stream, a)?;
        match edges {
            Some(edges) => {
                let counts = py
                    .allow_threads(|| a.histogram_edges(&edges))
                    .map_err(array_err)?;
                Ok((out(counts)?, edges))
            }
            None => {
                let (counts, edges) = py
                    .allow_threads(|| a.histogram(bins, range))
                    .map_err(array_err)?;
                Ok((out(counts)?, edges))
            }
        }
    })
}

/// `bincount(a, minlength)`: how many times each value `0..=max(a)` occurs in the
/// flattened integer array (`int64`, at least `minlength` bins).
#[pyfunction]
pub fn array_bincount(py: Python<'_>, a: ArrayArg, minlength: usize) -> PyResult<Out> {
    let stream = legacy()?;
    let char = a.3.clone();
    if !matches!(
        char.as_str(),
        "b" | "B" | "h" | "H" | "i" | "I" | "l" | "q" | "L" | "Q"
    ) {
        return Err(PyNotImplementedError::new_err(format!(
            "bincount counts integer arrays, not dtype {char:?}"
        )));
    }
    by_dtype!(char.as_str(), T => {
        let a = view::<T>(&stream, a)?;
        out(py.allow_threads(|| a.bincount(minlength)).map_err(array_err)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // No Python objects here, errors included: the GPU bundle runs this binary on a
    // machine without this build's libpython, which linking them would need.

    fn char_of(c: &str) -> Result<&'static str, String> {
        by_dtype!(c, T => Ok(dtype_char::<T>()), other => Err(unsupported_dtype(other)))
    }

    #[test]
    fn dtype_characters_round_trip() {
        for c in ["?", "b", "B", "h", "H", "i", "I", "l", "L", "e", "f", "d"] {
            assert_eq!(char_of(c).unwrap(), c);
        }
        assert_eq!(char_of("q").unwrap(), "l");
        assert_eq!(char_of("Q").unwrap(), "L");
    }

    #[test]
    fn other_dtypes_are_refused_by_name() {
        for c in ["F", "D", "V", "O", "x"] {
            let e = char_of(c).unwrap_err();
            assert!(e.contains(&format!("{c:?}")), "{e}");
        }
    }
}
