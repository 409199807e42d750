//! The reductions behind the array methods, built from per-type expressions and
//! memoized per (operation, element types): each [`ReductionKernel`] then caches its
//! compiled variants per context, so a method costs one lookup after its first call.
//!
//! NaN follows NumPy: `max`/`min` propagate it, `argmax`/`argmin` return the index of
//! the first NaN; ties give the first index. The structures of argmax/argmin and of the
//! index range are in `cuda/`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::{ReductionKernel, ReductionSpec, ReductionType};
use crate::codegen::template::render;
use crate::codegen::ArgSpec;
use crate::dtype::{DType, DTypeKind};
use crate::error::{ArrayError, Result};

/// argmax/argmin's (value, index) pair (slots: the value type `T`, the order `CMP`).
const ARGPAIR: &str = include_str!("cuda/argpair.cuh");
/// The smallest and largest index of an index array, as two `long long`.
const INDEX_RANGE: &str = include_str!("cuda/index_range.cuh");

/// One built-in reduction and the element types it is compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Builtin {
    /// Sum of `input` elements converted to `output`.
    Sum { input: DType, output: DType },
    /// `sum(x[i] * y[i])`.
    Dot(DType),
    /// Largest element (NaN propagates).
    Max(DType),
    /// Smallest element (NaN propagates).
    Min(DType),
    /// Index of the first largest element (or first NaN).
    ArgMax(DType),
    /// Index of the first smallest element (or first NaN).
    ArgMin(DType),
    /// Some element is nonzero.
    Any(DType),
    /// Every element is nonzero.
    All(DType),
    /// `sum(x[subset[i]])`.
    SubsetSum { value: DType, index: DType },
    /// `sum(x[subset[i]] * y[subset[i]])`.
    SubsetDot { value: DType, index: DType },
    /// `max(x[subset[i]])`.
    SubsetMax { value: DType, index: DType },
    /// `min(x[subset[i]])`.
    SubsetMin { value: DType, index: DType },
    /// The smallest and largest index of an index array, as two `long long`.
    IndexRange(DType),
}

/// The memoized kernel of `b`.
pub(crate) fn kernel(b: Builtin) -> Result<Arc<ReductionKernel>> {
    static MEMO: OnceLock<Mutex<HashMap<Builtin, Arc<ReductionKernel>>>> = OnceLock::new();
    let memo = MEMO.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = memo.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(k) = map.get(&b) {
        return Ok(Arc::clone(k));
    }
    let k = Arc::new(ReductionKernel::from_trusted_spec(spec(b)?));
    map.insert(b, Arc::clone(&k));
    Ok(k)
}

/// The accumulator of sums and dots over `d`: `float` for the half types.
fn sum_accumulator(d: DType) -> DType {
    match d {
        DType::F16 | DType::BF16 => DType::F32,
        other => other,
    }
}

/// The C expression of `d`'s lowest value (`-inf` for floats), or its highest.
pub(crate) fn extreme(d: DType, highest: bool) -> Result<&'static str> {
    Ok(match (d, highest) {
        (DType::Bool, false) => "false",
        (DType::Bool, true) => "true",
        (DType::I8, false) => "(-127 - 1)",
        (DType::I8, true) => "127",
        (DType::I16, false) => "(-32767 - 1)",
        (DType::I16, true) => "32767",
        (DType::I32, false) => "(-2147483647 - 1)",
        (DType::I32, true) => "2147483647",
        (DType::I64, false) => "(-9223372036854775807LL - 1)",
        (DType::I64, true) => "9223372036854775807LL",
        (DType::U8 | DType::U16 | DType::U32 | DType::U64, false) => "0",
        (DType::U8, true) => "255",
        (DType::U16, true) => "65535",
        (DType::U32, true) => "4294967295u",
        (DType::U64, true) => "18446744073709551615ull",
        (DType::F16 | DType::BF16 | DType::F32, false) => "__int_as_float(0xff800000)",
        (DType::F16 | DType::BF16 | DType::F32, true) => "__int_as_float(0x7f800000)",
        (DType::F64, false) => "__longlong_as_double(0xfff0000000000000ULL)",
        (DType::F64, true) => "__longlong_as_double(0x7ff0000000000000ULL)",
        (DType::C64 | DType::C128 | DType::Record(_), _) => {
            return Err(ArrayError::UnsupportedType {
                operation: "ordering (max, min, argmax, argmin)",
                dtype: d,
            })
        }
    })
}

/// `max` (`>`) or `min` (`<`) that propagates NaN (`a != a` is false for integers).
pub(crate) fn pick_expr(cmp: &str) -> String {
    format!("((a {cmp} b || a != a) ? a : b)")
}

/// The "is nonzero" test of one element expression of type `d`.
pub(crate) fn nonzero(d: DType, x: &str) -> String {
    match d.kind() {
        DTypeKind::Bool => format!("(bool){x}"),
        DTypeKind::Complex => format!("({x}.re != 0 || {x}.im != 0)"),
        _ => format!("({x} != 0)"),
    }
}

