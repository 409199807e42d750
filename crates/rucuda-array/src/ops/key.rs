//! [`OpKey`]: what identifies a built-in kernel (a small `Copy` value: operation and
//! types, never the values of scalars), and the [`ElementwiseSpec`] each key generates.

use crate::codegen::ArgSpec;
use crate::dtype::DType;
use crate::elementwise::{ElementwiseSpec, RenderedKernel, Variant};
use crate::error::{ArrayError, Result};

use super::device_code::{binary_c, cast_expr, kernel_name, preamble, unary_c};
use super::operations::{BinaryOp, UnaryOp};
use super::typing::{arith_type, binary_types, unary_types};
use crate::codegen::template::render_inline;

const INDEX_SIGNED_CLIP: &str = include_str!("cuda/index_signed_clip.cuh");
const INDEX_SIGNED_WRAP: &str = include_str!("cuda/index_signed_wrap.cuh");
const INDEX_UNSIGNED_CLIP: &str = include_str!("cuda/index_unsigned_clip.cuh");
const INDEX_UNSIGNED_WRAP: &str = include_str!("cuda/index_unsigned_wrap.cuh");
const INDEXED_MOVES: &str = include_str!("cuda/indexed_moves.cuh");
const FREXP: &str = include_str!("cuda/frexp.cuh");
const MODF: &str = include_str!("cuda/modf.cuh");

/// How gather and scatter kernels treat indices outside `0..len` (NumPy's `mode`).
///
/// A kernel cannot raise an error, and an index past the array would read or write
/// memory it does not own, so every mode maps every index inside the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IndexMode {
    /// Indices are clamped to `0..=len-1` (negative ones to 0): NumPy's `mode='clip'`.
    #[default]
    Clip,
    /// Indices wrap around (`-1` is the last element): NumPy's `mode='wrap'`.
    Wrap,
}

/// Which two-output or mixed-type cumath function a [`OpKey::MathSpecial`] kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MathSpecial {
    /// `out = x * 2^e` with an `i32` array `e`.
    Ldexp,
    /// `out = x * 2^e` with an `i32` scalar `e`.
    LdexpScalar,
    /// `(mantissa, exponent)` with `x = mantissa * 2^exponent`, mantissa in `[0.5, 1)`.
    Frexp,
    /// `(fractional part, integral part)`, both with the sign of `x`.
    Modf,
}

/// The identity of a built-in kernel: the memo key (with the context) and the recipe of
/// its source. Scalars' values are never part of it; their types are.
///
/// ```
/// use rucuda_array::ops::OpKey;
/// use rucuda_array::elementwise::Variant;
/// use rucuda_array::DType;
/// let k = OpKey::Cast { from: DType::F32, to: DType::I8 };
/// let src = k.render(&Variant::Contiguous).unwrap();
/// assert!(src.source.contains("rucuda_float_to_i32"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OpKey {
    /// `out[i] = (to) x[i]` (also the strided copy, with `from == to`).
    Cast {
        /// Source type.
        from: DType,
        /// Destination type.
        to: DType,
    },
    /// `out[i] = value`.
    Fill {
        /// Element type.
        dtype: DType,
    },
    /// `out[i] = op(a, b)` for arrays or scalars `a`, `b`; in place: `a[i] = op(a[i], b)`.
    Binary {
        /// The operation.
        op: BinaryOp,
        /// Type of `a`.
        a: DType,
        /// Type of `b`.
        b: DType,
        /// `a` is a scalar (weak, NEP 50).
        a_scalar: bool,
        /// `b` is a scalar (weak, NEP 50).
        b_scalar: bool,
        /// Type stored (the promoted type, or the `out`/in-place array's type).
        out: DType,
        /// `a` is also the output.
        in_place: bool,
    },
    /// `out[i] = op(a[i])`; in place: `a[i] = op(a[i])`.
    Unary {
        /// The operation.
        op: UnaryOp,
        /// Type of `a`.
        a: DType,
        /// Type stored.
        out: DType,
        /// `a` is also the output.
        in_place: bool,
    },
    /// `out[i] = cond[i] ? a : b` (NumPy's `where`), or `cond[i] > 0 ? a : b` (PyCUDA's
    /// `if_positive`) when `positive`.
    Where {
        /// Type of the condition.
        cond: DType,
        /// Type of `a`.
        a: DType,
        /// Type of `b`.
        b: DType,
        /// `a` is a scalar.
        a_scalar: bool,
        /// `b` is a scalar.
        b_scalar: bool,
        /// Type stored.
        out: DType,
        /// Test `> 0` instead of `!= 0`.
        positive: bool,
    },
    /// `ldexp`, `frexp` and `modf`.
    MathSpecial {
        /// Which function.
        f: MathSpecial,
        /// The float type.
        dtype: DType,
    },
    /// `out_k[i] = src_k[index[i]]` for `arrays` sources (PyCUDA's `take`, `multi_take`).
    Take {
        /// Element type.
        dtype: DType,
        /// Index type (an integer type).
        index: DType,
        /// Out-of-range indices.
        mode: IndexMode,
        /// Number of source arrays (1 to 8).
        arrays: u8,
    },
    /// `dst_k[index[i]] = values_k[i]` for `arrays` destinations (NumPy's `put`,
    /// PyCUDA's `multi_put`).
    Put {
        /// Element type.
        dtype: DType,
        /// Index type (an integer type).
        index: DType,
        /// Out-of-range indices.
        mode: IndexMode,
        /// Number of destination arrays (1 to 8).
        arrays: u8,
    },
    /// A fused expression (see [`crate::fusion`]); the number names its interned
    /// structure.
    Fused(u64),
    /// Masks, `nonzero`, axis gathers and scatters, `multi_take_put`, `mul_add`.
    Indexing(super::IndexingKey),
}

