//! Element types and reductions: how array dtypes ([`DType`]) and device data types
//! ([`DeviceRepr`]) map onto NCCL's `ncclDataType_t`, and which reductions each allows.
//!
//! | element | data movement (broadcast, all-gather, send/recv) | reductions |
//! |---|---|---|
//! | `i8`, `u8`, `i32`, `u32`, `i64`, `u64`, `f32`, `f64`, `f16`, `bf16` | its NCCL type | all five |
//! | `[T; N]` and CUDA vector types (`Float4`, `Int2`, ...) of those | `N` lanes of `T` | all five, lane by lane |
//! | `Complex<f32>`, `Complex<f64>` | two lanes of `f32`/`f64` | sum and average (exact: they are lane-wise); not prod, max, min |
//! | `bool` | bytes | max (logical or) and min (logical and) |
//! | `i16`, `u16`, other plain data | bytes | none: NCCL has no such type |

use rucuda_array::DType;
use rucuda_driver::DeviceRepr;

use crate::error::{Error, Result};
use crate::sys::bindings::{ncclDataType_t, ncclRedOp_t};

/// NCCL's element types (those every NCCL 2.x since 2.10 has).
///
/// ```
/// use rucuda_nccl::DataType;
/// assert_eq!(DataType::Bfloat16.size_bytes(), 2);
/// assert_eq!(DataType::Float32.raw().0, 7);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `ncclInt8`.
    Int8,
    /// `ncclUint8`.
    Uint8,
    /// `ncclInt32`.
    Int32,
    /// `ncclUint32`.
    Uint32,
    /// `ncclInt64`.
    Int64,
    /// `ncclUint64`.
    Uint64,
    /// `ncclFloat16` (IEEE half).
    Float16,
    /// `ncclFloat32`.
    Float32,
    /// `ncclFloat64`.
    Float64,
    /// `ncclBfloat16` (NCCL 2.10 and newer).
    Bfloat16,
}

impl DataType {
    /// The C enum value.
    pub const fn raw(self) -> ncclDataType_t {
        match self {
            DataType::Int8 => ncclDataType_t::ncclInt8,
            DataType::Uint8 => ncclDataType_t::ncclUint8,
            DataType::Int32 => ncclDataType_t::ncclInt32,
            DataType::Uint32 => ncclDataType_t::ncclUint32,
            DataType::Int64 => ncclDataType_t::ncclInt64,
            DataType::Uint64 => ncclDataType_t::ncclUint64,
            DataType::Float16 => ncclDataType_t::ncclFloat16,
            DataType::Float32 => ncclDataType_t::ncclFloat32,
            DataType::Float64 => ncclDataType_t::ncclFloat64,
            DataType::Bfloat16 => ncclDataType_t::ncclBfloat16,
        }
    }

    /// Bytes per element.
    pub const fn size_bytes(self) -> usize {
        match self {
            DataType::Int8 | DataType::Uint8 => 1,
            DataType::Float16 | DataType::Bfloat16 => 2,
            DataType::Int32 | DataType::Uint32 | DataType::Float32 => 4,
            DataType::Int64 | DataType::Uint64 | DataType::Float64 => 8,
        }
    }
}

/// A reduction (`ncclRedOp_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Sum (`ncclSum`).
    Sum,
    /// Product (`ncclProd`).
    Prod,
    /// Maximum (`ncclMax`).
    Max,
    /// Minimum (`ncclMin`).
    Min,
    /// Average over the ranks (`ncclAvg`, NCCL 2.10 and newer). Integers are divided
    /// after summing (truncating); floating point values are scaled by 1/ranks first.
    Avg,
}

impl ReduceOp {
    /// Every reduction, in NCCL's order.
    pub const ALL: [ReduceOp; 5] = [
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::Avg,
    ];

    /// The C enum value.
    pub const fn raw(self) -> ncclRedOp_t {
        match self {
            ReduceOp::Sum => ncclRedOp_t::ncclSum,
            ReduceOp::Prod => ncclRedOp_t::ncclProd,
            ReduceOp::Max => ncclRedOp_t::ncclMax,
            ReduceOp::Min => ncclRedOp_t::ncclMin,
            ReduceOp::Avg => ncclRedOp_t::ncclAvg,
        }
    }

    /// Its lowercase name (`"sum"`).
    pub const fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Avg => "avg",
        }
    }
}

/// Which reductions an element type allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reductions {
    /// All five (real numbers, lane by lane).
    All,
    /// Sum and average only (complex numbers: lane-wise is exact for those two).
    SumAvg,
    /// Max and min only (booleans: logical or and and).
    MaxMin,
    /// None (NCCL has no arithmetic for this type).
    None,
}