/// Preamble of argmax/argmin: a (value, index) pair, ordered by `cmp` then by index,
/// NaN first; it converts to its index.
pub(crate) fn argpair_preamble(d: DType, cmp: &str) -> Result<String> {
    Ok(render(ARGPAIR, &[("T", d.c_type()), ("CMP", cmp)])?)
}

fn require_index(d: DType) -> Result<()> {
    if d.is_integer() {
        Ok(())
    } else {
        Err(ArrayError::UnsupportedType {
            operation: "indexing (subset reductions take integer indices)",
            dtype: d,
        })
    }
}

fn ordering(d: DType) -> Result<()> {
    extreme(d, false).map(|_| ())
}

/// The spec of a built-in.
pub(crate) fn spec(b: Builtin) -> Result<ReductionSpec> {
    // Struct and vector types are not numbers: no built-in reduction applies (write a
    // ReductionKernel with your own reduce expression).
    let types = match b {
        Builtin::Sum { input, output } => [input, output],
        Builtin::Dot(d)
        | Builtin::Max(d)
        | Builtin::Min(d)
        | Builtin::ArgMax(d)
        | Builtin::ArgMin(d)
        | Builtin::Any(d)
        | Builtin::All(d)
        | Builtin::IndexRange(d) => [d, d],
        Builtin::SubsetSum { value, index }
        | Builtin::SubsetDot { value, index }
        | Builtin::SubsetMax { value, index }
        | Builtin::SubsetMin { value, index } => [value, index],
    };
    for d in types {
        crate::dtype::require_number(d, "built-in reduction")?;
    }
    let x = |d: DType| ArgSpec::const_vector("x", d);
    let y = |d: DType| ArgSpec::const_vector("y", d);
    let subset = |d: DType| ArgSpec::const_vector("subset", d);
    let sum_like = |name: &str, out: DType, acc: DType| {
        ReductionSpec::builder(name)
            .output_dtype(out)
            .accumulator(ReductionType::DType(acc))
            .neutral("0")
            .reduce("a + b")
    };
    let spec = match b {
        Builtin::Sum { input, output } => {
            if input.is_complex() && !output.is_complex() {
                return Err(ArrayError::UnsupportedType {
                    operation: "a real sum of complex numbers",
                    dtype: input,
                });
            }
            let acc = sum_accumulator(output);
            sum_like("gpuarray_sum", output, acc)
                .map(format!("({})x[i]", acc.c_type()))
                .arg(x(input))
        }
        Builtin::Dot(d) => {
            let acc = sum_accumulator(d);
            let map = match d {
                DType::Bool => "(x[i] && y[i])".to_string(),
                _ if acc != d => format!("({a})x[i] * ({a})y[i]", a = acc.c_type()),
                _ => "x[i] * y[i]".to_string(),
            };
            sum_like("gpuarray_dot", d, acc)
                .map(map)
                .arg(x(d))
                .arg(y(d))
        }
        Builtin::Max(d) | Builtin::Min(d) => {
            let is_max = matches!(b, Builtin::Max(_));
            ReductionSpec::builder(if is_max {
                "gpuarray_max"
            } else {
                "gpuarray_min"
            })
            .output_dtype(d)
            .neutral(extreme(d, !is_max)?)
            .reduce(pick_expr(if is_max { ">" } else { "<" }))
            .map("x[i]")
            .arg(x(d))
        }
        Builtin::ArgMax(d) | Builtin::ArgMin(d) => {
            let is_max = matches!(b, Builtin::ArgMax(_));
            let start = extreme(d, !is_max)?;
            ReductionSpec::builder(if is_max {
                "gpuarray_argmax"
            } else {
                "gpuarray_argmin"
            })
            .preamble(argpair_preamble(d, if is_max { ">" } else { "<" })?)
            .output_dtype(DType::I64)
            .accumulator(ReductionType::structure("rucuda_argpair", 16, 8))
            .neutral(format!(
                "rucuda_make_argpair({start}, 9223372036854775807LL)"
            ))
            .reduce("rucuda_argbest(a, b)")
            .map("rucuda_make_argpair(x[i], i)")
            .arg(x(d))
        }
        Builtin::Any(d) | Builtin::All(d) => {
            let is_any = matches!(b, Builtin::Any(_));
            ReductionSpec::builder(if is_any {
                "gpuarray_any"
            } else {
                "gpuarray_all"
            })
            .output_dtype(DType::Bool)
            .neutral(if is_any { "false" } else { "true" })
            .reduce(if is_any { "a || b" } else { "a && b" })
            .map(nonzero(d, "x[i]"))
            .arg(x(d))
        }
        Builtin::SubsetSum { value, index } => {
            require_index(index)?;
            let acc = sum_accumulator(value);
            sum_like("gpuarray_subset_sum", value, acc)
                .map(format!("({})x[subset[i]]", acc.c_type()))
                .arg(subset(index))
                .arg(x(value))
        }
        Builtin::SubsetDot { value, index } => {
            require_index(index)?;
            let acc = sum_accumulator(value);
            let map = match value {
                DType::Bool => "(x[subset[i]] && y[subset[i]])".to_string(),
                _ => format!("({a})x[subset[i]] * ({a})y[subset[i]]", a = acc.c_type()),
            };
            sum_like("gpuarray_subset_dot", value, acc)
                .map(map)
                .arg(subset(index))
                .arg(x(value))
                .arg(y(value))
        }
        Builtin::SubsetMax { value, index } | Builtin::SubsetMin { value, index } => {
            require_index(index)?;
            let is_max = matches!(b, Builtin::SubsetMax { .. });
            ReductionSpec::builder(if is_max {
                "gpuarray_subset_max"
            } else {
                "gpuarray_subset_min"
            })
            .output_dtype(value)
            .neutral(extreme(value, !is_max)?)
            .reduce(pick_expr(if is_max { ">" } else { "<" }))
            .map("x[subset[i]]")
            .arg(subset(index))
            .arg(x(value))
        }
        Builtin::IndexRange(d) => {
            require_index(d)?;
            ReductionSpec::builder("gpuarray_index_range")
                .preamble(INDEX_RANGE)
                .output_type(ReductionType::structure("rucuda_range", 16, 8))
                .neutral("rucuda_make_range(9223372036854775807LL, -9223372036854775807LL - 1)")
                .reduce("rucuda_make_range(a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi)")
                .map("rucuda_make_range((long long)x[i], (long long)x[i])")
                .arg(x(d))
        }
    };
    if let Builtin::Max(d) | Builtin::Min(d) | Builtin::ArgMax(d) | Builtin::ArgMin(d) = b {
        ordering(d)?;
    }
    spec.build()
}

