//! Basic indexing with NumPy's semantics: integers, ranges with steps (negative steps
//! walk backwards from `start`, unlike ndarray's `s![]`), new axes and an ellipsis.

use super::{Layout, LayoutError};

/// A slice of one axis, `start:stop:step` in NumPy's notation. `None` bounds take the
/// defaults for the step's direction; negative bounds count from the end; bounds past
/// either end are clamped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SliceRange {
    /// First index (`None`: 0, or the last index for a negative step).
    pub start: Option<isize>,
    /// Index to stop before (`None`: past the end in the step's direction).
    pub stop: Option<isize>,
    /// Step, never 0.
    pub step: isize,
}

impl SliceRange {
    /// Resolves against an axis of length `len`: the first index and the count of
    /// selected indices (NumPy's `PySlice_AdjustIndices`).
    ///
    /// ```
    /// use rucuda_array::layout::SliceRange;
    /// let r = SliceRange { start: None, stop: None, step: -2 };
    /// assert_eq!(r.resolve(5, 0).unwrap(), (4, 3)); // 4, 2, 0
    /// let r = SliceRange { start: Some(-2), stop: Some(100), step: 1 };
    /// assert_eq!(r.resolve(5, 0).unwrap(), (3, 2));
    /// ```
    pub fn resolve(&self, len: usize, axis: usize) -> Result<(isize, usize), LayoutError> {
        let step = self.step;
        if step == 0 {
            return Err(LayoutError::ZeroStep { axis });
        }
        let len = len as isize;
        let adjust = |v: isize, lo: isize, hi: isize| -> isize {
            let v = if v < 0 { v + len } else { v };
            v.clamp(lo, hi)
        };
        let (start, stop) = if step > 0 {
            (
                self.start.map_or(0, |s| adjust(s, 0, len)),
                self.stop.map_or(len, |s| adjust(s, 0, len)),
            )
        } else {
            (
                self.start.map_or(len - 1, |s| adjust(s, -1, len - 1)),
                self.stop.map_or(-1, |s| adjust(s, -1, len - 1)),
            )
        };
        let count = if step > 0 {
            if stop > start {
                (stop - start - 1) / step + 1
            } else {
                0
            }
        } else if start > stop {
            (start - stop - 1) / (-step) + 1
        } else {
            0
        };
        Ok((start, count as usize))
    }
}

/// One entry of a slicing: what happens to the next axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SliceArg {
    /// Select one index and drop the axis (negative counts from the end).
    Index(isize),
    /// Keep the axis, sliced.
    Range(SliceRange),
    /// Keep the axis whole (`:`).
    All,
    /// Insert a new axis of length 1 (`np.newaxis`); consumes no axis.
    NewAxis,
    /// As many whole axes as needed (`...`); at most one per slicing.
    Ellipsis,
}

impl SliceArg {
    /// `index` (drops the axis).
    pub fn index(index: isize) -> SliceArg {
        SliceArg::Index(index)
    }

    /// `start..stop` with step 1.
    pub fn range(start: isize, stop: isize) -> SliceArg {
        SliceArg::Range(SliceRange {
            start: Some(start),
            stop: Some(stop),
            step: 1,
        })
    }

    /// `start:stop:step` with optional bounds.
    ///
    /// ```
    /// use rucuda_array::layout::SliceArg;
    /// let reverse = SliceArg::stepped(None, None, -1); // ::-1
    /// # let _ = reverse;
    /// ```
    pub fn stepped(start: Option<isize>, stop: Option<isize>, step: isize) -> SliceArg {
        SliceArg::Range(SliceRange { start, stop, step })
    }
}

impl From<isize> for SliceArg {
    fn from(i: isize) -> SliceArg {
        SliceArg::Index(i)
    }
}

impl From<std::ops::Range<isize>> for SliceArg {
    fn from(r: std::ops::Range<isize>) -> SliceArg {
        SliceArg::range(r.start, r.end)
    }
}

