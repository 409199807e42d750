//! NumPy's reductions along axes as [`GpuArray`] methods: `sum_axes`, `prod_axes`,
//! `max_axes`, `min_axes`, `argmax_axis`, `argmin_axis`, `any_axes`, `all_axes`,
//! `mean_axes`, `var_axes`, `std_axes` (NumPy's `a.sum(axis=..., keepdims=...)` and so
//! on; PyCUDA's `GPUArray` reductions have no axis).
//!
//! - Axes as NumPy takes them: negative ones count from the end, a duplicate or an axis
//!   out of range is an error, `&[]` reduces nothing (NumPy's `axis=()`); to reduce
//!   every axis pass them all (or use the whole-array methods `sum`, `max`...).
//! - `keepdims` keeps the reduced axes with length 1. The result is a new C-contiguous
//!   array on the input's stream.
//! - Result types as NumPy's on Linux ([`AxisElement`]): `sum`/`prod` of bool and
//!   signed integers give `i64`, of unsigned ones `u64`; `mean`/`var`/`std` of bool and
//!   integers give `f64`; floats keep their type (`f32` sums and means accumulate in
//!   `f64`, half types in `f32`; `var`/`std` merge (count, mean, M2) triples in `f64` with
//!   Chan's formula, so `f32` variances are as accurate as a two-pass `f64` one);
//!   `argmax`/`argmin` give `i64` indices along the axis; `any`/`all` give `bool`.
//! - NaN as NumPy: it propagates through `max`/`min`, `argmax`/`argmin` return the
//!   first NaN; ties give the first index.
//! - Empty reductions as NumPy: `sum` gives 0, `prod` 1, `any` false, `all` true,
//!   `mean`/`var`/`std` NaN; `max`/`min`/`argmax`/`argmin` are errors.
//! - Any strides: views, transposes and F-ordered arrays are read in place.
//!
//! One kernel per call (plus a small merge pass when few outputs each reduce many
//! elements): neighbouring axes are merged, then a contiguous reduced axis is read by
//! a warp per output with 16-byte loads, and otherwise each thread folds one output,
//! adjacent threads on adjacent outputs so that reads coalesce; long reductions are
//! split in chunks so that the device is full whatever its size.
//!
//! ```no_run
//! # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
//! use rucuda_array::GpuArray;
//! let a = GpuArray::from_shape_slice(&stream, &[2, 3], &[1i32, 2, 3, 4, 5, 6])?;
//! assert_eq!(a.sum_axes(&[0], false)?.to_vec()?, vec![5i64, 7, 9]);
//! assert_eq!(a.sum_axes(&[-1], true)?.shape(), &[2, 1]);
//! assert_eq!(a.mean_axes(&[1], false)?.to_vec()?, vec![2.0f64, 5.0]);
//! assert_eq!(a.argmax_axis(0, false)?.to_vec()?, vec![1i64, 1, 1]);
//! // A transposed view reads in place.
//! assert_eq!(a.transpose().max_axes(&[1], false)?.to_vec()?, vec![4, 5, 6]);
//! # Ok::<(), rucuda_array::ArrayError>(())
//! ```

mod launch;
mod ops;
mod plan;

use crate::array::GpuArray;
use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::layout::Order;
use half::{bf16, f16};
use num_complex::Complex;

use ops::AxisOp;

/// The result types of the axis reductions of an element type, as NumPy's on Linux.
pub trait AxisElement: Element {
    /// The type of `sum_axes` and `prod_axes`: `i64` for bool and signed integers, `u64`
    /// for unsigned ones, the type itself otherwise.
    type Sum: Element;
    /// The type of `mean_axes`, `var_axes` and `std_axes`: `f64` for bool and integers,
    /// the type itself otherwise (complex `var`/`std` are refused).
    type Mean: Element;
}

macro_rules! axis_element {
    ($($t:ty => $s:ty, $m:ty);* $(;)?) => {$(
        impl AxisElement for $t {
            type Sum = $s;
            type Mean = $m;
        }
    )*};
}