/// Every reduction behind the array methods, for every element type it supports, with
/// a label (for compile tests and inspection of the generated source).
pub fn builtin_specs() -> Vec<(String, ReductionSpec)> {
    let mut out = Vec::new();
    let mut push = |b: Builtin| {
        if let Ok(s) = spec(b) {
            out.push((format!("{b:?}"), s));
        }
    };
    for d in DType::ALL {
        push(Builtin::Sum {
            input: d,
            output: d,
        });
        push(Builtin::Dot(d));
        push(Builtin::Max(d));
        push(Builtin::Min(d));
        push(Builtin::ArgMax(d));
        push(Builtin::ArgMin(d));
        push(Builtin::Any(d));
        push(Builtin::All(d));
        push(Builtin::SubsetSum {
            value: d,
            index: DType::I32,
        });
        push(Builtin::SubsetDot {
            value: d,
            index: DType::I64,
        });
        push(Builtin::SubsetMax {
            value: d,
            index: DType::U32,
        });
        push(Builtin::SubsetMin {
            value: d,
            index: DType::I16,
        });
        push(Builtin::IndexRange(d));
    }
    for (input, output) in [
        (DType::U8, DType::I64),
        (DType::Bool, DType::I64),
        (DType::F16, DType::F64),
        (DType::F32, DType::C64),
        (DType::I32, DType::F64),
    ] {
        push(Builtin::Sum { input, output });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_exist_where_the_operation_means_something() {
        for d in DType::ALL {
            assert!(spec(Builtin::Sum {
                input: d,
                output: d
            })
            .is_ok());
            assert!(spec(Builtin::Dot(d)).is_ok());
            assert!(spec(Builtin::Any(d)).is_ok());
            assert_eq!(spec(Builtin::Max(d)).is_ok(), !d.is_complex(), "{d}");
            assert_eq!(spec(Builtin::ArgMin(d)).is_ok(), !d.is_complex(), "{d}");
            assert_eq!(spec(Builtin::IndexRange(d)).is_ok(), d.is_integer(), "{d}");
        }
        assert!(spec(Builtin::Sum {
            input: DType::C64,
            output: DType::F64
        })
        .is_err());
        assert!(spec(Builtin::SubsetSum {
            value: DType::F32,
            index: DType::F32
        })
        .is_err());
    }

    #[test]
    fn half_sums_accumulate_in_float() {
        let s = spec(Builtin::Sum {
            input: DType::F16,
            output: DType::F16,
        })
        .unwrap();
        assert_eq!(s.accumulator(), &ReductionType::DType(DType::F32));
        assert_eq!(s.map_expr(), "(float)x[i]");
        let s = spec(Builtin::Dot(DType::BF16)).unwrap();
        assert_eq!(s.map_expr(), "(float)x[i] * (float)y[i]");
    }

    #[test]
    fn memo_returns_the_same_kernel() {
        let a = kernel(Builtin::Max(DType::I16)).unwrap();
        let b = kernel(Builtin::Max(DType::I16)).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let c = kernel(Builtin::Min(DType::I16)).unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
    }
}
