//! Struct and vector element types: [`StructElement`], the one `unsafe` marker trait that
//! makes a plain `#[repr(C)]` type a [`crate::Element`] (CUDA's vector types and your own
//! structs), with the [`RecordType`] that tells the code generators its C name, layout
//! and fields, so generated kernels can declare it.
//!
//! Such arrays are filled, copied, sliced, gathered (`take`) and passed to your own
//! kernels (`ElementwiseKernel`, `ReductionKernel`) like any other; arithmetic, casts to
//! other types and the built-in reductions do not apply: the operators do not compile
//! for them (no [`crate::ops::Promote`] impls), and the run-time operations return
//! [`crate::ArrayError::UnsupportedType`].

use std::borrow::Cow;

use half::{bf16, f16};
use num_complex::Complex;

use super::{DType, Element};

/// One field of a [`RecordType`]: name, element type, array length (0 for a plain
/// field) and byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordField {
    /// The field's name (in Rust and in C).
    pub name: &'static str,
    /// Its element type (for an array field, of one item).
    pub dtype: DType,
    /// 0 for a plain field, `N` for a `[T; N]` field.
    pub len: usize,
    /// Its byte offset in the struct.
    pub offset: usize,
}

impl RecordField {
    /// The field `name` of type `F` at byte `offset` (what [`crate::struct_element!`]
    /// writes for each field).
    pub const fn of<F: FieldType>(name: &'static str, offset: usize) -> RecordField {
        RecordField {
            name,
            dtype: F::DTYPE,
            len: F::LEN,
            offset,
        }
    }

    /// Bytes it occupies.
    pub const fn size_bytes(&self) -> usize {
        let n = if self.len == 0 { 1 } else { self.len };
        n * self.dtype.size_bytes()
    }
}

/// The run-time description of a struct or vector element type ([`DType::Record`]): its C
/// name, size, alignment and fields. `builtin` types (CUDA's vector types) are defined by
/// CUDA itself; the others are declared by every generated kernel that uses them
/// ([`RecordType::c_definition`]).
///
/// ```
/// use rucuda_array::{vec::Float3, Element, DType};
/// let DType::Record(r) = Float3::DTYPE else { unreachable!() };
/// assert_eq!((r.name, r.size, r.align, r.fields.len(), r.builtin), ("float3", 12, 4, 3, true));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordType {
    /// The C type name kernels use (a C identifier).
    pub name: &'static str,
    /// `sizeof`, in bytes.
    pub size: usize,
    /// `alignof`, in bytes.
    pub align: usize,
    /// The fields, in declaration order.
    pub fields: &'static [RecordField],
    /// Defined by CUDA (the vector types): never declared by generated code.
    pub builtin: bool,
}

const fn round_up(v: usize, align: usize) -> usize {
    v.div_ceil(align) * align
}

impl RecordType {
    /// True when a C compiler lays the fields out where Rust does: each field at its
    /// offset by C's rules (the previous end rounded up to the field's alignment), and
    /// the size the last end rounded up to the struct's alignment, with no padding
    /// anywhere (the storage is plain data that the device may write in full).
    /// [`crate::struct_element!`] checks it at compile time.
    pub const fn c_layout_matches(&self) -> bool {
        let mut end = 0usize;
        let mut max_align = 1usize;
        let mut k = 0;
        while k < self.fields.len() {
            let f = &self.fields[k];
            let a = f.dtype.align_bytes();
            if a > max_align {
                max_align = a;
            }
            if round_up(end, a) != f.offset || f.offset != end {
                return false;
            }
            end = f.offset + f.size_bytes();
            k += 1;
        }
        self.align >= max_align
            && self.align.is_power_of_two()
            && round_up(end, self.align) == self.size
            && end == self.size
    }

    /// True when `name` is a C identifier (`[A-Za-z_][A-Za-z0-9_]*`) and not one of the
    /// C type keywords: what a struct element's C name must be
    /// ([`crate::struct_element!`] checks it at compile time).
    pub const fn is_c_identifier(name: &str) -> bool {
        let b = name.as_bytes();
        if b.is_empty() || b[0].is_ascii_digit() {
            return false;
        }
        let mut k = 0;
        while k < b.len() {
            if !(b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                return false;
            }
            k += 1;
        }
        const KEYWORDS: [&str; 12] = [
            "bool", "char", "short", "int", "long", "float", "double", "void", "signed",
            "unsigned", "struct", "union",
        ];
        let mut w = 0;
        while w < KEYWORDS.len() {
            let kw = KEYWORDS[w].as_bytes();
            if kw.len() == b.len() {
                let mut same = true;
                let mut j = 0;
                while j < kw.len() {
                    same &= kw[j] == b[j];
                    j += 1;
                }
                if same {
                    return false;
                }
            }
            w += 1;
        }
        true
    }

