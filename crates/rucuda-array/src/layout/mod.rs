//! [`Layout`]: how an n-dimensional array sits in a flat buffer — shape, strides in
//! elements (any sign; 0 for broadcast axes) and the offset of the first element — and
//! every view operation on it (pure Rust, no device).
//!
//! ```
//! use rucuda_array::layout::{Layout, SliceArg};
//! let l = Layout::c_contiguous(&[4, 6]).unwrap();
//! let v = l.slice(&[SliceArg::range(1, 3), SliceArg::stepped(None, None, -2)]).unwrap();
//! assert_eq!(v.shape(), &[2, 3]);
//! assert_eq!(v.strides(), &[6, -2]);
//! assert_eq!(v.offset(), 6 + 5);
//! assert_eq!(v.transpose().shape(), &[3, 2]);
//! ```

mod broadcast;
mod error;
mod order;
mod reshape;
mod slice;
mod view_dtype;

#[cfg(test)]
mod model_tests;

pub use broadcast::{broadcast_shapes, broadcast_shapes_many};
pub use error::LayoutError;
pub use order::Order;
pub use reshape::resolve_shape;
pub use slice::{SliceArg, SliceRange};

/// Shape, strides (in elements) and offset (in elements) of an array in its buffer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

/// The number of elements of `shape`, or an overflow error.
///
/// ```
/// assert_eq!(rucuda_array::layout::element_count(&[3, 0, 2]).unwrap(), 0);
/// assert!(rucuda_array::layout::element_count(&[1 << 40, 1 << 40]).is_err());
/// ```
pub fn element_count(shape: &[usize]) -> Result<usize, LayoutError> {
    let overflow = || LayoutError::Overflow {
        shape: shape.to_vec(),
    };
    let n = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(overflow)?;
    // Offsets are signed 64-bit in kernels: keep every count below i64::MAX.
    if n > isize::MAX as usize {
        return Err(overflow());
    }
    Ok(n)
}

impl Layout {
    /// A row-major contiguous layout of `shape` at offset 0.
    ///
    /// ```
    /// let l = rucuda_array::layout::Layout::c_contiguous(&[2, 3, 4]).unwrap();
    /// assert_eq!(l.strides(), &[12, 4, 1]);
    /// ```
    pub fn c_contiguous(shape: &[usize]) -> Result<Layout, LayoutError> {
        Layout::contiguous(shape, Order::C)
    }

    /// A column-major contiguous layout of `shape` at offset 0.
    ///
    /// ```
    /// let l = rucuda_array::layout::Layout::f_contiguous(&[2, 3, 4]).unwrap();
    /// assert_eq!(l.strides(), &[1, 2, 6]);
    /// ```
    pub fn f_contiguous(shape: &[usize]) -> Result<Layout, LayoutError> {
        Layout::contiguous(shape, Order::F)
    }

    /// A contiguous layout of `shape` in `order` at offset 0.
    pub fn contiguous(shape: &[usize], order: Order) -> Result<Layout, LayoutError> {
        element_count(shape)?;
        let mut strides = vec![0isize; shape.len()];
        let mut acc = 1isize;
        let mut set = |i: usize| {
            strides[i] = acc;
            acc = acc.saturating_mul(shape[i].max(1) as isize);
        };
        // A and K name no order without an array to follow: row-major, as NumPy's
        // creation functions do.
        match order {
            Order::F => (0..shape.len()).for_each(&mut set),
            Order::C | Order::A | Order::K => (0..shape.len()).rev().for_each(&mut set),
        }
        Ok(Layout {
            shape: shape.to_vec(),
            strides,
            offset: 0,
        })
    }

    /// A layout from its parts, checked against a buffer of `buffer_len` elements: every
    /// element it reaches must lie inside.
    ///
    /// ```
    /// use rucuda_array::layout::Layout;
    /// // The reversed view of a 5-element buffer.
    /// let l = Layout::from_parts(vec![5], vec![-1], 4, 5).unwrap();
    /// assert_eq!(l.element_offsets().collect::<Vec<_>>(), vec![4, 3, 2, 1, 0]);
    /// assert!(Layout::from_parts(vec![5], vec![-1], 3, 5).is_err());
    /// ```
    pub fn from_parts(
        shape: Vec<usize>,
        strides: Vec<isize>,
        offset: usize,
        buffer_len: usize,
    ) -> Result<Layout, LayoutError> {
        if shape.len() != strides.len() {
            return Err(LayoutError::RankMismatch {
                shape: shape.len(),
                strides: strides.len(),
            });
        }
        element_count(&shape)?;
        let l = Layout {
            shape,
            strides,
            offset,
        };
        l.check_within(buffer_len)?;
        Ok(l)
    }