fn arg(name: &str, dtype: DType, scalar: bool) -> ArgSpec {
    if scalar {
        ArgSpec::scalar(name, dtype)
    } else {
        ArgSpec::const_vector(name, dtype)
    }
}

fn at_i(name: &str, scalar: bool) -> String {
    if scalar {
        name.to_string()
    } else {
        format!("{name}[i]")
    }
}

fn build(
    name: String,
    args: Vec<ArgSpec>,
    operation: String,
    used: &[DType],
) -> Result<ElementwiseSpec> {
    let arg_types: Vec<DType> = args.iter().map(ArgSpec::dtype).collect();
    ElementwiseSpec::builder(name)
        .args(args)
        .operation(operation)
        .preamble(preamble(used.iter().copied(), arg_types))
        .build()
}

/// The operation of a gather or scatter: the index `idx[i]` normalized into `src_len`
/// elements by `mode` (a `long long` named `rucuda_j`), then `moves`.
fn indexed_operation(index: DType, mode: IndexMode, moves: &str) -> Result<String> {
    let signed = matches!(index, DType::I8 | DType::I16 | DType::I32 | DType::I64);
    let normalize = match (signed, mode) {
        (true, IndexMode::Wrap) => INDEX_SIGNED_WRAP,
        (true, IndexMode::Clip) => INDEX_SIGNED_CLIP,
        (false, IndexMode::Wrap) => INDEX_UNSIGNED_WRAP,
        (false, IndexMode::Clip) => INDEX_UNSIGNED_CLIP,
    };
    let statements = render_inline(normalize, &[("INDEX", "idx[i]")])?;
    Ok(render_inline(
        INDEXED_MOVES,
        &[("INDEX_STATEMENTS", &statements), ("MOVES", moves)],
    )?)
}

