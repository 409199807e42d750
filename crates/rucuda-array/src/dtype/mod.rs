//! Element types: the run-time [`DType`], the compile-time [`Element`] trait that maps a
//! Rust type to its device storage and C name, and NumPy's type promotion.
//!
//! | Rust type | `DType` | C name in generated kernels | device storage |
//! |---|---|---|---|
//! | `bool` | `Bool` | `bool` | `u8` (0 or 1) |
//! | `i8`..`i64` | `I8`..`I64` | `signed char`, `short`, `int`, `long long` | itself |
//! | `u8`..`u64` | `U8`..`U64` | `unsigned char` .. `unsigned long long` | itself |
//! | `half::f16` | `F16` | `rucuda_half` | `u16` (the bits) |
//! | `half::bf16` | `BF16` | `rucuda_bfloat16` | `u16` (the bits) |
//! | `f32`, `f64` | `F32`, `F64` | `float`, `double` | itself |
//! | `Complex<f32>` | `C64` | `rucuda_complex64` | `[f32; 2]` |
//! | `Complex<f64>` | `C128` | `rucuda_complex128` | `[f64; 2]` |
//! | CUDA vector types ([`crate::vec`]) | `Record` | `float3`, `double2`, ... (CUDA's) | itself |
//! | your `#[repr(C)]` structs ([`crate::struct_element!`]) | `Record` | the name you give | itself |
//!
//! The half, bfloat16 and complex C types are defined by our own kernel prelude
//! ([`crate::codegen::prelude`]), so generated kernels never need CUDA's headers; so are
//! your structs ([`RecordType::c_definition`]). Struct and vector types ([`StructElement`])
//! are stored, copied, filled, gathered and passed to your kernels, but are not numbers:
//! no promotion, arithmetic or casts to other types.

mod element;
mod promotion;
mod record;
mod registry;

pub use element::Element;
pub use promotion::PROMOTION_TABLE_DOC;
pub(crate) use record::require_number;
pub use record::{FieldType, RecordField, RecordStorage, RecordType, StructElement};
pub use registry::{register_dtype, registered_dtype};

/// The category of an element type, ordered as NumPy orders kinds for promotion:
/// bool < integers < floating point < complex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DTypeKind {
    /// `bool`.
    Bool,
    /// Unsigned integers.
    UnsignedInt,
    /// Signed integers.
    SignedInt,
    /// Real floating point (f16, bf16, f32, f64).
    Float,
    /// Complex floating point.
    Complex,
    /// Struct and vector types (not numbers).
    Record,
}

/// The element type of an array, known at run time.
///
/// ```
/// use rucuda_array::DType;
/// assert_eq!(DType::F32.c_type(), "float");
/// assert_eq!(DType::I8.promote(DType::U8), DType::I16);
/// assert_eq!(DType::C64.size_bytes(), 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `bool`, one byte on the device.
    Bool,
    /// `i8`.
    I8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// IEEE binary16 (`half::f16`).
    F16,
    /// bfloat16 (`half::bf16`).
    BF16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `Complex<f32>`.
    C64,
    /// `Complex<f64>`.
    C128,
    /// A struct or CUDA vector type ([`StructElement`]): its C name, layout and fields.
    Record(&'static RecordType),
}

