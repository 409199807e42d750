//! Host data laid out in the order an array asks for (PyCUDA's
//! `np.asarray(matrix, order=order)` in `matrix_to_array`): the data is a C-ordered
//! (row-major) block of its shape, NumPy's default; [`Order::F`] reverses its axes so the
//! first index varies fastest in memory.

use std::borrow::Cow;

use crate::arrays::host_copy::Order;

/// `data`, a C-ordered block of `shape` (1 to 3 dimensions, as many elements as the
/// shape holds: the caller checked), in `order`: borrowed as is for [`Order::C`] or a
/// single dimension, copied with its axes reversed for [`Order::F`].
pub(crate) fn in_order<'a, T: Copy>(data: &'a [T], shape: &[usize], order: Order) -> Cow<'a, [T]> {
    if order == Order::C || shape.len() < 2 {
        return Cow::Borrowed(data);
    }
    let mut out = Vec::with_capacity(data.len());
    match *shape {
        [rows, cols] => {
            // out[j * rows + i] = m[i][j]
            for j in 0..cols {
                out.extend((0..rows).map(|i| data[i * cols + j]));
            }
        }
        [a, b, c] => {
            // out[(k * b + j) * a + i] = v[i][j][k]
            for k in 0..c {
                for j in 0..b {
                    out.extend((0..a).map(|i| data[(i * b + j) * c + k]));
                }
            }
        }
        _ => return Cow::Borrowed(data),
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_order_and_one_dimension_borrow_the_data() {
        let v: Vec<u32> = (0..12).collect();
        assert!(matches!(in_order(&v, &[3, 4], Order::C), Cow::Borrowed(_)));
        assert!(matches!(in_order(&v, &[12], Order::F), Cow::Borrowed(_)));
    }

    #[test]
    fn f_order_transposes_a_matrix() {
        // m = [[0, 1, 2], [3, 4, 5]] (2 x 3); Fortran order walks down the columns.
        let m = [0, 1, 2, 3, 4, 5];
        assert_eq!(&*in_order(&m, &[2, 3], Order::F), &[0, 3, 1, 4, 2, 5]);
    }

    #[test]
    fn f_order_reverses_three_axes_like_numpy() {
        // np.arange(24).reshape(2, 3, 4).flatten(order="F")
        let v: Vec<u32> = (0..24).collect();
        let want = [
            0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23,
        ];
        assert_eq!(&*in_order(&v, &[2, 3, 4], Order::F), &want);
        // Odd sizes: every element lands once, at its Fortran index.
        let (a, b, c) = (3usize, 5usize, 7usize);
        let v: Vec<usize> = (0..a * b * c).collect();
        let f = in_order(&v, &[a, b, c], Order::F);
        for i in 0..a {
            for j in 0..b {
                for k in 0..c {
                    assert_eq!(f[i + a * (j + b * k)], (i * b + j) * c + k);
                }
            }
        }
    }
}
