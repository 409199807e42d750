//! The axis reductions' operations: NumPy's result type of each (on Linux) and the C
//! pieces of its fold (`cuda/fold.cuh`): accumulator, identity, map, combine, finish.
//!
//! Accumulators: integer sums and products in 64 bits (signed ones in unsigned
//! arithmetic, which wraps as NumPy's does, without C's signed-overflow undefined
//! behaviour); `f32` sums and means in `f64`, half types in `f32`; `var`/`std` as
//! (count, mean, M2) in `f64` merged with Chan's formula; `argmax`/`argmin` as (value,
//! index) pairs with the whole-array reductions' NaN and tie rules.

use crate::codegen::template::render;
use crate::dtype::{DType, DTypeKind};
use crate::error::{ArrayError, Result};
use crate::reduction::{argpair_preamble, extreme, nonzero, pick_expr};

/// Chan's merge of (count, mean, M2) partial results.
const WELFORD: &str = include_str!("cuda/welford.cuh");
/// The fold's typedefs and functions.
const FOLD: &str = include_str!("cuda/fold.cuh");

/// One axis reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum AxisOp {
    Sum,
    Prod,
    Max,
    Min,
    ArgMax,
    ArgMin,
    Any,
    All,
    Mean,
    Var,
    Std,
}

impl AxisOp {
    /// The method's name, for errors.
    pub(crate) fn name(self) -> &'static str {
        match self {
            AxisOp::Sum => "sum",
            AxisOp::Prod => "prod",
            AxisOp::Max => "max",
            AxisOp::Min => "min",
            AxisOp::ArgMax => "argmax",
            AxisOp::ArgMin => "argmin",
            AxisOp::Any => "any",
            AxisOp::All => "all",
            AxisOp::Mean => "mean",
            AxisOp::Var => "var",
            AxisOp::Std => "std",
        }
    }

    /// True when an empty reduction has no value (NumPy raises).
    pub(crate) fn needs_elements(self) -> bool {
        matches!(
            self,
            AxisOp::Max | AxisOp::Min | AxisOp::ArgMax | AxisOp::ArgMin
        )
    }

    /// True when the result depends on the order of the reduced elements (their index),
    /// so that the reduced axes may not be reordered.
    pub(crate) fn indexed(self) -> bool {
        matches!(self, AxisOp::ArgMax | AxisOp::ArgMin)
    }
}

/// NumPy's result type of `sum`/`prod`: integers and bool widen to 64 bits.
pub(crate) fn sum_dtype(d: DType) -> DType {
    match d.kind() {
        DTypeKind::Bool | DTypeKind::SignedInt => DType::I64,
        DTypeKind::UnsignedInt => DType::U64,
        _ => d,
    }
}

/// NumPy's result type of `mean` (and `var`/`std` of real types): integers and bool
/// give `f64`.
pub(crate) fn mean_dtype(d: DType) -> DType {
    match d.kind() {
        DTypeKind::Bool | DTypeKind::SignedInt | DTypeKind::UnsignedInt => DType::F64,
        _ => d,
    }
}

/// The result type of `op` over elements of `d`, or the refusal.
pub(crate) fn output_dtype(op: AxisOp, d: DType) -> Result<DType> {
    let refuse = |operation: &'static str| {
        Err(ArrayError::UnsupportedType {
            operation,
            dtype: d,
        })
    };
    Ok(match op {
        AxisOp::Sum | AxisOp::Prod => sum_dtype(d),
        AxisOp::Mean => mean_dtype(d),
        AxisOp::Var | AxisOp::Std if d.is_complex() => {
            return refuse("var and std along axes (complex input)")
        }
        AxisOp::Var | AxisOp::Std => mean_dtype(d),
        AxisOp::Max | AxisOp::Min | AxisOp::ArgMax | AxisOp::ArgMin if d.is_complex() => {
            return refuse("ordering along axes (max, min, argmax, argmin)")
        }
        AxisOp::Max | AxisOp::Min => d,
        AxisOp::ArgMax | AxisOp::ArgMin => DType::I64,
        AxisOp::Any | AxisOp::All => DType::Bool,
    })
}

/// The fold of `op` over `d` as C (`cuda/fold.cuh` rendered after any preamble), and
/// an upper bound of its accumulator's size in bytes (for the partials buffer).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fold {
    /// Preamble and fold functions.
    pub source: String,
    /// Bytes of one accumulator (at least).
    pub acc_bytes: usize,
}

fn is_half(d: DType) -> bool {
    matches!(d, DType::F16 | DType::BF16)
}

