//! [`IndexingKey`]: the built-in kernels of masks, `nonzero`, axis gathers and scatters,
//! `multi_take_put` and `mul_add` (what [`OpKey::Indexing`](super::OpKey::Indexing)
//! holds), and the [`ElementwiseSpec`] each generates. The CUDA text is in `cuda/`
//! (`axis_index.cuh`: index modes; `mask_compact.cuh`, `nonzero_*.cuh`, `axis_split.cuh`,
//! `take_put*.cuh`: the operations).

use super::device_code::{binary_c, cast_expr, kernel_name, preamble};
use super::operations::BinaryOp;
use super::typing::arith_type;
use crate::codegen::template::render_inline;
use crate::codegen::ArgSpec;
use crate::dtype::DType;
use crate::elementwise::ElementwiseSpec;
use crate::error::{ArrayError, Result};

const AXIS_INDEX: &str = include_str!("cuda/axis_index.cuh");
const MASK_COMPACT: &str = include_str!("cuda/mask_compact.cuh");
const NONZERO_COORDS: &str = include_str!("cuda/nonzero_coords.cuh");
const NONZERO_AXIS: &str = include_str!("cuda/nonzero_axis.cuh");
const AXIS_SPLIT: &str = include_str!("cuda/axis_split.cuh");
const TAKE_PUT: &str = include_str!("cuda/take_put.cuh");
const TAKE_PUT_MOVE: &str = include_str!("cuda/take_put_move.cuh");

/// How axis gathers and scatters treat indices outside `-len..len` (NumPy's `mode`).
///
/// Every mode keeps every access inside the array: `Raise` checks on the device, reads or
/// writes element 0 of the axis instead, and the call returns
/// [`ArrayError::IndexOutOfBounds`] once the kernel has finished (a scatter in `Raise`
/// mode may then have written some elements, as NumPy's `put` may have).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TakeMode {
    /// Negative indices count from the end; anything else outside the axis is an error
    /// (NumPy's default `mode='raise'`).
    #[default]
    Raise,
    /// Indices wrap around, Python's modulo (`mode='wrap'`).
    Wrap,
    /// Indices are clamped to `0..=len-1`, negative ones to 0 (`mode='clip'`).
    Clip,
}

impl From<super::IndexMode> for TakeMode {
    fn from(m: super::IndexMode) -> TakeMode {
        match m {
            super::IndexMode::Clip => TakeMode::Clip,
            super::IndexMode::Wrap => TakeMode::Wrap,
        }
    }
}

/// The identity of a mask, axis-indexing or `mul_add` kernel.
///
/// ```
/// use rucuda_array::ops::{IndexingKey, OpKey, TakeMode};
/// use rucuda_array::DType;
/// let k = OpKey::Indexing(IndexingKey::TakeAxis { dtype: DType::F32, index: DType::I64,
///                                                 mode: TakeMode::Raise });
/// let src = k.render(&rucuda_array::elementwise::Variant::Contiguous).unwrap();
/// assert!(src.source.contains("rucuda_axis_raise"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IndexingKey {
    /// `out[i] = (i64)(a[i] != 0)`: the flags a mask compaction scans.
    Flags {
        /// Type of `a`.
        dtype: DType,
    },
    /// `if (m[i] != 0) out[pos[i] - 1] = a[i]` with `pos` the inclusive scan of the flags.
    Compact {
        /// Element type.
        dtype: DType,
        /// Type of the mask.
        mask: DType,
    },
    /// For `a[i] != 0`: the row-major coordinates of `i` in `ndim` axes into row
    /// `pos[i] - 1` of each axis' output.
    NonzeroCoords {
        /// Type of `a`.
        dtype: DType,
        /// Number of axes (1 to 64).
        ndim: u8,
    },
    /// `out[pre, q, post] = src[pre, idx[q], post]` (NumPy's `take` with an axis).
    TakeAxis {
        /// Element type.
        dtype: DType,
        /// Index type (an integer type).
        index: DType,
        /// Out-of-range indices.
        mode: TakeMode,
    },
    /// `dst[pre, idx[q], post] = v[pre, q, post]` (`a[..., idx, ...] = v`).
    PutAxis {
        /// Element type.
        dtype: DType,
        /// Index type (an integer type).
        index: DType,
        /// Out-of-range indices.
        mode: TakeMode,
    },
    /// `out[pre, q, post] = src[pre, idx[pre, q, post], post]` (NumPy's
    /// `take_along_axis`): the index array has the iteration shape (broadcast).
    TakeAlong {
        /// Element type.
        dtype: DType,
        /// Index type (an integer type).
        index: DType,
        /// Out-of-range indices.
        mode: TakeMode,
    },
    /// `dst[pre, idx[pre, q, post], post] = v[pre, q, post]` (NumPy's `put_along_axis`).
    PutAlong {
        /// Element type.
        dtype: DType,
        /// Index type (an integer type).
        index: DType,
        /// Out-of-range indices.
        mode: TakeMode,
    },
    /// `dst_k[didx[i]] = src_k[off_k + sidx[i]]` for `arrays` arrays (PyCUDA's
    /// `multi_take_put`).
    TakePut {
        /// Element type.
        dtype: DType,
        /// Index type (an integer type).
        index: DType,
        /// Out-of-range indices.
        mode: TakeMode,
        /// Arrays per launch (1 to 8).
        arrays: u8,
    },
    /// `out[i] = sa * a[i] + sb * b[i]` (PyCUDA's `mul_add`), not contracted.
    MulAdd {
        /// Element type.
        dtype: DType,
    },
}

