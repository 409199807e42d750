//! PyCUDA's `matrix_to_array`, `np_to_array` and `make_multichannel_2d_array` for
//! `ndarray` inputs of any memory layout (C, F or strided), as PyCUDA takes NumPy arrays:
//! what counts is the array's logical contents, which land in the CUDA array in the
//! [`Order`] asked for. The driver's slice forms ([`rucuda_driver::matrix_to_array`] and
//! friends) take row-major data; these read the `ndarray` in row-major order first.

use rucuda_array::ndarray::{ArrayView, ArrayView2, ArrayView3, Dimension};
use rucuda_driver::{
    host_to_array, make_multichannel_2d_array, matrix_to_array, Array3DFlags, ArrayElement,
    Context, CudaArray, Order, Result,
};

/// `a`'s elements in row-major order: borrowed when it already is C-contiguous.
fn row_major<'a, T: Clone, D: Dimension>(a: &'a ArrayView<'_, T, D>) -> std::borrow::Cow<'a, [T]> {
    match a.as_slice() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(a.iter().cloned().collect()),
    }
}

/// A 2D CUDA array holding the matrix `m` laid out in `order` (PyCUDA's
/// `matrix_to_array(m, order)`): with [`Order::C`], `tex2D(x, y)` reads `m[[y, x]]`;
/// with [`Order::F`], `m[[x, y]]`. `m` may have any memory layout.
///
/// ```no_run
/// use rucuda::driver::Order;
/// use rucuda::ndarray::Array2;
/// let ctx = rucuda::tools::autoprimaryctx()?;
/// let m = Array2::from_shape_fn((3, 5), |(i, j)| (10 * i + j) as f32);
/// let a = rucuda::tools::ndarray_matrix_to_array(ctx, m.t(), Order::F)?; // 5 wide
/// assert_eq!(a.desc().width, 5);
/// # Ok::<(), rucuda::driver::Error>(())
/// ```
pub fn ndarray_matrix_to_array<T: ArrayElement>(
    ctx: &Context,
    m: ArrayView2<'_, T>,
    order: Order,
) -> Result<CudaArray> {
    let (rows, cols) = m.dim();
    matrix_to_array(ctx, &row_major(&m), [rows, cols], order)
}

/// A 1D, 2D or 3D CUDA array holding `a` laid out in `order`, with `flags` (PyCUDA's
/// `np_to_array(a, order, allowSurfaceBind)`; see [`rucuda_driver::host_to_array`]).
/// `a` may have any memory layout.
pub fn ndarray_to_array<T: ArrayElement, D: Dimension>(
    ctx: &Context,
    a: ArrayView<'_, T, D>,
    order: Order,
    flags: Array3DFlags,
) -> Result<CudaArray> {
    host_to_array(ctx, &row_major(&a), a.shape(), order, flags)
}

/// A 2D array of multi-channel elements from `a` of shape `[height, width, channels]`
/// ([`Order::C`]) or `[channels, width, height]` ([`Order::F`]) (PyCUDA's
/// `make_multichannel_2d_array(a, order)`). `a` may have any memory layout.
pub fn ndarray_to_multichannel_2d_array<T: ArrayElement>(
    ctx: &Context,
    a: ArrayView3<'_, T>,
    order: Order,
) -> Result<CudaArray> {
    let (p, q, r) = a.dim();
    make_multichannel_2d_array(ctx, &row_major(&a), [p, q, r], order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rucuda_array::ndarray::{Array2, ShapeBuilder};

    #[test]
    fn any_layout_reads_in_row_major_order() {
        let c = Array2::from_shape_fn((3, 4), |(i, j)| 10 * i + j);
        let f = Array2::from_shape_fn((3, 4).f(), |(i, j)| 10 * i + j);
        assert_eq!(row_major(&c.view()), row_major(&f.view()));
        assert!(matches!(
            row_major(&c.view()),
            std::borrow::Cow::Borrowed(_)
        ));
        let want: Vec<usize> = (0..3)
            .flat_map(|i| (0..4).map(move |j| 10 * i + j))
            .collect();
        assert_eq!(&*row_major(&f.view()), &want[..]);
        // A transposed, strided view.
        let t = c.t();
        let want_t: Vec<usize> = (0..4)
            .flat_map(|j| (0..3).map(move |i| 10 * i + j))
            .collect();
        assert_eq!(&*row_major(&t), &want_t[..]);
    }
}
