//! Memory order ([`Order`], NumPy's `order=` argument): the layout a new array gets when
//! it is created in an order or "like" another array, reshapes and ravels that read in
//! column-major order, and the dense-layout tests the kernels' fast paths use.

use super::{element_count, Layout, LayoutError};

/// NumPy's `order`: how the elements of a new array lie in memory, or in which index
/// order a reshape or ravel reads and writes them.
///
/// ```
/// use rucuda_array::layout::{Layout, Order};
/// let f = Layout::f_contiguous(&[2, 3]).unwrap();
/// assert_eq!(f.dense_like(Order::K).unwrap().strides(), &[1, 2]); // keeps F
/// assert_eq!(f.dense_like(Order::A).unwrap().strides(), &[1, 2]); // F because it is F
/// assert_eq!(f.dense_like(Order::C).unwrap().strides(), &[3, 1]);
/// assert_eq!("f".parse::<Order>().unwrap(), Order::F);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// Row-major: the last axis varies fastest (NumPy's and ndarray's default).
    #[default]
    C,
    /// Column-major (Fortran): the first axis varies fastest.
    F,
    /// `F` when the array it follows is F-contiguous and not C-contiguous, else `C`.
    A,
    /// Keep the array it follows as closely as possible: its axes in the order of their
    /// strides (negative strides made positive). Without an array to follow: `C`.
    K,
}

impl std::fmt::Display for Order {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Order::C => "C",
            Order::F => "F",
            Order::A => "A",
            Order::K => "K",
        })
    }
}

impl std::str::FromStr for Order {
    type Err = LayoutError;

    /// NumPy's spellings: `"C"`, `"F"`, `"A"`, `"K"` in either case.
    fn from_str(s: &str) -> Result<Order, LayoutError> {
        match s {
            "C" | "c" => Ok(Order::C),
            "F" | "f" => Ok(Order::F),
            "A" | "a" => Ok(Order::A),
            "K" | "k" => Ok(Order::K),
            _ => Err(LayoutError::InvalidOrder {
                operation: "parsing an order",
                order: s.to_string(),
            }),
        }
    }
}

impl Layout {
    /// `order` with `A` resolved against this layout (`F` when it is F-contiguous and not
    /// C-contiguous, else `C`); `C`, `F` and `K` are returned as they are.
    pub fn resolve_order(&self, order: Order) -> Order {
        match order {
            Order::A if self.is_f_contiguous() && !self.is_c_contiguous() => Order::F,
            Order::A => Order::C,
            other => other,
        }
    }

    /// The dense layout (offset 0) of a new array of this shape made "like" this one in
    /// `order` (NumPy's `empty_like(a, order=...)`, `a.copy(order=...)`).
    ///
    /// ```
    /// use rucuda_array::layout::{Layout, Order};
    /// // A [2, 3, 4] array with its axes permuted to [4, 2, 3]: K keeps that order.
    /// let p = Layout::c_contiguous(&[2, 3, 4]).unwrap().permute(&[2, 0, 1]).unwrap();
    /// assert_eq!(p.dense_like(Order::K).unwrap().strides(), &[1, 12, 4]);
    /// // A reversed vector: K gives a forward one.
    /// let r = Layout::c_contiguous(&[5]).unwrap().flip(0).unwrap();
    /// assert_eq!(r.dense_like(Order::K).unwrap().strides(), &[1]);
    /// ```
    pub fn dense_like(&self, order: Order) -> Result<Layout, LayoutError> {
        match self.resolve_order(order) {
            Order::K => self.dense_in_memory_order(),
            o => Layout::contiguous(&self.shape, o),
        }
    }

    /// The dense layout whose axes lie in this layout's stride order (NumPy's `K`).
    fn dense_in_memory_order(&self) -> Result<Layout, LayoutError> {
        if self.is_c_contiguous() {
            return Layout::c_contiguous(&self.shape);
        }
        if self.is_f_contiguous() {
            return Layout::f_contiguous(&self.shape);
        }
        let len = element_count(&self.shape)?;
        let mut strides = vec![len.max(1) as isize; self.ndim()];
        let mut acc = 1isize;
        for &a in self.memory_order_axes().iter().rev() {
            strides[a] = acc;
            acc = acc.saturating_mul(self.shape[a] as isize);
        }
        Ok(Layout {
            shape: self.shape.clone(),
            strides,
            offset: 0,
        })
    }

    /// The axes longer than 1, slowest first: sorted by the size of their strides,
    /// largest first (ties keep the axis order).
    fn memory_order_axes(&self) -> Vec<usize> {
        let mut axes: Vec<usize> = (0..self.ndim()).filter(|&a| self.shape[a] > 1).collect();
        axes.sort_by_key(|&a| std::cmp::Reverse(self.strides[a].unsigned_abs()));
        axes
    }