/// A gather (`out_k[i] = src_k[j]`, NumPy's `take`) or a scatter (`dst_k[j] = v_k[i]`,
/// `put`) of `arrays` arrays at `j`, the index `idx[i]` normalized by `mode`.
fn indexed(
    gather: bool,
    dtype: DType,
    index: DType,
    mode: IndexMode,
    arrays: u8,
) -> Result<ElementwiseSpec> {
    check_index_type(index)?;
    let (tag, read, written) = if gather {
        ("take", "src", "out")
    } else {
        ("put", "v", "dst")
    };
    let mut args = vec![
        ArgSpec::const_vector("idx", index),
        ArgSpec::scalar("src_len", DType::I64),
    ];
    args.extend((0..arrays).map(|k| ArgSpec::const_vector(format!("{read}{k}"), dtype)));
    args.extend((0..arrays).map(|k| ArgSpec::vector(format!("{written}{k}"), dtype)));
    let moves: String = (0..arrays)
        .map(|k| {
            if gather {
                format!("out{k}[i] = src{k}[rucuda_j]; ")
            } else {
                format!("rucuda_scatter_store(&dst{k}[rucuda_j], v{k}[i]); ")
            }
        })
        .collect();
    let name = kernel_name(
        &format!("{tag}{arrays}_{}", mode_tag(mode)),
        &[dtype, index],
    );
    build(
        name,
        args,
        indexed_operation(index, mode, &moves)?,
        &[dtype, index],
    )
}