impl From<std::ops::RangeFrom<isize>> for SliceArg {
    fn from(r: std::ops::RangeFrom<isize>) -> SliceArg {
        SliceArg::stepped(Some(r.start), None, 1)
    }
}

impl From<std::ops::RangeTo<isize>> for SliceArg {
    fn from(r: std::ops::RangeTo<isize>) -> SliceArg {
        SliceArg::stepped(None, Some(r.end), 1)
    }
}

impl From<std::ops::RangeFull> for SliceArg {
    fn from(_: std::ops::RangeFull) -> SliceArg {
        SliceArg::All
    }
}

impl Layout {
    /// Applies basic indexing (NumPy's `a[...]` with integers, slices, `newaxis` and
    /// `...`). Axes not mentioned are kept whole.
    ///
    /// ```
    /// use rucuda_array::layout::{Layout, SliceArg};
    /// let l = Layout::c_contiguous(&[3, 4, 5]).unwrap();
    /// let v = l.slice(&[SliceArg::Ellipsis, SliceArg::index(-1), SliceArg::NewAxis]).unwrap();
    /// assert_eq!(v.shape(), &[3, 4, 1]);
    /// assert_eq!(v.offset(), 4);
    /// assert!(l.slice(&[SliceArg::index(3)]).is_err());
    /// ```
    pub fn slice(&self, args: &[SliceArg]) -> Result<Layout, LayoutError> {
        let consuming = args
            .iter()
            .filter(|a| matches!(a, SliceArg::Index(_) | SliceArg::Range(_) | SliceArg::All))
            .count();
        let ellipses = args
            .iter()
            .filter(|a| matches!(a, SliceArg::Ellipsis))
            .count();
        if ellipses > 1 {
            return Err(LayoutError::MultipleEllipses);
        }
        if consuming > self.ndim() {
            return Err(LayoutError::TooManyIndices {
                given: consuming,
                ndim: self.ndim(),
            });
        }
        let mut shape = Vec::with_capacity(self.ndim() + args.len());
        let mut strides = Vec::with_capacity(self.ndim() + args.len());
        let mut offset = self.offset as isize;
        let mut axis = 0usize;
        let keep_whole = |axis: usize, shape: &mut Vec<usize>, strides: &mut Vec<isize>| {
            shape.push(self.shape[axis]);
            strides.push(self.strides[axis]);
        };
        for arg in args {
            match *arg {
                SliceArg::Index(i) => {
                    let len = self.shape[axis];
                    let r = if i < 0 { i + len as isize } else { i };
                    if r < 0 || r as usize >= len {
                        return Err(LayoutError::IndexOutOfRange {
                            index: i,
                            axis,
                            len,
                        });
                    }
                    offset += r * self.strides[axis];
                    axis += 1;
                }
                SliceArg::Range(range) => {
                    let (start, count) = range.resolve(self.shape[axis], axis)?;
                    if count > 0 {
                        offset += start * self.strides[axis];
                    }
                    shape.push(count);
                    strides.push(self.strides[axis] * range.step);
                    axis += 1;
                }
                SliceArg::All => {
                    keep_whole(axis, &mut shape, &mut strides);
                    axis += 1;
                }
                SliceArg::NewAxis => {
                    shape.push(1);
                    strides.push(0);
                }
                SliceArg::Ellipsis => {
                    let whole = self.ndim() - consuming;
                    for _ in 0..whole {
                        keep_whole(axis, &mut shape, &mut strides);
                        axis += 1;
                    }
                }
            }
        }
        while axis < self.ndim() {
            keep_whole(axis, &mut shape, &mut strides);
            axis += 1;
        }
        // An empty result may have an offset computed from indices that select nothing
        // on another axis; NumPy keeps it, and so do we (it is never dereferenced).
        Ok(Layout {
            shape,
            strides,
            offset: offset.max(0) as usize,
        })
    }
}