/// `x` as a double (half types through `float`).
fn to_f64(d: DType, x: &str) -> String {
    match d {
        DType::F16 | DType::BF16 => format!("(double)(float)({x})"),
        DType::Bool => format!("({x} ? 1.0 : 0.0)"),
        _ => format!("(double)({x})"),
    }
}

/// A complex value of type `c` from two component expressions.
fn complex(c: DType, re: &str, im: &str) -> String {
    format!("{}({re}, {im})", c.c_type())
}

/// The sum/prod accumulator of output type `o`, and whether it is `unsigned long long`
/// standing in for a signed type.
fn sum_accumulator(op: AxisOp, o: DType) -> DType {
    match o {
        DType::I64 | DType::U64 => DType::U64,
        DType::F16 | DType::BF16 => DType::F32,
        DType::F32 if op == AxisOp::Sum => DType::F64,
        other => other,
    }
}

/// Builds the fold of `op` over input type `d`.
pub(crate) fn fold(op: AxisOp, d: DType) -> Result<Fold> {
    let out = output_dtype(op, d)?;
    let (ic, oc) = (d.c_type(), out.c_type());
    let mut preamble = String::new();
    // (accumulator C type, its bytes, identity, map, combine, finish)
    let (acc, acc_bytes, identity, map, combine, finish): (
        String,
        usize,
        String,
        String,
        String,
        String,
    ) = match op {
        AxisOp::Sum | AxisOp::Prod => {
            let a = sum_accumulator(op, out);
            let one = if op == AxisOp::Sum { "0" } else { "1" };
            let (identity, map) = if a.is_complex() {
                let zero = if a == DType::C64 { "0.0f" } else { "0.0" };
                let one_c = if a == DType::C64 { "1.0f" } else { "1.0" };
                (
                    complex(a, if op == AxisOp::Sum { zero } else { one_c }, zero),
                    "x".to_string(),
                )
            } else if d.kind() == DTypeKind::SignedInt && a == DType::U64 {
                (
                    format!("({})({one})", a.c_type()),
                    "(unsigned long long)(long long)(x)".to_string(),
                )
            } else if is_half(d) {
                (
                    format!("({})({one})", a.c_type()),
                    format!("({})(float)(x)", a.c_type()),
                )
            } else {
                (
                    format!("({})({one})", a.c_type()),
                    format!("({})(x)", a.c_type()),
                )
            };
            let combine = if op == AxisOp::Sum { "a + b" } else { "a * b" };
            (
                a.c_type().to_string(),
                a.size_bytes(),
                identity,
                map,
                combine.to_string(),
                format!("({oc})(a)"),
            )
        }
        AxisOp::Mean => {
            if d.is_complex() {
                let part = if d == DType::C64 { "float" } else { "double" };
                let zero = if d == DType::C64 { "0.0f" } else { "0.0" };
                (
                    ic.to_string(),
                    d.size_bytes(),
                    complex(d, zero, zero),
                    "x".to_string(),
                    "a + b".to_string(),
                    complex(
                        d,
                        &format!("a.re / ({part})count"),
                        &format!("a.im / ({part})count"),
                    ),
                )
            } else {
                (
                    "double".to_string(),
                    8,
                    "0.0".to_string(),
                    to_f64(d, "x"),
                    "a + b".to_string(),
                    format!("({oc})(a / (double)count)"),
                )
            }
        }
        AxisOp::Var | AxisOp::Std => {
            preamble.push_str(WELFORD);
            let v = if op == AxisOp::Var {
                "rucuda_variance(a, ddof)"
            } else {
                "sqrt(rucuda_variance(a, ddof))"
            };
            (
                "rucuda_moments".to_string(),
                24,
                "rucuda_make_moments(0.0, 0.0, 0.0)".to_string(),
                format!("rucuda_make_moments(1.0, {}, 0.0)", to_f64(d, "x")),
                "rucuda_merge_moments(a, b)".to_string(),
                format!("({oc})({v})"),
            )
        }
        AxisOp::Max | AxisOp::Min => {
            let is_max = op == AxisOp::Max;
            let a = if is_half(d) { DType::F32 } else { d };
            let map = if is_half(d) { "(float)(x)" } else { "x" };
            (
                a.c_type().to_string(),
                a.size_bytes(),
                extreme(a, !is_max)?.to_string(),
                map.to_string(),
                pick_expr(if is_max { ">" } else { "<" }),
                format!("({oc})(a)"),
            )
        }
        AxisOp::ArgMax | AxisOp::ArgMin => {
            let is_max = op == AxisOp::ArgMax;
            let a = if is_half(d) { DType::F32 } else { d };
            preamble.push_str(&argpair_preamble(a, if is_max { ">" } else { "<" })?);
            let value = if is_half(d) { "(float)(x)" } else { "x" };
            (
                "rucuda_argpair".to_string(),
                16,
                format!(
                    "rucuda_make_argpair({}, 9223372036854775807LL)",
                    extreme(a, !is_max)?
                ),
                format!("rucuda_make_argpair({value}, j)"),
                "rucuda_argbest(a, b)".to_string(),
                "a.i".to_string(),
            )
        }
        AxisOp::Any | AxisOp::All => {
            let is_any = op == AxisOp::Any;
            (
                "bool".to_string(),
                1,
                (if is_any { "false" } else { "true" }).to_string(),
                nonzero(d, "x"),
                (if is_any { "a || b" } else { "a && b" }).to_string(),
                "a".to_string(),
            )
        }
    };
    let body = render(
        FOLD,
        &[
            ("IN", ic),
            ("OUT", oc),
            ("ACC", &acc),
            ("IDENTITY", &identity),
            ("MAP", &map),
            ("COMBINE", &combine),
            ("FINISH", &finish),
        ],
    )?;
    preamble.push_str(&body);
    Ok(Fold {
        source: preamble,
        acc_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_result_types() {
        assert_eq!(output_dtype(AxisOp::Sum, DType::I32).unwrap(), DType::I64);
        assert_eq!(output_dtype(AxisOp::Sum, DType::Bool).unwrap(), DType::I64);
        assert_eq!(output_dtype(AxisOp::Prod, DType::U8).unwrap(), DType::U64);
        assert_eq!(output_dtype(AxisOp::Sum, DType::F32).unwrap(), DType::F32);
        assert_eq!(output_dtype(AxisOp::Sum, DType::F16).unwrap(), DType::F16);
        assert_eq!(output_dtype(AxisOp::Mean, DType::I32).unwrap(), DType::F64);
        assert_eq!(output_dtype(AxisOp::Mean, DType::Bool).unwrap(), DType::F64);
        assert_eq!(output_dtype(AxisOp::Mean, DType::F32).unwrap(), DType::F32);
        assert_eq!(output_dtype(AxisOp::Mean, DType::C64).unwrap(), DType::C64);
        assert_eq!(output_dtype(AxisOp::Var, DType::F32).unwrap(), DType::F32);
        assert_eq!(output_dtype(AxisOp::Std, DType::U16).unwrap(), DType::F64);
        assert_eq!(output_dtype(AxisOp::Max, DType::U8).unwrap(), DType::U8);
        assert_eq!(
            output_dtype(AxisOp::ArgMin, DType::F16).unwrap(),
            DType::I64
        );
        assert_eq!(output_dtype(AxisOp::Any, DType::F64).unwrap(), DType::Bool);
        assert!(output_dtype(AxisOp::Max, DType::C64).is_err());
        assert!(output_dtype(AxisOp::Var, DType::C128).is_err());
    }

    #[test]
    fn every_supported_fold_renders() {
        let ops = [
            AxisOp::Sum,
            AxisOp::Prod,
            AxisOp::Max,
            AxisOp::Min,
            AxisOp::ArgMax,
            AxisOp::ArgMin,
            AxisOp::Any,
            AxisOp::All,
            AxisOp::Mean,
            AxisOp::Var,
            AxisOp::Std,
        ];
        for op in ops {
            for d in DType::ALL {
                match fold(op, d) {
                    Ok(f) => {
                        assert!(f.source.contains("rucuda_finish"), "{op:?} {d}");
                        assert!(!f.source.contains('$'), "{op:?} {d}");
                        assert!(f.acc_bytes >= 1, "{op:?} {d}");
                    }
                    Err(_) => assert!(output_dtype(op, d).is_err(), "{op:?} {d}"),
                }
            }
        }
    }

    #[test]
    fn accumulators_are_wide() {
        let f = fold(AxisOp::Sum, DType::I32).unwrap();
        assert!(f
            .source
            .contains("typedef unsigned long long rucuda_acc_t;"));
        assert!(f.source.contains("(unsigned long long)(long long)(x)"));
        let f = fold(AxisOp::Sum, DType::F32).unwrap();
        assert!(f.source.contains("typedef double rucuda_acc_t;"));
        let f = fold(AxisOp::Var, DType::F32).unwrap();
        assert!(f.source.contains("rucuda_merge_moments"));
        assert_eq!(f.acc_bytes, 24);
        let f = fold(AxisOp::ArgMax, DType::F16).unwrap();
        assert!(f.source.contains("rucuda_make_argpair((float)(x), j)"));
    }
}
