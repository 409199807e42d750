//! [`LayoutError`]: what a shape or stride operation can refuse, with the shapes involved.

/// Why a layout operation (slicing, reshaping, broadcasting, ...) was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// An axis number past the array's dimensions.
    #[error("axis {axis} is out of range for an array of {ndim} dimensions")]
    AxisOutOfRange {
        /// The axis asked for (negative counts from the end).
        axis: isize,
        /// The array's number of dimensions.
        ndim: usize,
    },
    /// An integer index past the axis' length.
    #[error("index {index} is out of range for axis {axis} of length {len}")]
    IndexOutOfRange {
        /// The index asked for (negative counts from the end).
        index: isize,
        /// The axis.
        axis: usize,
        /// Its length.
        len: usize,
    },
    /// A slice with step 0.
    #[error("slice step cannot be zero (axis {axis})")]
    ZeroStep {
        /// The axis.
        axis: usize,
    },
    /// More indices than dimensions, or more than one ellipsis.
    #[error("too many indices: {given} given for an array of {ndim} dimensions")]
    TooManyIndices {
        /// Indices that consume an axis.
        given: usize,
        /// The array's number of dimensions.
        ndim: usize,
    },
    /// More than one `Ellipsis` in one slicing.
    #[error("an index can only have a single ellipsis")]
    MultipleEllipses,
    /// A reshape to a different number of elements, or an unresolvable `-1`.
    #[error("cannot reshape an array of shape {from:?} ({len} elements) into shape {to}")]
    ReshapeSize {
        /// The array's shape.
        from: Vec<usize>,
        /// Its element count.
        len: usize,
        /// The requested shape as written (with `-1` for an inferred axis).
        to: String,
    },
    /// A reshape (or ravel) that no strides can express without moving data.
    #[error(
        "reshaping shape {from:?} with strides {strides:?} into {to:?} needs a copy \
         (the data is not laid out contiguously enough for a view)"
    )]
    NeedsCopy {
        /// The array's shape.
        from: Vec<usize>,
        /// Its strides in elements.
        strides: Vec<isize>,
        /// The requested shape.
        to: Vec<usize>,
    },
    /// Two shapes that do not broadcast together.
    #[error(
        "shapes {a:?} and {b:?} do not broadcast: axis {axis} (from the end) has {len_a} and {len_b}"
    )]
    Broadcast {
        /// The first shape.
        a: Vec<usize>,
        /// The second shape.
        b: Vec<usize>,
        /// The axis counted from the end (-1 is the last).
        axis: isize,
        /// Its length in `a`.
        len_a: usize,
        /// Its length in `b`.
        len_b: usize,
    },
    /// A shape that cannot be broadcast to the requested one.
    #[error("shape {from:?} cannot be broadcast to {to:?}")]
    BroadcastTo {
        /// The array's shape.
        from: Vec<usize>,
        /// The target shape.
        to: Vec<usize>,
    },
    /// Axes that are not a permutation of `0..ndim`.
    #[error("axes {axes:?} are not a permutation of 0..{ndim}")]
    InvalidPermutation {
        /// The axes given.
        axes: Vec<usize>,
        /// The array's number of dimensions.
        ndim: usize,
    },
    /// Squeezing an axis whose length is not 1.
    #[error("cannot squeeze axis {axis} of length {len} (only length-1 axes)")]
    SqueezeNotOne {
        /// The axis.
        axis: usize,
        /// Its length.
        len: usize,
    },
    /// The element count or an offset does not fit in 64 bits.
    #[error("shape {shape:?} overflows a 64-bit element count or offset")]
    Overflow {
        /// The offending shape.
        shape: Vec<usize>,
    },
    /// A layout that reaches outside its buffer.
    #[error(
        "layout (shape {shape:?}, strides {strides:?}, offset {offset}) reaches element \
         {reach} outside a buffer of {buffer_len} elements"
    )]
    OutOfBounds {
        /// Its shape.
        shape: Vec<usize>,
        /// Its strides.
        strides: Vec<isize>,
        /// Its offset.
        offset: usize,
        /// The element it would reach (may be negative).
        reach: i128,
        /// The buffer's length.
        buffer_len: usize,
    },
    /// An `order` the operation does not take (`K` for a reshape, an unknown letter).
    #[error("{operation} does not take order {order:?} (C, F, A or K as NumPy)")]
    InvalidOrder {
        /// The operation.
        operation: &'static str,
        /// The order given.
        order: String,
    },
    /// A view as an element type of another size that the layout cannot express.
    #[error(
        "cannot view an array of shape {shape:?} (strides {strides:?}) of {from_bytes}-byte \
         elements as {to_bytes}-byte elements: {reason}"
    )]
    ViewItemSize {
        /// The array's shape.
        shape: Vec<usize>,
        /// Its strides, in elements of the old type.
        strides: Vec<isize>,
        /// The old element size in bytes.
        from_bytes: usize,
        /// The new element size in bytes.
        to_bytes: usize,
        /// What is wrong, naming the axis and sizes.
        reason: String,
    },
    /// Shape and strides of different lengths.
    #[error("shape has {shape} dimensions but strides have {strides}")]
    RankMismatch {
        /// Dimensions of the shape.
        shape: usize,
        /// Entries of the strides.
        strides: usize,
    },
}