    /// Checks that every element lies in `0..buffer_len`.
    pub fn check_within(&self, buffer_len: usize) -> Result<(), LayoutError> {
        if self.is_empty() {
            return Ok(());
        }
        let (lo, hi) = self.span_i128();
        let bad = if lo < 0 {
            Some(lo)
        } else if hi >= buffer_len as i128 {
            Some(hi)
        } else {
            None
        };
        match bad {
            None => Ok(()),
            Some(reach) => Err(LayoutError::OutOfBounds {
                shape: self.shape.clone(),
                strides: self.strides.clone(),
                offset: self.offset,
                reach,
                buffer_len,
            }),
        }
    }

    fn span_i128(&self) -> (i128, i128) {
        let mut lo = self.offset as i128;
        let mut hi = lo;
        for (&d, &s) in self.shape.iter().zip(&self.strides) {
            let reach = (d as i128 - 1) * s as i128;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        (lo, hi)
    }

    /// The lowest and highest buffer element this layout reaches (inclusive), `None` for
    /// an empty array.
    ///
    /// ```
    /// use rucuda_array::layout::{Layout, SliceArg};
    /// let l = Layout::c_contiguous(&[3, 4]).unwrap().slice(&[SliceArg::All, SliceArg::index(1)]).unwrap();
    /// assert_eq!(l.span(), Some((1, 9)));
    /// ```
    pub fn span(&self) -> Option<(usize, usize)> {
        if self.is_empty() {
            return None;
        }
        let (lo, hi) = self.span_i128();
        Some((lo.max(0) as usize, hi.max(0) as usize))
    }

    /// The lengths of the axes.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The strides of the axes, in elements.
    #[inline]
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// The buffer element holding the array's first element (all indices 0).
    #[inline]
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of dimensions.
    #[inline]
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements (shapes are checked at construction, so this cannot overflow).
    #[inline]
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// True when some axis has length 0.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// Row-major contiguous (NumPy's `C_CONTIGUOUS`): axes of length 1 may have any
    /// stride; an empty array is contiguous.
    ///
    /// ```
    /// use rucuda_array::layout::Layout;
    /// assert!(Layout::c_contiguous(&[2, 3]).unwrap().is_c_contiguous());
    /// assert!(!Layout::c_contiguous(&[2, 3]).unwrap().transpose().is_c_contiguous());
    /// ```
    pub fn is_c_contiguous(&self) -> bool {
        self.is_contiguous_in(self.shape.len(), |k, n| n - 1 - k)
    }

    /// Column-major contiguous (NumPy's `F_CONTIGUOUS`).
    pub fn is_f_contiguous(&self) -> bool {
        self.is_contiguous_in(self.shape.len(), |k, _| k)
    }

    /// Either C- or F-contiguous: its elements fill `offset..offset + len` exactly.
    pub fn is_contiguous(&self) -> bool {
        self.is_c_contiguous() || self.is_f_contiguous()
    }

    fn is_contiguous_in(&self, n: usize, axis: impl Fn(usize, usize) -> usize) -> bool {
        if self.is_empty() {
            return true;
        }
        let mut expected = 1isize;
        for k in 0..n {
            let a = axis(k, n);
            if self.shape[a] == 1 {
                continue;
            }
            if self.strides[a] != expected {
                return false;
            }
            expected *= self.shape[a] as isize;
        }
        true
    }

    /// True when some axis of length over 1 has stride 0 (a broadcast view: several
    /// indices name the same element, so it must not be written).
    pub fn has_broadcast_axes(&self) -> bool {
        self.shape
            .iter()
            .zip(&self.strides)
            .any(|(&d, &s)| d > 1 && s == 0)
    }

    /// The buffer element of a multi-index, or `None` when it is out of range.
    ///
    /// ```
    /// let l = rucuda_array::layout::Layout::c_contiguous(&[2, 3]).unwrap().transpose();
    /// assert_eq!(l.offset_of(&[2, 1]), Some(5));
    /// assert_eq!(l.offset_of(&[3, 0]), None);
    /// ```
    pub fn offset_of(&self, index: &[usize]) -> Option<usize> {
        if index.len() != self.ndim() {
            return None;
        }
        let mut off = self.offset as isize;
        for ((&i, &d), &s) in index.iter().zip(&self.shape).zip(&self.strides) {
            if i >= d {
                return None;
            }
            off += i as isize * s;
        }
        usize::try_from(off).ok()
    }

    /// The buffer element of every array element, in row-major (C) order.
    ///
    /// ```
    /// let l = rucuda_array::layout::Layout::c_contiguous(&[2, 2]).unwrap().transpose();
    /// assert_eq!(l.element_offsets().collect::<Vec<_>>(), vec![0, 2, 1, 3]);
    /// ```
    pub fn element_offsets(&self) -> ElementOffsets<'_> {
        ElementOffsets {
            layout: self,
            index: vec![0; self.ndim()],
            next: if self.is_empty() {
                None
            } else {
                Some(self.offset as isize)
            },
        }
    }

