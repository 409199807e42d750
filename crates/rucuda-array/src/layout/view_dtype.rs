//! The layout of a view as an element type of another size (NumPy's `view(dtype)`): the
//! last axis is contiguous and its bytes are cut into elements of the new size; the other
//! strides are rescaled.

use super::{Layout, LayoutError};

impl Layout {
    /// This layout (in elements of `from_bytes` bytes) seen as elements of `to_bytes`
    /// bytes, as NumPy's `a.view(dtype)`: with equal sizes nothing changes; otherwise the
    /// array has at least one axis, its last axis is contiguous (stride 1, or length 1)
    /// and holds a multiple of `to_bytes` bytes, which become its new length; every other
    /// axis longer than 1 has a stride (in bytes) divisible by `to_bytes`, and so does the
    /// offset of element 0. Anything else is a [`LayoutError::ViewItemSize`] naming the
    /// axis and sizes.
    ///
    /// ```
    /// use rucuda_array::layout::Layout;
    /// // A [3, 4] array of 8-byte elements seen as 4-byte ones: [3, 8].
    /// let l = Layout::c_contiguous(&[3, 4]).unwrap();
    /// let v = l.view_item_size(8, 4).unwrap();
    /// assert_eq!((v.shape(), v.strides()), (&[3usize, 8][..], &[8isize, 1][..]));
    /// // Back: [3, 8] of 4 bytes as 8 bytes is [3, 4] again.
    /// assert_eq!(v.view_item_size(4, 8).unwrap(), l);
    /// // The transpose's last axis is not contiguous.
    /// assert!(l.transpose().view_item_size(8, 4).is_err());
    /// // Rows of 3 two-byte elements (6 bytes) cannot be cut into 4-byte ones.
    /// let h = Layout::c_contiguous(&[3, 3]).unwrap();
    /// assert!(h.view_item_size(2, 4).is_err());
    /// ```
    pub fn view_item_size(
        &self,
        from_bytes: usize,
        to_bytes: usize,
    ) -> Result<Layout, LayoutError> {
        if from_bytes == to_bytes {
            return Ok(self.clone());
        }
        let refuse = |reason: String| LayoutError::ViewItemSize {
            shape: self.shape.clone(),
            strides: self.strides.clone(),
            from_bytes,
            to_bytes,
            reason,
        };
        if from_bytes == 0 || to_bytes == 0 {
            return Err(refuse("an element size is zero".into()));
        }
        let Some(last) = self.ndim().checked_sub(1) else {
            return Err(refuse(
                "a 0-d array can only be viewed as a type of the same size (as NumPy)".into(),
            ));
        };
        let (len, stride) = (self.shape[last], self.strides[last]);
        if len > 1 && stride != 1 {
            return Err(refuse(format!(
                "the last axis (axis {last}) must be contiguous, but its stride is {stride} \
                 elements"
            )));
        }
        let bytes = len as u128 * from_bytes as u128;
        if bytes % to_bytes as u128 != 0 {
            return Err(refuse(format!(
                "the last axis (axis {last}) holds {len} x {from_bytes} = {bytes} bytes, not a \
                 multiple of {to_bytes}"
            )));
        }
        let offset_bytes = self.offset as u128 * from_bytes as u128;
        if offset_bytes % to_bytes as u128 != 0 {
            return Err(refuse(format!(
                "element 0 lies at byte {offset_bytes} of the buffer, not a multiple of \
                 {to_bytes}"
            )));
        }
        let mut strides = Vec::with_capacity(self.ndim());
        for (axis, (&d, &s)) in self.shape.iter().zip(&self.strides).enumerate() {
            if axis == last {
                strides.push(1);
                continue;
            }
            let sb = s as i128 * from_bytes as i128;
            if d > 1 && !self.is_empty() && sb % to_bytes as i128 != 0 {
                return Err(refuse(format!(
                    "axis {axis} has a stride of {sb} bytes, not a multiple of {to_bytes}"
                )));
            }
            let scaled = sb / to_bytes as i128;
            strides.push(isize::try_from(scaled).map_err(|_| LayoutError::Overflow {
                shape: self.shape.clone(),
            })?);
        }
        let mut shape = self.shape.clone();
        shape[last] = (bytes / to_bytes as u128) as usize;
        super::element_count(&shape)?;
        Ok(Layout {
            shape,
            strides,
            offset: (offset_bytes / to_bytes as u128) as usize,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::SliceArg;

    #[test]
    fn sizes_scale_the_last_axis_and_the_strides() {
        // f64 [2, 3] as u8: [2, 24], strides [24, 1].
        let l = Layout::c_contiguous(&[2, 3]).unwrap();
        let v = l.view_item_size(8, 1).unwrap();
        assert_eq!(v.shape(), &[2, 24]);
        assert_eq!(v.strides(), &[24, 1]);
        // A column slice [2, 2] of a [2, 4] u16 array (row stride 4 = 8 bytes) as u32.
        let m = Layout::c_contiguous(&[2, 4]).unwrap();
        let s = m.slice(&[SliceArg::All, SliceArg::range(2, 4)]).unwrap();
        let v = s.view_item_size(2, 4).unwrap();
        assert_eq!(
            (v.shape(), v.strides(), v.offset()),
            (&[2usize, 1][..], &[2isize, 1][..], 1)
        );
        // The same slice starting at column 1: element 0 at byte 2, not a multiple of 4.
        let s1 = m.slice(&[SliceArg::All, SliceArg::range(1, 3)]).unwrap();
        let e = s1.view_item_size(2, 4).unwrap_err().to_string();
        assert!(e.contains("byte 2"), "{e}");
        // An empty last axis stays empty; an axis of length 1 may have any stride.
        let z = Layout::c_contiguous(&[3, 0]).unwrap();
        assert_eq!(z.view_item_size(4, 8).unwrap().shape(), &[3, 0]);
        let col = Layout::c_contiguous(&[4, 1]).unwrap();
        assert_eq!(col.view_item_size(8, 4).unwrap().shape(), &[4, 2]);
        // 12-byte elements (float3) as 8-byte ones: 2 x 12 = 24 = 3 x 8.
        let t = Layout::c_contiguous(&[5, 2]).unwrap();
        assert_eq!(t.view_item_size(12, 8).unwrap().shape(), &[5, 3]);
        assert_eq!(t.view_item_size(12, 8).unwrap().strides(), &[3, 1]);
    }

    #[test]
    fn refusals_name_the_axis_and_sizes() {
        let l = Layout::c_contiguous(&[3, 5]).unwrap();
        let e = l.view_item_size(2, 4).unwrap_err().to_string();
        assert!(e.contains("axis 1") && e.contains("10 bytes"), "{e}");
        let e = l.transpose().view_item_size(4, 2).unwrap_err().to_string();
        assert!(
            e.contains("must be contiguous") && e.contains("stride is 5"),
            "{e}"
        );
        let e = Layout::c_contiguous(&[])
            .unwrap()
            .view_item_size(4, 2)
            .unwrap_err();
        assert!(e.to_string().contains("0-d"), "{e}");
        // A row stride of 3 two-byte elements (6 bytes) is no multiple of 4.
        let m = Layout::c_contiguous(&[4, 3]).unwrap();
        let s = m.slice(&[SliceArg::All, SliceArg::range(0, 2)]).unwrap();
        let e = s.view_item_size(2, 4).unwrap_err().to_string();
        assert!(e.contains("axis 0") && e.contains("6 bytes"), "{e}");
        assert!(matches!(
            l.view_item_size(4, 4),
            Ok(same) if same == l
        ));
    }
}
