//! Reshaping without moving data: new strides when the old layout allows them (row-major
//! element order is kept, as NumPy's `reshape` with `order='C'`), else
//! [`LayoutError::NeedsCopy`].

use super::{element_count, Layout, LayoutError};

/// Resolves a requested shape with at most one `-1` (inferred) against `len` elements.
///
/// ```
/// use rucuda_array::layout::resolve_shape;
/// assert_eq!(resolve_shape(&[-1, 4], &[3, 4]).unwrap(), vec![3, 4]);
/// assert!(resolve_shape(&[-1, 5], &[3, 4]).is_err());
/// ```
pub fn resolve_shape(requested: &[isize], from: &[usize]) -> Result<Vec<usize>, LayoutError> {
    let len = element_count(from)?;
    let refuse = || LayoutError::ReshapeSize {
        from: from.to_vec(),
        len,
        to: format!("{requested:?}"),
    };
    let mut inferred = None;
    let mut known = 1usize;
    for (k, &d) in requested.iter().enumerate() {
        if d == -1 {
            if inferred.replace(k).is_some() {
                return Err(refuse());
            }
        } else if d < 0 {
            return Err(refuse());
        } else {
            known = known.checked_mul(d as usize).ok_or_else(refuse)?;
        }
    }
    let mut shape: Vec<usize> = requested.iter().map(|&d| d.max(0) as usize).collect();
    match inferred {
        Some(k) => {
            if known == 0 || len % known != 0 {
                return Err(refuse());
            }
            shape[k] = len / known;
        }
        None if known != len => return Err(refuse()),
        None => {}
    }
    Ok(shape)
}

impl Layout {
    /// The same elements in row-major order under a new shape (with at most one `-1`),
    /// as a view; [`LayoutError::NeedsCopy`] when the strides cannot express it.
    ///
    /// ```
    /// use rucuda_array::layout::{Layout, LayoutError};
    /// let l = Layout::c_contiguous(&[4, 6]).unwrap();
    /// assert_eq!(l.reshape(&[2, -1, 3]).unwrap().strides(), &[12, 3, 1]);
    /// // A transposed matrix cannot be flattened without a copy.
    /// assert!(matches!(l.transpose().reshape(&[24]), Err(LayoutError::NeedsCopy { .. })));
    /// ```
    pub fn reshape(&self, shape: &[isize]) -> Result<Layout, LayoutError> {
        let new_shape = resolve_shape(shape, &self.shape)?;
        self.reshape_exact(&new_shape)
    }

    /// [`Layout::reshape`] with every length given.
    pub fn reshape_exact(&self, new_shape: &[usize]) -> Result<Layout, LayoutError> {
        let len = self.len();
        if element_count(new_shape)? != len {
            return Err(LayoutError::ReshapeSize {
                from: self.shape.clone(),
                len,
                to: format!("{new_shape:?}"),
            });
        }
        if len == 0 || self.is_c_contiguous() {
            let mut l = Layout::c_contiguous(new_shape)?;
            l.offset = self.offset;
            return Ok(l);
        }
        let strides = self
            .reshape_strides(new_shape)
            .ok_or_else(|| LayoutError::NeedsCopy {
                from: self.shape.clone(),
                strides: self.strides.clone(),
                to: new_shape.to_vec(),
            })?;
        Ok(Layout {
            shape: new_shape.to_vec(),
            strides,
            offset: self.offset,
        })
    }

    /// Flattens to one axis in row-major order (a view where possible).
    pub fn ravel(&self) -> Result<Layout, LayoutError> {
        self.reshape_exact(&[self.len()])
    }

    /// Strides for `new` (same element count, not empty) or `None`.
    ///
    /// Old axes of length 1 are dropped; then old and new axes are matched in groups
    /// whose lengths have equal products. Inside an old group every axis must step
    /// exactly over the next one (`stride[k] == stride[k+1] * len[k+1]`), so the group is
    /// one run of equally spaced elements that the new group can cut differently.
    fn reshape_strides(&self, new: &[usize]) -> Option<Vec<isize>> {
        let old: Vec<(usize, isize)> = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(&d, _)| d != 1)
            .map(|(&d, &s)| (d, s))
            .collect();
        let mut strides = vec![1isize; new.len()];
        let (mut i, mut j) = (0usize, 0usize);
        while i < old.len() && j < new.len() {
            let (i0, j0) = (i, j);
            let mut pa = old[i].0;
            let mut pb = new[j];
            while pa != pb {
                if pa < pb {
                    i += 1;
                    pa *= old.get(i)?.0;
                } else {
                    j += 1;
                    pb *= *new.get(j)?;
                }
            }
            for k in i0..i {
                if old[k].1 != old[k + 1].1 * old[k + 1].0 as isize {
                    return None;
                }
            }
            strides[j] = old[i].1;
            for k in (j0..j).rev() {
                strides[k] = strides[k + 1] * new[k + 1] as isize;
            }
            i += 1;
            j += 1;
        }
        // Whatever is left of the new shape are axes of length 1; any stride will do.
        Some(strides)
    }
}
