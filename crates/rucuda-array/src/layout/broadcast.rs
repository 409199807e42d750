//! Broadcasting (NumPy's rules): shapes are aligned at their last axes; an axis of length
//! 1 (or a missing one) stretches to the other's length with stride 0.

use super::{element_count, Layout, LayoutError};

/// The broadcast shape of two shapes, or an error naming both.
///
/// ```
/// use rucuda_array::layout::broadcast_shapes;
/// assert_eq!(broadcast_shapes(&[8, 1, 6, 1], &[7, 1, 5]).unwrap(), vec![8, 7, 6, 5]);
/// let e = broadcast_shapes(&[2, 3], &[4]).unwrap_err();
/// assert!(e.to_string().contains("[2, 3] and [4]"));
/// ```
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Vec<usize>, LayoutError> {
    let n = a.len().max(b.len());
    let mut out = vec![0usize; n];
    for k in 0..n {
        let da = if k < a.len() { a[a.len() - 1 - k] } else { 1 };
        let db = if k < b.len() { b[b.len() - 1 - k] } else { 1 };
        out[n - 1 - k] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(LayoutError::Broadcast {
                    a: a.to_vec(),
                    b: b.to_vec(),
                    axis: -(k as isize) - 1,
                    len_a: da,
                    len_b: db,
                })
            }
        };
    }
    element_count(&out)?;
    Ok(out)
}

/// The broadcast shape of any number of shapes (the shape of a 0-d array for none).
///
/// ```
/// use rucuda_array::layout::broadcast_shapes_many;
/// let s = broadcast_shapes_many(&[&[3, 1][..], &[1, 4], &[4]]).unwrap();
/// assert_eq!(s, vec![3, 4]);
/// ```
pub fn broadcast_shapes_many(shapes: &[&[usize]]) -> Result<Vec<usize>, LayoutError> {
    let mut out: Vec<usize> = Vec::new();
    for s in shapes {
        out = broadcast_shapes(&out, s)?;
    }
    Ok(out)
}

impl Layout {
    /// A view of this layout stretched to `shape` (stride 0 on the broadcast axes).
    ///
    /// ```
    /// use rucuda_array::layout::Layout;
    /// let l = Layout::c_contiguous(&[3, 1]).unwrap().broadcast_to(&[2, 3, 4]).unwrap();
    /// assert_eq!(l.strides(), &[0, 1, 0]);
    /// assert!(Layout::c_contiguous(&[3]).unwrap().broadcast_to(&[4]).is_err());
    /// ```
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Layout, LayoutError> {
        let refuse = || LayoutError::BroadcastTo {
            from: self.shape.clone(),
            to: shape.to_vec(),
        };
        if shape.len() < self.ndim() {
            return Err(refuse());
        }
        element_count(shape)?;
        let lead = shape.len() - self.ndim();
        let mut strides = vec![0isize; shape.len()];
        for (k, &d) in shape.iter().enumerate().skip(lead) {
            let (od, os) = (self.shape[k - lead], self.strides[k - lead]);
            strides[k] = if od == d {
                os
            } else if od == 1 {
                0
            } else {
                return Err(refuse());
            };
        }
        Ok(Layout {
            shape: shape.to_vec(),
            strides,
            offset: self.offset,
        })
    }
}