/// How one element of a Rust buffer travels through NCCL.
///
/// ```
/// use rucuda_nccl::{DataType, ElementLayout, ReduceOp};
/// let c = ElementLayout::of_dtype(rucuda_array::DType::C64);
/// assert_eq!((c.scalar, c.lanes, c.size), (Some(DataType::Float32), 2, 8));
/// assert!(c.wire("all_reduce", Some(ReduceOp::Sum), 10).is_ok());
/// assert!(c.wire("all_reduce", Some(ReduceOp::Max), 10).is_err());
/// let s = ElementLayout::of_repr::<[i16; 3]>();
/// assert_eq!(s.wire("broadcast", None, 4)?, (DataType::Uint8, 24));
/// # Ok::<(), rucuda_nccl::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ElementLayout {
    /// The NCCL type of one lane, where NCCL has one.
    pub scalar: Option<DataType>,
    /// Lanes per element (2 for complex numbers, `N` for `[T; N]`).
    pub lanes: usize,
    /// Bytes per element.
    pub size: usize,
    /// The reductions that are meaningful for it.
    pub reductions: Reductions,
    /// Its name, for messages (`float32`, `float[4]`).
    pub name: &'static str,
}

impl ElementLayout {
    /// The layout of a [`GpuArray`](rucuda_array::GpuArray) element type.
    pub const fn of_dtype(dtype: DType) -> ElementLayout {
        let (scalar, lanes, reductions) = match dtype {
            DType::Bool => (None, 1, Reductions::MaxMin),
            DType::I8 => (Some(DataType::Int8), 1, Reductions::All),
            DType::U8 => (Some(DataType::Uint8), 1, Reductions::All),
            DType::I16 | DType::U16 => (None, 1, Reductions::None),
            DType::I32 => (Some(DataType::Int32), 1, Reductions::All),
            DType::U32 => (Some(DataType::Uint32), 1, Reductions::All),
            DType::I64 => (Some(DataType::Int64), 1, Reductions::All),
            DType::U64 => (Some(DataType::Uint64), 1, Reductions::All),
            DType::F16 => (Some(DataType::Float16), 1, Reductions::All),
            DType::BF16 => (Some(DataType::Bfloat16), 1, Reductions::All),
            DType::F32 => (Some(DataType::Float32), 1, Reductions::All),
            DType::F64 => (Some(DataType::Float64), 1, Reductions::All),
            DType::C64 => (Some(DataType::Float32), 2, Reductions::SumAvg),
            DType::C128 => (Some(DataType::Float64), 2, Reductions::SumAvg),
            // Struct and vector elements travel as bytes; NCCL has no arithmetic for them.
            DType::Record(_) => (None, 1, Reductions::None),
        };
        ElementLayout {
            scalar,
            lanes,
            size: dtype.size_bytes(),
            reductions,
            name: dtype.name(),
        }
    }

    /// The layout of plain device data, read off its C type name
    /// ([`DeviceRepr::C_TYPE`]) and size: the integers, `f32`, `f64`, arrays of them and
    /// CUDA's vector types have NCCL lanes; anything else travels as bytes.
    pub fn of_repr<T: DeviceRepr>() -> ElementLayout {
        let size = std::mem::size_of::<T>();
        let scalar = scalar_of_c_type(T::C_TYPE);
        match scalar {
            Some(s) if size > 0 && size % s.size_bytes() == 0 => ElementLayout {
                scalar: Some(s),
                lanes: size / s.size_bytes(),
                size,
                reductions: Reductions::All,
                name: T::C_TYPE,
            },
            _ => ElementLayout {
                scalar: None,
                lanes: 1,
                size,
                reductions: Reductions::None,
                name: T::C_TYPE,
            },
        }
    }

    /// True when `op` is meaningful for this element type.
    pub const fn allows(&self, op: ReduceOp) -> bool {
        match self.reductions {
            Reductions::All => true,
            Reductions::SumAvg => matches!(op, ReduceOp::Sum | ReduceOp::Avg),
            Reductions::MaxMin => matches!(op, ReduceOp::Max | ReduceOp::Min),
            Reductions::None => false,
        }
    }

    /// What NCCL is told for `count` elements: the data type and its count. Data
    /// movement (`op` is `None`) works for every type (as bytes where NCCL has no type);
    /// a reduction needs a type that allows it.
    pub fn wire(
        &self,
        call: &'static str,
        op: Option<ReduceOp>,
        count: usize,
    ) -> Result<(DataType, usize)> {
        let refuse = |reason: String| Error::UnsupportedType {
            call,
            type_name: self.name.to_string(),
            reason,
        };
        let Some(op) = op else {
            return Ok(match self.scalar {
                Some(s) => (s, count * self.lanes),
                None => (DataType::Uint8, count * self.size),
            });
        };
        if !self.allows(op) {
            let reason = match self.reductions {
                Reductions::SumAvg => format!(
                    "a {} of complex numbers is not lane-wise; only sum and avg are",
                    op.name()
                ),
                Reductions::MaxMin => {
                    format!("booleans allow max (or) and min (and), not {}", op.name())
                }
                _ => format!(
                    "NCCL has no arithmetic for it (no {} of 16-bit integers or \
                     other types); convert to a type it has (i32, f32, ...)",
                    op.name()
                ),
            };
            return Err(refuse(reason));
        }
        match self.scalar {
            Some(s) => Ok((s, count * self.lanes)),
            // Booleans reduce as bytes: max is or, min is and.
            None if self.reductions == Reductions::MaxMin && self.size == 1 => {
                Ok((DataType::Uint8, count))
            }
            None => Err(refuse("NCCL has no such type".into())),
        }
    }
}

