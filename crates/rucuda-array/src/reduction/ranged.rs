//! [`ReductionKernel`] calls over part of the input: PyCUDA's `ReductionKernel.__call__(...,
//! range=slice(start, stop, step))` and `slice=` (Python's slice semantics: negative
//! bounds from the end, negative steps, clamping).
//!
//! Every array argument read as `x[i]` is seen flat (row-major; it must allow a flat
//! view, as PyCUDA requires contiguous arrays) and sliced: a view, no copy, read through
//! its stride by the strided variant when the step is not 1. The map expression then
//! runs for `i` in `0..count` over the views, so it must use `i` only inside `x[i]` (in
//! PyCUDA `i` is the absolute index; an expression that uses `i` otherwise, or indexes
//! an array another way, is refused rather than given other indices).

use super::ReductionKernel;
use crate::codegen::{CodegenError, OperationAnalysis};
use crate::dtype::Element;
use crate::elementwise::{ArrayValue, KernelValue};
use crate::error::{ArrayError, Result};
use crate::layout::{Layout, SliceArg};
use crate::memory::ArrayMemory;
use crate::GpuArray;
use rucuda_driver::Stream;

/// The indices a ranged reduction visits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReductionRange {
    /// PyCUDA's `range=slice(start, stop, step)`: `start, start + step, …` below `stop`,
    /// taken as given (no negative counting; `stop` at most the length; `step` ≥ 1).
    Range {
        /// First index.
        start: usize,
        /// Index to stop before.
        stop: usize,
        /// Step (at least 1).
        step: usize,
    },
    /// PyCUDA's `slice=slice(start, stop, step)`: Python's slice of the flattened
    /// arguments (`None` bounds, negative bounds counted from the end, clamping, any
    /// nonzero step, negative steps visiting backwards).
    Slice {
        /// First index (`None`: the start in the step's direction).
        start: Option<isize>,
        /// Index to stop before (`None`: past the end in the step's direction).
        stop: Option<isize>,
        /// Step, not 0.
        step: isize,
    },
}

impl ReductionRange {
    /// The slice of a flat axis of `len` elements this range takes.
    fn slice_arg(&self, len: usize) -> Result<SliceArg> {
        match *self {
            ReductionRange::Range { start, stop, step } => {
                if step == 0 || stop > len || start > len {
                    return Err(ArrayError::InvalidArgument(format!(
                        "reduction range {start}..{stop} step {step} does not fit {len} \
                         elements (the step must be at least 1; use a slice for \
                         Python's negative bounds)"
                    )));
                }
                let stop = stop.max(start);
                Ok(SliceArg::stepped(
                    Some(start as isize),
                    Some(stop as isize),
                    step as isize,
                ))
            }
            ReductionRange::Slice { start, stop, step } => Ok(SliceArg::stepped(start, stop, step)),
        }
    }
}