axis_element! {
    bool => i64, f64;
    i8 => i64, f64;
    i16 => i64, f64;
    i32 => i64, f64;
    i64 => i64, f64;
    u8 => u64, f64;
    u16 => u64, f64;
    u32 => u64, f64;
    u64 => u64, f64;
    f16 => f16, f16;
    bf16 => bf16, bf16;
    f32 => f32, f32;
    f64 => f64, f64;
    Complex<f32> => Complex<f32>, Complex<f32>;
    Complex<f64> => Complex<f64>, Complex<f64>;
}

impl<T: AxisElement> GpuArray<T> {
    /// The sum over `axes` (NumPy's `sum(axis=axes, keepdims=keepdims)`), in NumPy's
    /// result type ([`AxisElement::Sum`]; integers wrap). An empty reduction gives 0.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_shape_slice(&stream, &[2, 2], &[true, true, false, true])?;
    /// assert_eq!(a.sum_axes(&[0], false)?.to_vec()?, vec![1i64, 2]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn sum_axes(&self, axes: &[isize], keepdims: bool) -> Result<GpuArray<T::Sum>> {
        self.reduce_axes(AxisOp::Sum, axes, keepdims, 0.0)
    }

    /// The product over `axes`, in NumPy's result type (as [`GpuArray::sum_axes`]). An
    /// empty reduction gives 1.
    pub fn prod_axes(&self, axes: &[isize], keepdims: bool) -> Result<GpuArray<T::Sum>> {
        self.reduce_axes(AxisOp::Prod, axes, keepdims, 0.0)
    }

    /// The largest element over `axes` (NaN if any is NaN); complex arrays are refused,
    /// and so is an empty reduction (as NumPy).
    pub fn max_axes(&self, axes: &[isize], keepdims: bool) -> Result<GpuArray<T>> {
        self.reduce_axes(AxisOp::Max, axes, keepdims, 0.0)
    }

    /// The smallest element over `axes`; see [`GpuArray::max_axes`].
    pub fn min_axes(&self, axes: &[isize], keepdims: bool) -> Result<GpuArray<T>> {
        self.reduce_axes(AxisOp::Min, axes, keepdims, 0.0)
    }

    /// The index along `axis` of the first largest element, or of the first NaN
    /// (NumPy's `argmax(axis=axis, keepdims=keepdims)`). An empty axis is an error.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_shape_slice(&stream, &[2, 3], &[1.0f32, 7.0, 7.0, f32::NAN, 0.0, 9.0])?;
    /// assert_eq!(a.argmax_axis(1, false)?.to_vec()?, vec![1, 0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn argmax_axis(&self, axis: isize, keepdims: bool) -> Result<GpuArray<i64>> {
        self.reduce_axes(AxisOp::ArgMax, &[axis], keepdims, 0.0)
    }

    /// The index along `axis` of the first smallest element, or of the first NaN; see
    /// [`GpuArray::argmax_axis`].
    pub fn argmin_axis(&self, axis: isize, keepdims: bool) -> Result<GpuArray<i64>> {
        self.reduce_axes(AxisOp::ArgMin, &[axis], keepdims, 0.0)
    }

    /// Whether some element over `axes` is nonzero (NaN counts); `false` when empty.
    pub fn any_axes(&self, axes: &[isize], keepdims: bool) -> Result<GpuArray<bool>> {
        self.reduce_axes(AxisOp::Any, axes, keepdims, 0.0)
    }

    /// Whether every element over `axes` is nonzero; `true` when empty.
    pub fn all_axes(&self, axes: &[isize], keepdims: bool) -> Result<GpuArray<bool>> {
        self.reduce_axes(AxisOp::All, axes, keepdims, 0.0)
    }

    /// The mean over `axes`, in NumPy's result type ([`AxisElement::Mean`]: `f64` for
    /// integers). An empty reduction gives NaN.
    pub fn mean_axes(&self, axes: &[isize], keepdims: bool) -> Result<GpuArray<T::Mean>> {
        self.reduce_axes(AxisOp::Mean, axes, keepdims, 0.0)
    }

    /// The variance over `axes`, `sum(|x - mean|²) / (n - ddof)` (NumPy's
    /// `var(axis=axes, ddof=ddof, keepdims=keepdims)`; `n - ddof <= 0` gives infinity or
    /// NaN as NumPy). Complex arrays are refused.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_shape_slice(&stream, &[2, 2], &[1.0f32, 2.0, 3.0, 5.0])?;
    /// assert_eq!(a.var_axes(&[1], 0, false)?.to_vec()?, vec![0.25, 1.0]);
    /// assert_eq!(a.std_axes(&[0, 1], 1, true)?.shape(), &[1, 1]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn var_axes(
        &self,
        axes: &[isize],
        ddof: usize,
        keepdims: bool,
    ) -> Result<GpuArray<T::Mean>> {
        self.reduce_axes(AxisOp::Var, axes, keepdims, ddof as f64)
    }

    /// The standard deviation over `axes`: the square root of [`GpuArray::var_axes`].
    pub fn std_axes(
        &self,
        axes: &[isize],
        ddof: usize,
        keepdims: bool,
    ) -> Result<GpuArray<T::Mean>> {
        self.reduce_axes(AxisOp::Std, axes, keepdims, ddof as f64)
    }

    fn reduce_axes<O: Element>(
        &self,
        op: AxisOp,
        axes: &[isize],
        keepdims: bool,
        ddof: f64,
    ) -> Result<GpuArray<O>> {
        ops::output_dtype(op, T::DTYPE)?;
        let mask = plan::resolve_axes(axes, self.ndim())?;
        let mut p = plan::normalize(self.shape(), self.strides(), &mask, keepdims, op.indexed());
        if op.needs_elements() && p.len == 0 {
            return Err(ArrayError::InvalidArgument(format!(
                "{} along an empty axis (of shape {:?}): the operation has no identity (NumPy raises too)",
                op.name(),
                self.shape()
            )));
        }
        let mut out = GpuArray::<O>::empty(self.stream(), &p.out_shape)?;
        if p.fits() {
            return launch::launch(self, op, &p, ddof, &mut out).map(|()| out);
        }
        // Too many unmergeable axes: a copy with the kept axes first, then the reduced
        // ones, merges into one of each.
        let order: Vec<usize> = (0..mask.len())
            .filter(|&k| !mask[k])
            .chain((0..mask.len()).filter(|&k| mask[k]))
            .collect();
        // Row-major (`Order::C`), not `copy`'s default `K`, which would keep the input's
        // memory order and so the unmerged strides.
        let packed = self.permute(&order)?.copy_order(Order::C)?;
        let packed_mask: Vec<bool> = order.iter().map(|&k| mask[k]).collect();
        let out_shape = std::mem::take(&mut p.out_shape);
        p = plan::normalize(
            packed.shape(),
            packed.strides(),
            &packed_mask,
            false,
            op.indexed(),
        );
        p.out_shape = out_shape;
        if !p.fits() {
            return Err(ArrayError::InvalidArgument(format!(
                "{}: the axes of shape {:?} do not merge into {} kept and {} reduced ones",
                op.name(),
                self.shape(),
                plan::MAXD,
                plan::MAXD
            )));
        }
        launch::launch(&packed, op, &p, ddof, &mut out)?;
        Ok(out)
    }
}