    /// Reverses the order of the axes (NumPy's `.T`).
    pub fn transpose(&self) -> Layout {
        Layout {
            shape: self.shape.iter().rev().copied().collect(),
            strides: self.strides.iter().rev().copied().collect(),
            offset: self.offset,
        }
    }

    /// Reorders the axes: axis `k` of the result is axis `axes[k]` of `self`.
    ///
    /// ```
    /// let l = rucuda_array::layout::Layout::c_contiguous(&[2, 3, 4]).unwrap();
    /// let p = l.permute(&[2, 0, 1]).unwrap();
    /// assert_eq!(p.shape(), &[4, 2, 3]);
    /// assert_eq!(p.strides(), &[1, 12, 4]);
    /// assert!(l.permute(&[0, 0, 1]).is_err());
    /// ```
    pub fn permute(&self, axes: &[usize]) -> Result<Layout, LayoutError> {
        let n = self.ndim();
        let mut seen = vec![false; n];
        let bad = || LayoutError::InvalidPermutation {
            axes: axes.to_vec(),
            ndim: n,
        };
        if axes.len() != n {
            return Err(bad());
        }
        for &a in axes {
            if a >= n || seen[a] {
                return Err(bad());
            }
            seen[a] = true;
        }
        Ok(Layout {
            shape: axes.iter().map(|&a| self.shape[a]).collect(),
            strides: axes.iter().map(|&a| self.strides[a]).collect(),
            offset: self.offset,
        })
    }

    /// Exchanges two axes.
    pub fn swap_axes(&self, a: usize, b: usize) -> Result<Layout, LayoutError> {
        let n = self.ndim();
        let a = self.axis(a as isize)?;
        let b = self.axis(b as isize)?;
        let mut axes: Vec<usize> = (0..n).collect();
        axes.swap(a, b);
        self.permute(&axes)
    }

    /// Resolves an axis number (negative counts from the end).
    pub fn axis(&self, axis: isize) -> Result<usize, LayoutError> {
        resolve_axis(axis, self.ndim())
    }

    /// Removes every axis of length 1.
    ///
    /// ```
    /// let l = rucuda_array::layout::Layout::c_contiguous(&[1, 3, 1]).unwrap();
    /// assert_eq!(l.squeeze().shape(), &[3]);
    /// ```
    pub fn squeeze(&self) -> Layout {
        let keep: Vec<usize> = (0..self.ndim()).filter(|&a| self.shape[a] != 1).collect();
        self.select_axes(&keep)
    }

    /// Removes one axis, which must have length 1.
    pub fn squeeze_axis(&self, axis: isize) -> Result<Layout, LayoutError> {
        let a = self.axis(axis)?;
        if self.shape[a] != 1 {
            return Err(LayoutError::SqueezeNotOne {
                axis: a,
                len: self.shape[a],
            });
        }
        let keep: Vec<usize> = (0..self.ndim()).filter(|&k| k != a).collect();
        Ok(self.select_axes(&keep))
    }

    fn select_axes(&self, keep: &[usize]) -> Layout {
        Layout {
            shape: keep.iter().map(|&a| self.shape[a]).collect(),
            strides: keep.iter().map(|&a| self.strides[a]).collect(),
            offset: self.offset,
        }
    }