fn build(
    name: String,
    args: Vec<ArgSpec>,
    operation: String,
    used: &[DType],
) -> Result<ElementwiseSpec> {
    let arg_types: Vec<DType> = args.iter().map(ArgSpec::dtype).collect();
    let mut pre = preamble(used.iter().copied(), arg_types);
    pre.push_str(AXIS_INDEX);
    ElementwiseSpec::builder(name)
        .args(args)
        .operation(operation)
        .preamble(pre)
        .build()
}

fn check_index_type(index: DType) -> Result<()> {
    if index.is_integer() {
        Ok(())
    } else {
        Err(ArrayError::UnsupportedType {
            operation: "indices (integer types only)",
            dtype: index,
        })
    }
}

fn mode_tag(mode: TakeMode) -> &'static str {
    match mode {
        TakeMode::Raise => "raise",
        TakeMode::Wrap => "wrap",
        TakeMode::Clip => "clip",
    }
}

/// The C expression of index `e` (of integer type `index`) as a `long long`, indices
/// beyond `i64::MAX` saturating (they are out of range for any array).
fn index_value(e: &str, index: DType) -> String {
    if matches!(index, DType::U64) {
        format!("rucuda_index_u64((unsigned long long)({e}))")
    } else {
        format!("((long long)({e}))")
    }
}

/// The C expression normalizing `value` into `0..len` by `mode` (`Raise`: flag pair
/// `list` of `err`).
fn normalize(value: &str, len: &str, mode: TakeMode, list: usize) -> String {
    match mode {
        TakeMode::Raise => format!("rucuda_axis_raise({value}, {len}, err + {})", 2 * list),
        TakeMode::Wrap => format!("rucuda_axis_wrap({value}, {len})"),
        TakeMode::Clip => format!("rucuda_axis_clip({value}, {len})"),
    }
}

/// The flag argument of `Raise` kernels (two words per index list: flag, first bad
/// index).
fn err_arg(mode: TakeMode) -> Option<ArgSpec> {
    (mode == TakeMode::Raise).then(|| ArgSpec::vector("err", DType::U64))
}