impl ReductionKernel {
    /// The reduction over the indices `range` selects of the flattened arguments, as a
    /// device scalar (PyCUDA's `range=` and `slice=` keyword arguments; see the module
    /// documentation for what the map expression may do). An empty selection gives the
    /// neutral element.
    ///
    /// ```no_run
    /// use rucuda_array::{DType, GpuArray, reduction::{ReductionKernel, ReductionRange}};
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let sum = unsafe { ReductionKernel::new(DType::I64, "0", "a+b", "x[i]", "const long long *x", "s") }?;
    /// let x = GpuArray::<i64>::arange(&stream, 0.0, 10.0, 1.0)?;
    /// let odd = ReductionRange::Range { start: 1, stop: 10, step: 2 };
    /// assert_eq!(sum.call_range::<i64>(&stream, &[(&x).into()], odd)?.to_scalar()?, 25);
    /// let last3 = ReductionRange::Slice { start: Some(-3), stop: None, step: 1 };
    /// assert_eq!(sum.call_range::<i64>(&stream, &[(&x).into()], last3)?.to_scalar()?, 24);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn call_range<T: Element>(
        &self,
        stream: &Stream,
        args: &[KernelValue<'_>],
        range: ReductionRange,
    ) -> Result<GpuArray<T>> {
        let spec = self.spec();
        let kernel = spec.name().to_string();
        let analysis = OperationAnalysis::of_arrays(spec.map_expr(), spec.args());
        // `i` outside `x[i]`: rewrite every `x[i]` away and look for `i` again.
        let rest = analysis.rewrite(|_| Some("rucuda_v".to_string()));
        let bare_i = OperationAnalysis::new(&rest, &["i"])
            .usage("i")
            .is_some_and(|u| u.other_use.is_some() || !u.indexed.is_empty());
        if bare_i {
            return Err(CodegenError::StridedUnsupported {
                kernel,
                name: "i".into(),
                usage: "a ranged call (the index `i` outside `x[i]`)".into(),
            }
            .into());
        }
        let vector_names: Vec<&str> = spec
            .args()
            .iter()
            .filter(|a| a.is_vector())
            .map(|a| a.name())
            .collect();
        // Flattened, sliced layouts of the arrays read as x[i], in argument order.
        let mut layouts: Vec<Option<Layout>> = Vec::new();
        let mut len: Option<usize> = None;
        let mut k = 0;
        for v in args {
            let KernelValue::Array(a) = v else { continue };
            let name = vector_names.get(k).copied().unwrap_or("");
            k += 1;
            let usage = analysis.usage(name).cloned().unwrap_or_default();
            if let Some(other) = usage.other_use {
                return Err(CodegenError::StridedUnsupported {
                    kernel,
                    name: name.into(),
                    usage: format!("a ranged call ({other})"),
                }
                .into());
            }
            if usage.indexed.is_empty() {
                layouts.push(None);
                continue;
            }
            let n = a.layout.len();
            if *len.get_or_insert(n) != n {
                return Err(ArrayError::LengthMismatch {
                    device: len.unwrap_or(0),
                    host: n,
                });
            }
            let flat = a.layout.reshape(&[-1]).map_err(|_| {
                ArrayError::from(CodegenError::StridedUnsupported {
                    kernel: kernel.clone(),
                    name: name.into(),
                    usage: "a ranged call (it needs arrays that have a flat view)".into(),
                })
            })?;
            layouts.push(Some(flat.slice(&[range.slice_arg(n)?])?));
        }
        if len.is_none() {
            return Err(CodegenError::NoVectorArgument(kernel).into());
        }
        let mut slots = layouts.iter();
        let ranged: Vec<KernelValue<'_>> = args
            .iter()
            .map(|v| match v {
                KernelValue::Array(a) => match slots.next() {
                    // Element 0 moves with the slice: the address comes from the view.
                    Some(Some(l)) => KernelValue::Array(ArrayValue {
                        mem: ArrayMemory {
                            range: a.mem.range,
                            offset: l.offset() * a.dtype.size_bytes(),
                        },
                        layout: l,
                        ..a.clone()
                    }),
                    _ => KernelValue::Array(a.clone()),
                },
                KernelValue::Scalar(s) => KernelValue::Scalar(s.clone()),
            })
            .collect();
        self.call::<T>(stream, &ranged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(r: ReductionRange, len: usize) -> usize {
        Layout::c_contiguous(&[len])
            .unwrap()
            .slice(&[r.slice_arg(len).unwrap()])
            .unwrap()
            .len()
    }

    #[test]
    fn ranges_and_slices_select_as_pycuda_and_python() {
        let r = |start, stop, step| ReductionRange::Range { start, stop, step };
        assert_eq!(count(r(1, 10, 2), 10), 5);
        assert_eq!(count(r(7, 3, 1), 10), 0);
        assert_eq!(count(r(0, 10, 1), 10), 10);
        assert!(r(0, 11, 1).slice_arg(10).is_err());
        assert!(r(0, 5, 0).slice_arg(10).is_err());
        let s = |start, stop, step| ReductionRange::Slice { start, stop, step };
        assert_eq!(count(s(Some(-3), None, 1), 10), 3);
        assert_eq!(count(s(None, None, -1), 10), 10);
        assert_eq!(count(s(Some(8), Some(1), -3), 10), 3); // 8, 5, 2
        assert_eq!(count(s(Some(-100), Some(100), 4), 10), 3);
        let l = Layout::c_contiguous(&[10]).unwrap();
        assert!(l.slice(&[s(None, None, 0).slice_arg(10).unwrap()]).is_err());
    }
}