    /// The C++ definition generated kernels put in their prelude (empty for CUDA's own
    /// types): `struct alignas(A) NAME { T field; U items[N]; ... };`.
    ///
    /// ```
    /// use rucuda_array::vec::Float3;
    /// #[repr(C)]
    /// #[derive(Debug, Clone, Copy, PartialEq)]
    /// struct Particle { pos: Float3, mass: f32, ids: [i32; 2] }
    /// rucuda_array::struct_element!(Particle as "particle" { pos: Float3, mass: f32, ids: [i32; 2] });
    ///
    /// use rucuda_array::{DType, Element};
    /// let DType::Record(r) = Particle::DTYPE else { unreachable!() };
    /// assert_eq!(
    ///     r.c_definition(),
    ///     "struct alignas(4) particle {\n  float3 pos;\n  float mass;\n  int ids[2];\n};\n"
    /// );
    /// ```
    pub fn c_definition(&self) -> String {
        if self.builtin {
            return String::new();
        }
        let mut s = format!("struct alignas({}) {} {{\n", self.align, self.name);
        for f in self.fields {
            s.push_str("  ");
            s.push_str(f.dtype.c_type());
            s.push(' ');
            s.push_str(f.name);
            if f.len > 0 {
                s.push_str(&format!("[{}]", f.len));
            }
            s.push_str(";\n");
        }
        s.push_str("};\n");
        s
    }
}

/// `UnsupportedType` for struct and vector types in an operation that needs numbers
/// (`ones`, `arange`, `linspace`, casts to another type).
pub(crate) fn require_number(dtype: DType, operation: &'static str) -> crate::Result<()> {
    if dtype.is_record() {
        return Err(crate::ArrayError::UnsupportedType { operation, dtype });
    }
    Ok(())
}

/// A field type of a struct element: a number type, a struct or vector element, or an
/// array `[T; N]` of one of those. Gives the field's [`DType`] and array length.
///
/// # Safety
/// `DTYPE` must describe `Self` (for arrays: one item) exactly: its size, alignment and
/// C type, and every bit pattern of `Self` must be valid (`bool` is not a field type).
pub unsafe trait FieldType: Copy + 'static {
    /// The element type (of one item, for arrays).
    const DTYPE: DType;
    /// 0, or `N` for `[T; N]`.
    const LEN: usize;
}

macro_rules! number_fields {
    ($($t:ty),*) => {$(
        // SAFETY: the number types' DTYPE describes them; every bit pattern is valid.
        unsafe impl FieldType for $t {
            const DTYPE: DType = <$t as Element>::DTYPE;
            const LEN: usize = 0;
        }
        // SAFETY: N items of a valid field type, no padding between them.
        unsafe impl<const N: usize> FieldType for [$t; N] {
            const DTYPE: DType = <$t as Element>::DTYPE;
            const LEN: usize = N;
        }
    )*};
}

number_fields!(
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    f16,
    bf16,
    f32,
    f64,
    Complex<f32>,
    Complex<f64>
);

// SAFETY: a struct element's DTYPE describes it (StructElement's contract).
unsafe impl<T: StructElement> FieldType for T {
    const DTYPE: DType = DType::Record(T::RECORD);
    const LEN: usize = 0;
}

/// A plain `#[repr(C)]` type that a [`crate::GpuArray`] can hold: CUDA's vector types
/// ([`crate::vec`]) and structs of your own, declared with [`crate::struct_element!`]
/// (which checks everything this trait asks). Every `StructElement` is an
/// [`Element`](crate::Element) whose [`DType`] is [`DType::Record`].
///
/// # Safety
/// - `Self` is `bytemuck::Pod`: no padding, every bit pattern valid (the device may write
///   any bytes);
/// - `RECORD` describes it exactly: `size`/`align` are `size_of`/`align_of`, each field's
///   offset, type and length are Rust's, and for a non-builtin type the C definition
///   [`RecordType::c_definition`] gives has the same layout on the device
///   ([`RecordType::c_layout_matches`]); for a builtin type, `name` is a CUDA type of
///   exactly this layout.
pub unsafe trait StructElement:
    bytemuck::Pod + Send + Sync + PartialEq + std::fmt::Debug + 'static
{
    /// The C name, layout and fields.
    const RECORD: &'static RecordType;
}