/// The kernel source of every axis reduction for every element type it supports, with
/// a label (`"Sum f32"`), for compile tests and inspection of the generated code.
///
/// ```
/// let sources = rucuda_array::axis_reduce::kernel_sources();
/// assert!(sources.iter().any(|(label, src)| label == "Var float32" && src.contains("rucuda_axis_cols")));
/// ```
pub fn kernel_sources() -> Vec<(String, String)> {
    let ops = [
        AxisOp::Sum,
        AxisOp::Prod,
        AxisOp::Max,
        AxisOp::Min,
        AxisOp::ArgMax,
        AxisOp::ArgMin,
        AxisOp::Any,
        AxisOp::All,
        AxisOp::Mean,
        AxisOp::Var,
        AxisOp::Std,
    ];
    let mut out = Vec::new();
    for op in ops {
        for d in crate::DType::ALL {
            if let Ok(s) = launch::source(op, d) {
                out.push((format!("{op:?} {}", d.name()), s));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn sources_render_for_every_type() {
        use super::ops::AxisOp;
        for d in crate::DType::ALL {
            let s = super::launch::source(AxisOp::Sum, d).unwrap();
            assert!(s.contains("rucuda_axis_rows") && s.contains("rucuda_axis_merge"));
            assert!(!s.contains("$MAXD$"));
        }
        let s = super::launch::source(AxisOp::Var, crate::DType::F16).unwrap();
        assert!(s.contains("struct rucuda_half"));
    }
}