    /// [`Layout::reshape`] reading and writing the elements in `order`: `C` (row-major,
    /// the default), `F` (column-major) or `A` (`F` when this layout is F-contiguous and
    /// not C-contiguous). `K` is refused, as NumPy does.
    ///
    /// ```
    /// use rucuda_array::layout::{Layout, Order};
    /// let f = Layout::f_contiguous(&[4, 6]).unwrap();
    /// let r = f.reshape_order(&[2, 2, -1], Order::F).unwrap();
    /// assert_eq!(r.strides(), &[1, 2, 4]);
    /// assert!(f.reshape_order(&[24], Order::K).is_err());
    /// ```
    pub fn reshape_order(&self, shape: &[isize], order: Order) -> Result<Layout, LayoutError> {
        match self.resolve_order(order) {
            Order::C => self.reshape(shape),
            Order::F => {
                let reversed: Vec<isize> = shape.iter().rev().copied().collect();
                Ok(self.transpose().reshape(&reversed)?.transpose())
            }
            _ => Err(LayoutError::InvalidOrder {
                operation: "reshape",
                order: order.to_string(),
            }),
        }
    }

    /// The elements on one axis, read in `order`: `C`, `F`, `A`, or `K` (the order they
    /// lie in memory, negative strides reversed). A view, or
    /// [`LayoutError::NeedsCopy`].
    ///
    /// ```
    /// use rucuda_array::layout::{Layout, Order};
    /// let f = Layout::f_contiguous(&[3, 4]).unwrap();
    /// assert!(f.ravel_order(Order::C).is_err()); // row-major reading needs a copy
    /// assert_eq!(f.ravel_order(Order::F).unwrap().strides(), &[1]);
    /// assert_eq!(f.ravel_order(Order::K).unwrap().strides(), &[1]);
    /// ```
    pub fn ravel_order(&self, order: Order) -> Result<Layout, LayoutError> {
        match self.resolve_order(order) {
            Order::K => {
                let mut l = self.clone();
                for a in 0..l.ndim() {
                    if l.strides[a] < 0 {
                        l = l.flip(a as isize)?;
                    }
                }
                let mut axes = l.memory_order_axes();
                axes.extend((0..l.ndim()).filter(|&a| l.shape[a] <= 1));
                l.permute(&axes)?.ravel()
            }
            o => self.reshape_order(&[self.len() as isize], o),
        }
    }

    /// The order of a new array holding the result of an elementwise operation over
    /// operands with these layouts in the iteration shape of `len` elements (NumPy's `K`
    /// for ufuncs, simplified): `F` when every operand that is not broadcast is
    /// F-contiguous and one of them is not C-contiguous, else `C`.
    ///
    /// ```
    /// use rucuda_array::layout::{Layout, Order};
    /// let f = Layout::f_contiguous(&[3, 4]).unwrap();
    /// let c = Layout::c_contiguous(&[3, 4]).unwrap();
    /// let row = Layout::c_contiguous(&[4]).unwrap();
    /// assert_eq!(Layout::result_order(&[&f, &row], 12), Order::F);
    /// assert_eq!(Layout::result_order(&[&f, &c], 12), Order::C);
    /// ```
    pub fn result_order(layouts: &[&Layout], len: usize) -> Order {
        // No allocation: this runs for every operator's result.
        let (mut any_full, mut all_f, mut any_not_c) = (false, true, false);
        for l in layouts.iter().filter(|l| l.len() == len) {
            any_full = true;
            all_f &= l.is_f_contiguous();
            any_not_c |= !l.is_c_contiguous();
        }
        if any_full && all_f && any_not_c {
            Order::F
        } else {
            Order::C
        }
    }