/// The device storage of a struct element: the value itself, as a driver
/// [`rucuda_driver::DeviceRepr`] with the record's C name.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecordStorage<T>(pub T);

// SAFETY: transparent over a Pod `T` (StructElement's contract): plain data, the C name
// is the record's, whose device layout is `T`'s.
unsafe impl<T: StructElement> rucuda_driver::DeviceRepr for RecordStorage<T> {
    const C_TYPE: &'static str = T::RECORD.name;
}
// SAFETY: transparent over a Pod `T`.
unsafe impl<T: StructElement> bytemuck::Zeroable for RecordStorage<T> {}
// SAFETY: transparent over a Pod `T`.
unsafe impl<T: StructElement> bytemuck::Pod for RecordStorage<T> {}

impl<T: StructElement> super::element::sealed::Sealed for T {}

impl<T: StructElement> Element for T {
    type Storage = RecordStorage<T>;
    const DTYPE: DType = DType::Record(T::RECORD);

    #[inline]
    fn to_storage(self) -> RecordStorage<T> {
        RecordStorage(self)
    }
    #[inline]
    fn from_storage(bits: RecordStorage<T>) -> T {
        bits.0
    }
    /// Struct elements are not numbers: all-zero bits (the operations that convert
    /// numbers, `ones`, `arange`, `linspace`, refuse struct types before asking).
    fn from_f64(_: f64) -> T {
        T::zeroed()
    }
    /// Struct elements are not numbers: `(0, 0)`.
    fn to_complex_f64(self) -> (f64, f64) {
        (0.0, 0.0)
    }
    fn slice_to_storage(values: &[T]) -> Cow<'_, [RecordStorage<T>]> {
        Cow::Borrowed(bytemuck::cast_slice(values))
    }
    fn vec_from_storage(stored: Vec<RecordStorage<T>>) -> Vec<T> {
        match bytemuck::allocation::try_cast_vec(stored) {
            Ok(v) => v,
            Err((_, stored)) => stored.into_iter().map(|s| s.0).collect(),
        }
    }
}