/// The kernels of one axis' integer indexing: a gather (`gather`) or a scatter, with one
/// index per position along the axis (`along` false: `idx[q]`, NumPy's `take` with an
/// axis) or one per element of the iteration shape (`along`: `idx[i]`, NumPy's
/// `take_along_axis`).
fn axis_kernel(
    gather: bool,
    along: bool,
    dtype: DType,
    index: DType,
    mode: TakeMode,
) -> Result<ElementwiseSpec> {
    check_index_type(index)?;
    let mut args = Vec::new();
    let (tag, moves) = if gather {
        args.push(ArgSpec::const_vector("src", dtype));
        args.push(ArgSpec::const_vector("idx", index));
        (
            if along { "take_along" } else { "take_axis" },
            "out[i] = src[(rucuda_pre * src_len + rucuda_j) * inner + rucuda_post]",
        )
    } else {
        args.push(ArgSpec::const_vector("v", dtype));
        args.push(ArgSpec::const_vector("idx", index));
        (
            if along { "put_along" } else { "put_axis" },
            "rucuda_scatter_store(&dst[(rucuda_pre * src_len + rucuda_j) * inner + rucuda_post], v[i])",
        )
    };
    args.push(ArgSpec::scalar("inner", DType::I64));
    args.push(ArgSpec::scalar("ni", DType::I64));
    args.push(ArgSpec::scalar("src_len", DType::I64));
    args.push(if gather {
        ArgSpec::vector("out", dtype)
    } else {
        ArgSpec::vector("dst", dtype)
    });
    args.extend(err_arg(mode));
    let op = render_inline(
        AXIS_SPLIT,
        &[
            (
                "NORMALIZE",
                &normalize(
                    &index_value(if along { "idx[i]" } else { "idx[rucuda_q]" }, index),
                    "src_len",
                    mode,
                    0,
                ),
            ),
            ("MOVE", moves),
        ],
    )?;
    build(
        kernel_name(&format!("{tag}_{}", mode_tag(mode)), &[dtype, index]),
        args,
        op,
        &[dtype, index],
    )
}