    /// True when the elements fill `offset..offset + len` exactly with every axis longer
    /// than 1 at a positive stride (C-, F- or any axis-permuted contiguous layout, not
    /// reversed): element 0 is then the lowest one, and a flat loop over memory visits
    /// each element once.
    ///
    /// ```
    /// use rucuda_array::layout::Layout;
    /// let c = Layout::c_contiguous(&[2, 3, 4]).unwrap();
    /// assert!(c.is_dense_forward() && c.permute(&[1, 2, 0]).unwrap().is_dense_forward());
    /// assert!(!c.flip(0).unwrap().is_dense_forward());
    /// ```
    pub fn is_dense_forward(&self) -> bool {
        if self.is_empty() {
            return true;
        }
        let mut axes: Vec<(usize, isize)> = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(&d, _)| d > 1)
            .map(|(&d, &s)| (d, s))
            .collect();
        axes.sort_by_key(|&(_, s)| s);
        let mut expected = 1isize;
        for (d, s) in axes {
            if s != expected {
                return false;
            }
            expected = expected.saturating_mul(d as isize);
        }
        true
    }

    /// True when both layouts visit their elements in the same memory order: the same
    /// lengths and strides on their axes longer than 1 (axes of length 1, which
    /// broadcasting adds, are ignored).
    pub fn same_memory_order(&self, other: &Layout) -> bool {
        let long = |l: &Layout| {
            l.shape
                .iter()
                .zip(&l.strides)
                .filter(|(&d, _)| d > 1)
                .map(|(&d, &s)| (d, s))
                .collect::<Vec<_>>()
        };
        long(self) == long(other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::SliceArg;

    #[test]
    fn creation_orders_give_numpy_strides() {
        let shape = [2, 3, 4];
        assert_eq!(
            Layout::contiguous(&shape, Order::C).unwrap().strides(),
            &[12, 4, 1]
        );
        assert_eq!(
            Layout::contiguous(&shape, Order::F).unwrap().strides(),
            &[1, 2, 6]
        );
        // Without an array to follow, A and K are C.
        assert_eq!(
            Layout::contiguous(&shape, Order::A).unwrap().strides(),
            &[12, 4, 1]
        );
        assert_eq!(
            Layout::contiguous(&shape, Order::K).unwrap().strides(),
            &[12, 4, 1]
        );
        let c = Layout::c_contiguous(&shape).unwrap();
        let f = Layout::f_contiguous(&shape).unwrap();
        for order in [Order::C, Order::F, Order::A, Order::K] {
            let want_c = match order {
                Order::F => f.clone(),
                _ => c.clone(),
            };
            assert_eq!(c.dense_like(order).unwrap(), want_c, "{order}");
            let want_f = match order {
                Order::C => c.clone(),
                _ => f.clone(),
            };
            assert_eq!(f.dense_like(order).unwrap(), want_f, "{order}");
        }
        // A strided F view (every other row of an F array): A and K keep F.
        let big = Layout::f_contiguous(&[6, 5]).unwrap();
        let v = big.slice(&[SliceArg::stepped(None, None, 2)]).unwrap();
        assert!(!v.is_f_contiguous());
        assert_eq!(v.dense_like(Order::K).unwrap().strides(), &[1, 3]);
        assert_eq!(v.dense_like(Order::A).unwrap().strides(), &[5, 1]);
        // K of a view with a broadcast axis and a reversed one: dense and forward.
        let b = Layout::c_contiguous(&[1, 4])
            .unwrap()
            .broadcast_to(&[3, 4])
            .unwrap()
            .flip(1)
            .unwrap();
        let k = b.dense_like(Order::K).unwrap();
        assert!(k.is_dense_forward() && k.offset() == 0, "{k:?}");
        assert_eq!(k.strides(), &[1, 3]);
    }

    #[test]
    fn reshape_and_ravel_in_f_order_match_numpy() {
        // np.arange(6).reshape(2, 3, order='F') has strides (1, 2) in elements.
        let a = Layout::c_contiguous(&[6]).unwrap();
        let r = a.reshape_order(&[2, 3], Order::F).unwrap();
        assert_eq!(r.strides(), &[1, 2]);
        assert_eq!(
            r.element_offsets().collect::<Vec<_>>(),
            vec![0, 2, 4, 1, 3, 5]
        );
        // A C array reshaped in F order needs a copy unless it is 1-D.
        let c = Layout::c_contiguous(&[2, 3]).unwrap();
        assert!(matches!(
            c.reshape_order(&[3, 2], Order::F),
            Err(LayoutError::NeedsCopy { .. })
        ));
        // F arrays reshape in F order as views; A follows them.
        let f = Layout::f_contiguous(&[2, 3, 4]).unwrap();
        let v = f.reshape_order(&[6, -1], Order::A).unwrap();
        assert_eq!(
            (v.shape(), v.strides()),
            (&[6usize, 4][..], &[1isize, 6][..])
        );
        assert!(f.reshape_order(&[24], Order::K).is_err());
        // Ravel: C of an F array needs a copy; F, A and K are views in memory order.
        assert!(f.ravel_order(Order::C).is_err());
        for o in [Order::F, Order::A, Order::K] {
            assert_eq!(f.ravel_order(o).unwrap().strides(), &[1], "{o}");
        }
        // K of a reversed, permuted dense layout: forward memory order.
        let p = Layout::c_contiguous(&[3, 4])
            .unwrap()
            .transpose()
            .flip(0)
            .unwrap();
        let k = p.ravel_order(Order::K).unwrap();
        assert_eq!(k.strides(), &[1]);
        assert_eq!(k.offset(), 0);
        assert_eq!(
            k.element_offsets().collect::<Vec<_>>(),
            (0..12).collect::<Vec<_>>()
        );
    }

    #[test]
    fn dense_layouts_and_result_orders() {
        let f = Layout::f_contiguous(&[3, 4]).unwrap();
        let c = Layout::c_contiguous(&[3, 4]).unwrap();
        assert!(f.is_dense_forward() && c.is_dense_forward());
        assert!(!f.same_memory_order(&c));
        let f3 = Layout::f_contiguous(&[1, 3, 4]).unwrap();
        assert!(f3.same_memory_order(&f));
        let s = c.slice(&[SliceArg::All, SliceArg::range(0, 2)]).unwrap();
        assert!(!s.is_dense_forward());
        assert_eq!(Layout::result_order(&[&f, &f], 12), Order::F);
        assert_eq!(Layout::result_order(&[&c], 12), Order::C);
        let v = Layout::c_contiguous(&[12]).unwrap();
        assert_eq!(Layout::result_order(&[&v], 12), Order::C);
        assert_eq!("K".parse::<Order>().unwrap(), Order::K);
        assert!("X".parse::<Order>().is_err());
    }
}