/// The NCCL lane type of a C type name, including CUDA's vector types.
fn scalar_of_c_type(c_type: &str) -> Option<DataType> {
    let base = c_type.trim_end_matches(|c: char| c.is_ascii_digit());
    Some(match base {
        "signed char" | "char" => DataType::Int8,
        "unsigned char" | "uchar" => DataType::Uint8,
        "int" => DataType::Int32,
        "unsigned int" | "uint" => DataType::Uint32,
        "long long" | "longlong" => DataType::Int64,
        "unsigned long long" | "ulonglong" => DataType::Uint64,
        "float" => DataType::Float32,
        "double" => DataType::Float64,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rucuda_driver::vector::{Float4, Int2, Longlong2};

    #[test]
    fn every_dtype_maps() {
        for d in DType::ALL {
            let l = ElementLayout::of_dtype(d);
            assert_eq!(l.size, d.size_bytes(), "{d}");
            if let Some(s) = l.scalar {
                assert_eq!(s.size_bytes() * l.lanes, l.size, "{d}");
            }
            // Data movement always works, with the bytes of the elements.
            let (t, n) = l.wire("broadcast", None, 5).unwrap();
            assert_eq!(t.size_bytes() * n, 5 * d.size_bytes(), "{d}");
        }
        let f16 = ElementLayout::of_dtype(DType::F16);
        assert_eq!(
            f16.wire("all_reduce", Some(ReduceOp::Prod), 3).unwrap(),
            (DataType::Float16, 3)
        );
        let bf16 = ElementLayout::of_dtype(DType::BF16);
        assert_eq!(bf16.scalar, Some(DataType::Bfloat16));
    }

    #[test]
    fn reductions_refused_where_meaningless() {
        let i16 = ElementLayout::of_dtype(DType::I16);
        let e = i16.wire("all_reduce", Some(ReduceOp::Sum), 4).unwrap_err();
        assert!(
            matches!(&e, Error::UnsupportedType { call: "all_reduce", type_name, .. } if type_name == "int16"),
            "{e}"
        );
        let b = ElementLayout::of_dtype(DType::Bool);
        assert_eq!(
            b.wire("all_reduce", Some(ReduceOp::Max), 4).unwrap(),
            (DataType::Uint8, 4)
        );
        assert!(b.wire("all_reduce", Some(ReduceOp::Sum), 4).is_err());
        let c = ElementLayout::of_dtype(DType::C128);
        assert_eq!(
            c.wire("reduce", Some(ReduceOp::Avg), 4).unwrap(),
            (DataType::Float64, 8)
        );
        for op in [ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min] {
            let e = c.wire("reduce", Some(op), 4).unwrap_err().to_string();
            assert!(e.contains("complex"), "{e}");
        }
    }

    #[test]
    fn device_reprs_map_by_c_type() {
        let f = ElementLayout::of_repr::<f32>();
        assert_eq!((f.scalar, f.lanes), (Some(DataType::Float32), 1));
        let a = ElementLayout::of_repr::<[f64; 3]>();
        assert_eq!(
            (a.scalar, a.lanes, a.size),
            (Some(DataType::Float64), 3, 24)
        );
        let v = ElementLayout::of_repr::<Float4>();
        assert_eq!((v.scalar, v.lanes), (Some(DataType::Float32), 4));
        assert_eq!(
            ElementLayout::of_repr::<Int2>().scalar,
            Some(DataType::Int32)
        );
        assert_eq!(
            ElementLayout::of_repr::<Longlong2>().scalar,
            Some(DataType::Int64)
        );
        for (l, t) in [
            (ElementLayout::of_repr::<i8>(), DataType::Int8),
            (ElementLayout::of_repr::<u8>(), DataType::Uint8),
            (ElementLayout::of_repr::<i32>(), DataType::Int32),
            (ElementLayout::of_repr::<u32>(), DataType::Uint32),
            (ElementLayout::of_repr::<i64>(), DataType::Int64),
            (ElementLayout::of_repr::<u64>(), DataType::Uint64),
            (ElementLayout::of_repr::<usize>(), DataType::Uint64),
            (ElementLayout::of_repr::<f64>(), DataType::Float64),
        ] {
            assert_eq!(l.scalar, Some(t));
            assert!(l.allows(ReduceOp::Prod));
        }
        let s = ElementLayout::of_repr::<u16>();
        assert_eq!(s.scalar, None);
        assert!(s.wire("all_reduce", Some(ReduceOp::Max), 1).is_err());
        assert_eq!(s.wire("send", None, 7).unwrap(), (DataType::Uint8, 14));
    }

    #[test]
    fn raw_values_match_the_header() {
        assert_eq!(DataType::Int8.raw().0, 0);
        assert_eq!(DataType::Bfloat16.raw().0, 9);
        assert_eq!(ReduceOp::Avg.raw().0, 4);
        assert_eq!(ReduceOp::ALL.map(|o| o.raw().0), [0, 1, 2, 3, 4]);
    }
}