/// Declares a `#[repr(C)]` struct of yours a [`StructElement`] (so a [`crate::Element`])
/// with the C name kernels use, checking at compile time everything the trait's safety
/// contract asks: the listed fields are the struct's, with those types, in order, with
/// no padding between or after them, each a [`FieldType`] (numbers, vector and struct
/// elements, arrays of those). Implements `bytemuck::Pod` and `Zeroable` for it.
///
/// ```
/// use rucuda_array::{vec::Float2, DType, Element};
/// #[repr(C)]
/// #[derive(Debug, Clone, Copy, PartialEq)]
/// struct Sample { pos: Float2, weight: f32, label: u32 }
/// rucuda_array::struct_element!(Sample as "sample" { pos: Float2, weight: f32, label: u32 });
/// assert_eq!(Sample::DTYPE.c_type(), "sample");
/// assert_eq!(Sample::DTYPE.size_bytes(), 16);
/// ```
///
/// A struct with padding is refused (here 4 bytes after `weight`):
///
/// ```compile_fail
/// #[repr(C)]
/// #[derive(Debug, Clone, Copy, PartialEq)]
/// struct Padded { x: f64, weight: f32 }
/// rucuda_array::struct_element!(Padded as "padded" { x: f64, weight: f32 });
/// ```
///
/// as is a field list that is not the struct's (a wrong type here):
///
/// ```compile_fail
/// #[repr(C)]
/// #[derive(Debug, Clone, Copy, PartialEq)]
/// struct Pair { a: f32, b: f32 }
/// rucuda_array::struct_element!(Pair as "pair" { a: f32, b: i32 });
/// ```
#[macro_export]
macro_rules! struct_element {
    ($t:ident as $c_name:literal { $($field:ident : $fty:ty),+ $(,)? }) => {
        const _: () = {
            // Every field is named with its type (a mismatch does not compile), and the
            // list covers the struct (a missing field fails the size check below).
            #[allow(dead_code)]
            fn fields_have_these_types(v: &$t) {
                $( let _: &$fty = &v.$field; )+
                let $t { $($field: _),+ } = *v;
            }
            const RECORD: $crate::dtype::RecordType = $crate::dtype::RecordType {
                name: $c_name,
                size: ::core::mem::size_of::<$t>(),
                align: ::core::mem::align_of::<$t>(),
                fields: &[$(
                    $crate::dtype::RecordField::of::<$fty>(
                        stringify!($field),
                        ::core::mem::offset_of!($t, $field),
                    )
                ),+],
                builtin: false,
            };
            assert!(
                $crate::dtype::RecordType::is_c_identifier($c_name),
                concat!("struct_element!(", stringify!($t), "): the C name must be a C identifier")
            );
            assert!(
                RECORD.c_layout_matches(),
                concat!(
                    "struct_element!(", stringify!($t), "): the struct must be #[repr(C)] ",
                    "with the listed fields in order and no padding (add explicit padding fields)"
                )
            );
            // SAFETY: the asserts above: repr(C) fields, in order, of these field types
            // (plain numbers or Pod elements, every bit pattern valid), with no padding
            // anywhere; so all-zero and every other bit pattern is a valid value.
            unsafe impl $crate::__private::bytemuck::Zeroable for $t {}
            // SAFETY: as above; `Copy + 'static` is required by the trait itself.
            unsafe impl $crate::__private::bytemuck::Pod for $t {}
            // SAFETY: RECORD was built from the type's own size, alignment and field
            // offsets, and its C layout was checked to match at compile time.
            unsafe impl $crate::dtype::StructElement for $t {
                const RECORD: &'static $crate::dtype::RecordType = &RECORD;
            }
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    const F32: DType = DType::F32;

    fn rec(fields: &'static [RecordField], size: usize, align: usize) -> RecordType {
        RecordType {
            name: "t",
            size,
            align,
            fields,
            builtin: false,
        }
    }

    #[test]
    fn c_layouts_are_checked_field_by_field() {
        let field = |name, dtype, len, offset| RecordField {
            name,
            dtype,
            len,
            offset,
        };
        static OK: [RecordField; 2] = [
            RecordField {
                name: "a",
                dtype: F32,
                len: 0,
                offset: 0,
            },
            RecordField {
                name: "b",
                dtype: DType::I16,
                len: 2,
                offset: 4,
            },
        ];
        assert!(rec(&OK, 8, 4).c_layout_matches());
        // Tail padding (size 16 for 8 bytes of fields), a wrong alignment, a gap.
        assert!(!rec(&OK, 16, 4).c_layout_matches());
        assert!(!rec(&OK, 8, 2).c_layout_matches());
        assert!(!rec(&OK, 8, 3).c_layout_matches());
        static GAP: [RecordField; 2] = [
            RecordField {
                name: "a",
                dtype: DType::U8,
                len: 0,
                offset: 0,
            },
            RecordField {
                name: "b",
                dtype: F32,
                len: 0,
                offset: 4,
            },
        ];
        assert!(!rec(&GAP, 8, 4).c_layout_matches());
        let f = field("x", DType::C128, 3, 0);
        assert_eq!(f.size_bytes(), 48);
        assert_eq!(
            rec(&OK, 8, 4).c_definition(),
            "struct alignas(4) t {\n  float a;\n  short b[2];\n};\n"
        );
        assert!(require_number(DType::F32, "x").is_ok());
        assert!(RecordType::is_c_identifier("particle_2"));
        for bad in ["", "2x", "a-b", "float", "my struct"] {
            assert!(!RecordType::is_c_identifier(bad), "{bad}");
        }
    }

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Pair {
        a: f32,
        b: f32,
    }
    crate::struct_element!(Pair as "rucuda_test_pair" { a: f32, b: f32 });

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct OtherPair {
        a: i32,
        b: i32,
    }
    crate::struct_element!(OtherPair as "rucuda_test_pair" { a: i32, b: i32 });

    #[test]
    fn registration_refuses_a_name_taken_by_another_type() {
        let d = super::super::register_dtype::<Pair>().unwrap();
        assert_eq!(super::super::register_dtype::<Pair>().unwrap(), d);
        assert!(super::super::register_dtype::<OtherPair>().is_err());
        assert_eq!(DType::from_name("rucuda_test_pair"), Some(d));
        assert!(require_number(d, "ones").is_err());
        let v = [Pair { a: 1.0, b: -2.0 }];
        assert_eq!(
            Pair::vec_from_storage(Pair::slice_to_storage(&v).into_owned()),
            v
        );
        assert_eq!(Pair::from_f64(3.0), Pair { a: 0.0, b: 0.0 });
    }
}