impl DType {
    /// Every number type, in declaration order (struct types are not listed).
    pub const ALL: [DType; 15] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::C64,
        DType::C128,
    ];

    /// Bytes per element on the device.
    ///
    /// ```
    /// assert_eq!(rucuda_array::DType::Bool.size_bytes(), 1);
    /// ```
    pub const fn size_bytes(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
            DType::Record(r) => r.size,
        }
    }

    /// Alignment in bytes on the device (the component's alignment for complex types,
    /// as in C and in Rust's `Complex<T>`).
    pub const fn align_bytes(self) -> usize {
        match self {
            DType::C64 => 4,
            DType::C128 => 8,
            DType::Record(r) => r.align,
            other => other.size_bytes(),
        }
    }

    /// The C type name used in generated kernels.
    ///
    /// ```
    /// assert_eq!(rucuda_array::DType::U64.c_type(), "unsigned long long");
    /// ```
    pub const fn c_type(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "signed char",
            DType::I16 => "short",
            DType::I32 => "int",
            DType::I64 => "long long",
            DType::U8 => "unsigned char",
            DType::U16 => "unsigned short",
            DType::U32 => "unsigned int",
            DType::U64 => "unsigned long long",
            DType::F16 => "rucuda_half",
            DType::BF16 => "rucuda_bfloat16",
            DType::F32 => "float",
            DType::F64 => "double",
            DType::C64 => "rucuda_complex64",
            DType::C128 => "rucuda_complex128",
            DType::Record(r) => r.name,
        }
    }

    /// NumPy's name (`"float32"`, `"complex64"`, `"bfloat16"`).
    pub const fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
            DType::Record(r) => r.name,
        }
    }

    /// The kind (bool, unsigned, signed, float, complex).
    pub const fn kind(self) -> DTypeKind {
        match self {
            DType::Bool => DTypeKind::Bool,
            DType::I8 | DType::I16 | DType::I32 | DType::I64 => DTypeKind::SignedInt,
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => DTypeKind::UnsignedInt,
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 => DTypeKind::Float,
            DType::C64 | DType::C128 => DTypeKind::Complex,
            DType::Record(_) => DTypeKind::Record,
        }
    }

    /// True for the signed and unsigned integers (not bool).
    pub const fn is_integer(self) -> bool {
        matches!(self.kind(), DTypeKind::SignedInt | DTypeKind::UnsignedInt)
    }

    /// True for the real floating-point types.
    pub const fn is_float(self) -> bool {
        matches!(self.kind(), DTypeKind::Float)
    }

    /// True for struct and vector types (not numbers).
    pub const fn is_record(self) -> bool {
        matches!(self, DType::Record(_))
    }

    /// True for the complex types.
    pub const fn is_complex(self) -> bool {
        matches!(self.kind(), DTypeKind::Complex)
    }

    /// The type of the real and imaginary parts of a complex type; other types are their
    /// own real type.
    ///
    /// ```
    /// use rucuda_array::DType;
    /// assert_eq!(DType::C128.real_type(), DType::F64);
    /// assert_eq!(DType::I32.real_type(), DType::I32);
    /// ```
    pub const fn real_type(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            other => other,
        }
    }

    /// Looks a type up by its NumPy name or our C name, then among CUDA's vector types
    /// and the struct types given to [`register_dtype`].
    ///
    /// ```
    /// use rucuda_array::DType;
    /// assert_eq!(DType::from_name("float32"), Some(DType::F32));
    /// assert_eq!(DType::from_name("rucuda_half"), Some(DType::F16));
    /// assert_eq!(DType::from_name("float3").map(|d| d.size_bytes()), Some(12));
    /// ```
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL
            .into_iter()
            .find(|d| d.name() == name || d.c_type() == name)
            .or_else(|| registered_dtype(name))
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_names_and_lookup_agree() {
        for d in DType::ALL {
            assert_eq!(DType::from_name(d.name()), Some(d));
            assert_eq!(DType::from_name(d.c_type()), Some(d));
            assert!(d.size_bytes().is_power_of_two());
            assert_eq!(d.size_bytes() % d.align_bytes(), 0);
            assert_eq!(d.to_string(), d.name());
        }
        assert_eq!(DType::from_name("float128"), None);
        assert!(DType::U8.is_integer() && !DType::Bool.is_integer());
        assert!(DType::BF16.is_float() && DType::C64.is_complex());
        assert!(DTypeKind::Bool < DTypeKind::UnsignedInt);
        assert!(DTypeKind::Float < DTypeKind::Complex);
    }
}