impl IndexingKey {
    /// The kernel definition this key stands for (argument order is the launch order).
    ///
    /// ```
    /// use rucuda_array::ops::IndexingKey;
    /// use rucuda_array::DType;
    /// let s = IndexingKey::NonzeroCoords { dtype: DType::F64, ndim: 3 }.spec().unwrap();
    /// assert_eq!(s.args().len(), 6); // a, pos, count, d1, d2, out
    /// ```
    pub fn spec(&self) -> Result<ElementwiseSpec> {
        match *self {
            IndexingKey::Flags { dtype } => build(
                kernel_name("nonzero_flags", &[dtype]),
                vec![
                    ArgSpec::const_vector("a", dtype),
                    ArgSpec::vector("out", DType::I64),
                    ArgSpec::vector("flags", DType::U8),
                ],
                // The flags are a private copy of the test, read by the kernels that use
                // the positions: re-reading `a` there could see other values (another
                // stream may write it in between) and disagree with the count.
                format!(
                    "const bool rucuda_f = {}; out[i] = rucuda_f; flags[i] = rucuda_f",
                    cast_expr("a[i]", dtype, DType::Bool)
                ),
                &[dtype],
            ),
            IndexingKey::Compact { dtype, mask } => build(
                kernel_name("compact", &[dtype, mask]),
                vec![
                    ArgSpec::const_vector("a", dtype),
                    ArgSpec::const_vector("flags", DType::U8),
                    ArgSpec::const_vector("pos", DType::I64),
                    ArgSpec::vector("out", dtype),
                ],
                render_inline(MASK_COMPACT, &[("TEST", "flags[i] != 0")])?,
                &[dtype, mask],
            ),
            IndexingKey::NonzeroCoords { dtype, ndim } => {
                if ndim == 0 || ndim > 64 {
                    return Err(ArrayError::InvalidArgument(format!(
                        "nonzero of {ndim} axes (1 to 64 are supported)"
                    )));
                }
                let mut args = vec![
                    ArgSpec::const_vector("flags", DType::U8),
                    ArgSpec::const_vector("pos", DType::I64),
                    ArgSpec::scalar("count", DType::I64),
                ];
                args.extend((1..ndim).map(|k| ArgSpec::scalar(format!("d{k}"), DType::I64)));
                args.push(ArgSpec::vector("out", DType::I64));
                let mut per_axis = String::new();
                for k in (1..ndim).rev() {
                    per_axis.push_str(&render_inline(NONZERO_AXIS, &[("K", &k.to_string())])?);
                }
                let op = render_inline(
                    NONZERO_COORDS,
                    &[("TEST", "flags[i] != 0"), ("PER_AXIS", &per_axis)],
                )?;
                build(
                    kernel_name(&format!("nonzero{ndim}"), &[dtype]),
                    args,
                    op,
                    &[dtype],
                )
            }
            IndexingKey::TakeAxis { dtype, index, mode } => {
                axis_kernel(true, false, dtype, index, mode)
            }
            IndexingKey::PutAxis { dtype, index, mode } => {
                axis_kernel(false, false, dtype, index, mode)
            }
            IndexingKey::TakeAlong { dtype, index, mode } => {
                axis_kernel(true, true, dtype, index, mode)
            }
            IndexingKey::PutAlong { dtype, index, mode } => {
                axis_kernel(false, true, dtype, index, mode)
            }
            IndexingKey::TakePut {
                dtype,
                index,
                mode,
                arrays,
            } => {
                check_index_type(index)?;
                if !(1..=8).contains(&arrays) {
                    return Err(ArrayError::InvalidArgument(format!(
                        "multi_take_put kernels take 1 to 8 arrays, not {arrays}"
                    )));
                }
                let mut args = vec![
                    ArgSpec::const_vector("didx", index),
                    ArgSpec::const_vector("sidx", index),
                    ArgSpec::scalar("src_len", DType::I64),
                    ArgSpec::scalar("dst_len", DType::I64),
                ];
                args.extend((0..arrays).map(|k| ArgSpec::const_vector(format!("src{k}"), dtype)));
                args.extend((0..arrays).map(|k| ArgSpec::scalar(format!("off{k}"), DType::I64)));
                args.extend((0..arrays).map(|k| ArgSpec::vector(format!("dst{k}"), dtype)));
                args.extend(err_arg(mode));
                let mut moves = String::new();
                for k in 0..arrays {
                    let kk = k.to_string();
                    let src = normalize(
                        &format!("((long long)((unsigned long long)off{k} + (unsigned long long)rucuda_s))"),
                        "src_len",
                        mode,
                        1,
                    );
                    moves.push_str(&render_inline(
                        TAKE_PUT_MOVE,
                        &[("K", &kk), ("NORMALIZE", &src)],
                    )?);
                }
                let op = render_inline(
                    TAKE_PUT,
                    &[
                        ("SOURCE_INDEX", &index_value("sidx[i]", index)),
                        (
                            "DEST_INDEX",
                            &normalize(&index_value("didx[i]", index), "dst_len", mode, 0),
                        ),
                        ("MOVES", &moves),
                    ],
                )?;
                build(
                    kernel_name(
                        &format!("take_put{arrays}_{}", mode_tag(mode)),
                        &[dtype, index],
                    ),
                    args,
                    op,
                    &[dtype, index],
                )
            }
            IndexingKey::MulAdd { dtype } => {
                if dtype == DType::Bool {
                    return Err(ArrayError::UnsupportedType {
                        operation: "mul_add",
                        dtype,
                    });
                }
                let ax = binary_c(BinaryOp::Mul, "sa", dtype, "a[i]", dtype, dtype, dtype);
                let by = binary_c(BinaryOp::Mul, "sb", dtype, "b[i]", dtype, dtype, dtype);
                let e = binary_c(BinaryOp::Add, &ax, dtype, &by, dtype, dtype, dtype);
                build(
                    kernel_name("mul_add", &[dtype]),
                    vec![
                        ArgSpec::scalar("sa", dtype),
                        ArgSpec::const_vector("a", dtype),
                        ArgSpec::scalar("sb", dtype),
                        ArgSpec::const_vector("b", dtype),
                        ArgSpec::vector("out", dtype),
                    ],
                    format!("out[i] = {e}"),
                    &[dtype, arith_type(dtype)],
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elementwise::Variant;

    fn source(k: IndexingKey, v: &Variant) -> String {
        k.spec().unwrap().render(v).unwrap().source
    }

    #[test]
    fn every_key_renders_in_its_variants() {
        use DType::*;
        for mode in [TakeMode::Raise, TakeMode::Wrap, TakeMode::Clip] {
            for index in [I8, U16, I32, I64, U64] {
                let t = IndexingKey::TakeAxis {
                    dtype: C64,
                    index,
                    mode,
                };
                let s = source(t, &Variant::Contiguous);
                let call = format!("rucuda_j = rucuda_axis_{}(", mode_tag(mode));
                assert!(s.contains(&call), "{s}");
                let p = IndexingKey::PutAxis {
                    dtype: F16,
                    index,
                    mode,
                };
                let strided = Variant::Strided {
                    ndim: 3,
                    strided: vec![true, false, false]
                        .into_iter()
                        .chain((mode == TakeMode::Raise).then_some(false))
                        .collect(),
                };
                source(p, &strided);
                let tp = IndexingKey::TakePut {
                    dtype: F64,
                    index,
                    mode,
                    arrays: 3,
                };
                let s = source(tp, &Variant::Contiguous);
                assert!(s.contains("rucuda_scatter_store(&dst2[rucuda_d], src2["));
            }
        }
        // Along an axis: one index per element of the iteration shape, read as idx[i]
        // (in the strided variant through the index array's own strides).
        let along = IndexingKey::TakeAlong {
            dtype: F32,
            index: I64,
            mode: TakeMode::Wrap,
        };
        let s = source(along, &Variant::Contiguous);
        assert!(s.contains("rucuda_axis_wrap(((long long)(idx[i]))"), "{s}");
        assert!(s.contains("take_along"), "{s}");
        let strided_idx = Variant::Strided {
            ndim: 2,
            strided: vec![false, true, false],
        };
        let s = source(along, &strided_idx);
        assert!(
            !s.contains("(idx[i])"),
            "the strided index array is not read as idx[i]: {s}"
        );
        let put = IndexingKey::PutAlong {
            dtype: C128,
            index: U16,
            mode: TakeMode::Raise,
        };
        let s = source(put, &Variant::Contiguous);
        assert!(s.contains("rucuda_scatter_store(&dst[(rucuda_pre * src_len + rucuda_j)"));
        assert!(s.contains("put_along"), "{s}");
        let s = source(
            IndexingKey::NonzeroCoords {
                dtype: F32,
                ndim: 3,
            },
            &Variant::Contiguous,
        );
        assert!(s.contains("out[2 * count + rucuda_p] = rucuda_r % d2; rucuda_r /= d2;"));
        assert!(s.contains("out[1 * count + rucuda_p]"));
        let s = source(
            IndexingKey::Compact {
                dtype: I8,
                mask: Bool,
            },
            &Variant::Contiguous,
        );
        assert!(s.contains("out[pos[i] - 1] = a[i]"));
        let m = IndexingKey::MulAdd { dtype: F32 };
        assert!(m.spec().unwrap().vectorizable());
        let s = source(m, &Variant::Vectorized);
        assert!(s.contains("__fmul_rn") && s.contains("__fadd_rn"));
        assert!(source(IndexingKey::Flags { dtype: BF16 }, &Variant::Vectorized).contains("!= 0"));
    }

    #[test]
    fn bad_keys_are_errors() {
        use DType::*;
        let bad = IndexingKey::TakeAxis {
            dtype: F32,
            index: F32,
            mode: TakeMode::Clip,
        };
        assert!(matches!(
            bad.spec(),
            Err(ArrayError::UnsupportedType { .. })
        ));
        assert!(IndexingKey::NonzeroCoords {
            dtype: F32,
            ndim: 0
        }
        .spec()
        .is_err());
        assert!(IndexingKey::MulAdd { dtype: Bool }.spec().is_err());
        let tp = IndexingKey::TakePut {
            dtype: F32,
            index: I32,
            mode: TakeMode::Wrap,
            arrays: 9,
        };
        assert!(tp.spec().is_err());
    }
}