impl OpKey {
    /// The kernel definition this key stands for (argument order is the launch order).
    pub fn spec(&self) -> Result<ElementwiseSpec> {
        match *self {
            OpKey::Cast { from, to } if from != to && (from.is_record() || to.is_record()) => {
                Err(ArrayError::UnsupportedType {
                    operation: "astype",
                    dtype: if from.is_record() { from } else { to },
                })
            }
            OpKey::Cast { from, to } => build(
                kernel_name("cast", &[from, to]),
                vec![ArgSpec::const_vector("x", from), ArgSpec::vector("out", to)],
                format!("out[i] = {}", cast_expr("x[i]", from, to)),
                &[from, to],
            ),
            OpKey::Fill { dtype } => build(
                kernel_name("fill", &[dtype]),
                vec![ArgSpec::scalar("v", dtype), ArgSpec::vector("out", dtype)],
                "out[i] = v".into(),
                &[dtype],
            ),
            OpKey::Binary {
                op,
                a,
                b,
                a_scalar,
                b_scalar,
                out,
                in_place,
            } => {
                let (compute, _) = binary_types(op, a, b, a_scalar, b_scalar)?;
                let name = kernel_name(
                    &format!(
                        "{}{}{}{}",
                        op.name(),
                        if in_place { "_inplace" } else { "" },
                        if a_scalar { "_sa" } else { "" },
                        if b_scalar { "_sb" } else { "" }
                    ),
                    &[a, b, out],
                );
                let types = [a, b, compute, arith_type(compute), out];
                if in_place {
                    let e = binary_c(op, "a[i]", a, &at_i("b", b_scalar), b, compute, out);
                    build(
                        name,
                        vec![ArgSpec::vector("a", a), arg("b", b, b_scalar)],
                        format!("a[i] = {e}"),
                        &types,
                    )
                } else {
                    let e = binary_c(
                        op,
                        &at_i("a", a_scalar),
                        a,
                        &at_i("b", b_scalar),
                        b,
                        compute,
                        out,
                    );
                    build(
                        name,
                        vec![
                            arg("a", a, a_scalar),
                            arg("b", b, b_scalar),
                            ArgSpec::vector("out", out),
                        ],
                        format!("out[i] = {e}"),
                        &types,
                    )
                }
            }
            OpKey::Unary {
                op,
                a,
                out,
                in_place,
            } => {
                let (compute, _) = unary_types(op, a)?;
                let tag = match op {
                    UnaryOp::Math(f) => f.c_name(),
                    UnaryOp::Neg => "negative",
                    UnaryOp::Abs => "absolute",
                    UnaryOp::LogicalNot => "logical_not",
                    UnaryOp::BitNot => "invert",
                    UnaryOp::Conj => "conj",
                    UnaryOp::Real => "real",
                    UnaryOp::Imag => "imag",
                };
                let name = kernel_name(
                    &format!("{tag}{}", if in_place { "_inplace" } else { "" }),
                    &[a, out],
                );
                let e = unary_c(op, "a[i]", a, compute, out);
                let types = [a, compute, arith_type(compute), out];
                if in_place {
                    build(
                        name,
                        vec![ArgSpec::vector("a", a)],
                        format!("a[i] = {e}"),
                        &types,
                    )
                } else {
                    build(
                        name,
                        vec![ArgSpec::const_vector("a", a), ArgSpec::vector("out", out)],
                        format!("out[i] = {e}"),
                        &types,
                    )
                }
            }
            OpKey::Where {
                cond,
                a,
                b,
                a_scalar,
                b_scalar,
                out,
                positive,
            } => {
                let test = if positive {
                    if cond.is_complex() {
                        return Err(ArrayError::UnsupportedType {
                            operation: "if_positive",
                            dtype: cond,
                        });
                    }
                    let at = arith_type(cond);
                    format!("({} > ({})0)", cast_expr("c[i]", cond, at), at.c_type())
                } else {
                    cast_expr("c[i]", cond, DType::Bool)
                };
                let name = kernel_name(
                    &format!(
                        "{}{}{}",
                        if positive { "if_positive" } else { "where" },
                        if a_scalar { "_sa" } else { "" },
                        if b_scalar { "_sb" } else { "" }
                    ),
                    &[cond, a, b, out],
                );
                build(
                    name,
                    vec![
                        ArgSpec::const_vector("c", cond),
                        arg("a", a, a_scalar),
                        arg("b", b, b_scalar),
                        ArgSpec::vector("out", out),
                    ],
                    format!(
                        "out[i] = rucuda_select<{}>({test}, {}, {})",
                        out.c_type(),
                        cast_expr(&at_i("a", a_scalar), a, out),
                        cast_expr(&at_i("b", b_scalar), b, out)
                    ),
                    &[cond, a, b, out, arith_type(cond)],
                )
            }
            OpKey::MathSpecial { f, dtype } => {
                if !dtype.is_float() {
                    return Err(ArrayError::UnsupportedType {
                        operation: "ldexp/frexp/modf",
                        dtype,
                    });
                }
                let at = arith_type(dtype);
                let x = cast_expr("x[i]", dtype, at);
                let back = |e: &str| cast_expr(e, at, dtype);
                let (tag, args, op) = match f {
                    MathSpecial::Ldexp | MathSpecial::LdexpScalar => {
                        let scalar = f == MathSpecial::LdexpScalar;
                        (
                            if scalar { "ldexp_s" } else { "ldexp" },
                            vec![
                                ArgSpec::const_vector("x", dtype),
                                arg("e", DType::I32, scalar),
                                ArgSpec::vector("out", dtype),
                            ],
                            format!(
                                "out[i] = {}",
                                back(&format!("rucuda_m_ldexp({x}, {})", at_i("e", scalar)))
                            ),
                        )
                    }
                    MathSpecial::Frexp => (
                        "frexp",
                        vec![
                            ArgSpec::const_vector("x", dtype),
                            ArgSpec::vector("mantissa", dtype),
                            ArgSpec::vector("exponent", DType::I32),
                        ],
                        render_inline(
                            FREXP,
                            &[(
                                "MANTISSA",
                                &back(&format!("rucuda_m_frexp({x}, &rucuda_e)")),
                            )],
                        )?,
                    ),
                    MathSpecial::Modf => (
                        "modf",
                        vec![
                            ArgSpec::const_vector("x", dtype),
                            ArgSpec::vector("frac", dtype),
                            ArgSpec::vector("whole", dtype),
                        ],
                        render_inline(
                            MODF,
                            &[
                                ("T", at.c_type()),
                                ("FRACTION", &back(&format!("rucuda_m_modf({x}, &rucuda_w)"))),
                                ("WHOLE", &back("rucuda_w")),
                            ],
                        )?,
                    ),
                };
                build(
                    kernel_name(tag, &[dtype]),
                    args,
                    op,
                    &[dtype, at, DType::I32],
                )
            }
            OpKey::Take {
                dtype,
                index,
                mode,
                arrays,
            } => indexed(true, dtype, index, mode, arrays),
            OpKey::Put {
                dtype,
                index,
                mode,
                arrays,
            } => indexed(false, dtype, index, mode, arrays),
            OpKey::Fused(id) => crate::fusion::source::spec_of_id(id),
            OpKey::Indexing(k) => k.spec(),
        }
    }