    /// Inserts an axis of length 1 before axis `axis` (`axis == ndim` appends; negative
    /// counts from the end of the result, as NumPy's `expand_dims`).
    ///
    /// ```
    /// let l = rucuda_array::layout::Layout::c_contiguous(&[3]).unwrap();
    /// assert_eq!(l.insert_axis(0).unwrap().shape(), &[1, 3]);
    /// assert_eq!(l.insert_axis(-1).unwrap().shape(), &[3, 1]);
    /// ```
    pub fn insert_axis(&self, axis: isize) -> Result<Layout, LayoutError> {
        let a = resolve_axis(axis, self.ndim() + 1)?;
        let mut l = self.clone();
        l.shape.insert(a, 1);
        l.strides.insert(a, 0);
        Ok(l)
    }

    /// Reverses one axis (NumPy's `flip`), a view with a negated stride.
    pub fn flip(&self, axis: isize) -> Result<Layout, LayoutError> {
        let a = self.axis(axis)?;
        let mut l = self.clone();
        if l.shape[a] > 1 {
            l.offset = (l.offset as isize + (l.shape[a] as isize - 1) * l.strides[a]) as usize;
        }
        l.strides[a] = -l.strides[a];
        Ok(l)
    }

    /// Merges axes that are laid out one after the other (for every layout in `layouts`
    /// at once, which must share `shape`), and drops axes of length 1: the fewest axes
    /// that describe the same element order. Used to keep strided kernels short.
    ///
    /// Returns the merged shape and each layout's merged strides.
    ///
    /// ```
    /// use rucuda_array::layout::Layout;
    /// let a = Layout::c_contiguous(&[4, 5, 6]).unwrap();
    /// let (shape, strides) = Layout::coalesce(&[&a]);
    /// assert_eq!(shape, vec![120]);
    /// assert_eq!(strides, vec![vec![1]]);
    /// ```
    pub fn coalesce(layouts: &[&Layout]) -> (Vec<usize>, Vec<Vec<isize>>) {
        let Some(first) = layouts.first() else {
            return (Vec::new(), Vec::new());
        };
        let keep: Vec<usize> = (0..first.ndim()).filter(|&a| first.shape[a] != 1).collect();
        let mut shape: Vec<usize> = Vec::new();
        let mut strides: Vec<Vec<isize>> = vec![Vec::new(); layouts.len()];
        for &a in &keep {
            let d = first.shape[a];
            let mergeable = !shape.is_empty()
                && layouts.iter().enumerate().all(|(k, l)| {
                    let prev = strides[k].last().copied().unwrap_or(0);
                    prev == l.strides[a] * d as isize
                });
            if mergeable {
                if let Some(last) = shape.last_mut() {
                    *last *= d;
                }
                for (k, l) in layouts.iter().enumerate() {
                    if let Some(s) = strides[k].last_mut() {
                        *s = l.strides[a];
                    }
                }
            } else {
                shape.push(d);
                for (k, l) in layouts.iter().enumerate() {
                    strides[k].push(l.strides[a]);
                }
            }
        }
        (shape, strides)
    }
}

/// Resolves `axis` (negative counts from the end) against `ndim` axes.
pub(crate) fn resolve_axis(axis: isize, ndim: usize) -> Result<usize, LayoutError> {
    let a = if axis < 0 { axis + ndim as isize } else { axis };
    if a < 0 || a as usize >= ndim {
        return Err(LayoutError::AxisOutOfRange { axis, ndim });
    }
    Ok(a as usize)
}

/// Iterator over the buffer elements of a layout in row-major order; see
/// [`Layout::element_offsets`].
#[derive(Debug, Clone)]
pub struct ElementOffsets<'a> {
    layout: &'a Layout,
    index: Vec<usize>,
    next: Option<isize>,
}

impl Iterator for ElementOffsets<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let current = self.next?;
        let l = self.layout;
        let mut off = current;
        let mut axis = l.ndim();
        self.next = loop {
            if axis == 0 {
                break None;
            }
            axis -= 1;
            self.index[axis] += 1;
            off += l.strides[axis];
            if self.index[axis] < l.shape[axis] {
                break Some(off);
            }
            off -= l.strides[axis] * l.shape[axis] as isize;
            self.index[axis] = 0;
        };
        Some(current as usize)
    }
}