    /// The source and parameter layout of one variant of this kernel (what the GPU path
    /// compiles; for inspection and CI compile tests).
    pub fn render(&self, variant: &Variant) -> Result<RenderedKernel> {
        self.spec()?.render(variant)
    }
}

fn mode_tag(mode: IndexMode) -> &'static str {
    match mode {
        IndexMode::Clip => "clip",
        IndexMode::Wrap => "wrap",
    }
}

fn check_index_type(index: DType) -> Result<()> {
    if index.is_integer() {
        Ok(())
    } else {
        Err(ArrayError::UnsupportedType {
            operation: "indices of take/put (integer types only)",
            dtype: index,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loads_and_stores(src: &str, name: &str) -> (bool, bool) {
        let load = format!("rucuda_tile_{name}.v[rucuda_c] = reinterpret_cast<const uint4 *>");
        let store = format!("reinterpret_cast<uint4 *>({name} + rucuda_base)[rucuda_c] = ");
        (src.contains(&load), src.contains(&store))
    }

    #[test]
    fn elementwise_keys_vectorize_and_move_only_the_bytes_they_must() {
        let add = OpKey::Binary {
            op: BinaryOp::Add,
            a: DType::F32,
            b: DType::F32,
            a_scalar: false,
            b_scalar: false,
            out: DType::F32,
            in_place: false,
        };
        let spec = add.spec().unwrap();
        assert!(spec.vectorizable());
        let src = add.render(&Variant::Vectorized).unwrap().source;
        assert_eq!(loads_and_stores(&src, "a"), (true, false));
        assert_eq!(loads_and_stores(&src, "b"), (true, false));
        // The output is written, never read: 12 bytes per element for f32.
        assert_eq!(loads_and_stores(&src, "out"), (false, true));
        assert!(src.contains("__fadd_rn"));
        // In place: read and written through one pointer.
        let inplace = OpKey::Binary {
            op: BinaryOp::Add,
            a: DType::F32,
            b: DType::F64,
            a_scalar: false,
            b_scalar: true,
            out: DType::F32,
            in_place: true,
        };
        let src = inplace.render(&Variant::Vectorized).unwrap().source;
        assert_eq!(loads_and_stores(&src, "a"), (true, true));
        // where: a select, not control flow, so the output is not loaded either.
        let w = OpKey::Where {
            cond: DType::Bool,
            a: DType::F32,
            b: DType::F32,
            a_scalar: false,
            b_scalar: true,
            out: DType::F32,
            positive: false,
        };
        let src = w.render(&Variant::Vectorized).unwrap().source;
        assert_eq!(loads_and_stores(&src, "out"), (false, true));
        // Gathers index their sources themselves: no vectorized variant.
        let take = OpKey::Take {
            dtype: DType::F32,
            index: DType::I32,
            mode: IndexMode::Clip,
            arrays: 2,
        };
        assert!(!take.spec().unwrap().vectorizable());
        assert!(take.render(&Variant::Vectorized).is_err());
        // Fill writes only.
        let fill = OpKey::Fill { dtype: DType::C128 };
        let src = fill.render(&Variant::Vectorized).unwrap().source;
        assert_eq!(loads_and_stores(&src, "out"), (false, true));
    }

    #[test]
    fn refused_type_combinations_are_errors_not_kernels() {
        let bad = OpKey::Binary {
            op: BinaryOp::Sub,
            a: DType::Bool,
            b: DType::Bool,
            a_scalar: false,
            b_scalar: false,
            out: DType::Bool,
            in_place: false,
        };
        assert!(matches!(
            bad.spec(),
            Err(ArrayError::UnsupportedType { .. })
        ));
        let bad = OpKey::Unary {
            op: UnaryOp::Math(crate::ops::operations::MathFn::Asin),
            a: DType::C64,
            out: DType::C64,
            in_place: false,
        };
        assert!(bad.spec().is_err());
        let bad = OpKey::MathSpecial {
            f: MathSpecial::Frexp,
            dtype: DType::I32,
        };
        assert!(bad.spec().is_err());
        assert!(OpKey::Fused(u64::MAX).spec().is_err());
    }
}
