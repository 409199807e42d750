//! CUDA's vector types as array elements (PyCUDA's `gpuarray.vec`): `char1` ... `double4`
//! with the layouts of CUDA's `vector_types.h` on 64-bit Linux (the types are
//! [`rucuda_driver::vector`]'s, re-exported), their `make_*` constructors, and their
//! [`StructElement`] impls, so a `GpuArray<Float3>` is filled, copied, gathered and
//! passed to your kernels, which see CUDA's own `float3`.
//!
//! ```no_run
//! use rucuda_array::{vec::{self, Float3}, GpuArray};
//! # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
//! let mut a = GpuArray::<Float3>::empty(&stream, &[1000])?;
//! a.fill(vec::make_float3(1.0, 2.0, 3.0))?;
//! assert_eq!(a.to_vec()?[999], Float3::new(1.0, 2.0, 3.0));
//! # Ok::<(), rucuda_array::ArrayError>(())
//! ```
//!
//! | C type | size | align | | C type | size | align |
//! |---|---|---|---|---|---|---|
//! | `char1`/`uchar1` | 1 | 1 | | `char3` | 3 | 1 |
//! | `char2` | 2 | 2 | | `char4` | 4 | 4 |
//! | `short2` | 4 | 4 | | `short3` | 6 | 2 |
//! | `int2`/`float2` | 8 | 8 | | `int3`/`float3` | 12 | 4 |
//! | `int4`/`float4` | 16 | 16 | | `long2`/`double2` | 16 | 16 |
//! | `long3`/`double3` | 24 | 8 | | `long4`/`double4` | 32 | 16 |

use crate::dtype::{DType, RecordField, RecordType, StructElement};

pub use rucuda_driver::vector::*;

macro_rules! vector_element {
    ($name:ident, $t:ty, $c:literal, $make:ident, [$($f:ident),+]) => {
        // SAFETY: CUDA's own type of this name has exactly this layout (the driver's
        // definition, checked by the layout test); Pod; the fields are the components.
        unsafe impl StructElement for $name {
            const RECORD: &'static RecordType = &RecordType {
                name: $c,
                size: std::mem::size_of::<$name>(),
                align: std::mem::align_of::<$name>(),
                fields: &[$(RecordField::of::<$t>(stringify!($f), std::mem::offset_of!($name, $f))),+],
                builtin: true,
            };
        }

        #[doc = concat!("CUDA's `make_", $c, "`: a [`", stringify!($name), "`] of its components.")]
        #[inline]
        pub const fn $make($($f: $t),+) -> $name {
            $name::new($($f),+)
        }
    };
}

vector_element!(Char1, i8, "char1", make_char1, [x]);
vector_element!(Char2, i8, "char2", make_char2, [x, y]);
vector_element!(Char3, i8, "char3", make_char3, [x, y, z]);
vector_element!(Char4, i8, "char4", make_char4, [x, y, z, w]);
vector_element!(Uchar1, u8, "uchar1", make_uchar1, [x]);
vector_element!(Uchar2, u8, "uchar2", make_uchar2, [x, y]);
vector_element!(Uchar3, u8, "uchar3", make_uchar3, [x, y, z]);
vector_element!(Uchar4, u8, "uchar4", make_uchar4, [x, y, z, w]);
vector_element!(Short1, i16, "short1", make_short1, [x]);
vector_element!(Short2, i16, "short2", make_short2, [x, y]);
vector_element!(Short3, i16, "short3", make_short3, [x, y, z]);
vector_element!(Short4, i16, "short4", make_short4, [x, y, z, w]);
vector_element!(Ushort1, u16, "ushort1", make_ushort1, [x]);
vector_element!(Ushort2, u16, "ushort2", make_ushort2, [x, y]);
vector_element!(Ushort3, u16, "ushort3", make_ushort3, [x, y, z]);
vector_element!(Ushort4, u16, "ushort4", make_ushort4, [x, y, z, w]);
vector_element!(Int1, i32, "int1", make_int1, [x]);
vector_element!(Int2, i32, "int2", make_int2, [x, y]);
vector_element!(Int3, i32, "int3", make_int3, [x, y, z]);
vector_element!(Int4, i32, "int4", make_int4, [x, y, z, w]);
vector_element!(Uint1, u32, "uint1", make_uint1, [x]);
vector_element!(Uint2, u32, "uint2", make_uint2, [x, y]);
vector_element!(Uint3, u32, "uint3", make_uint3, [x, y, z]);
vector_element!(Uint4, u32, "uint4", make_uint4, [x, y, z, w]);
vector_element!(Long1, i64, "long1", make_long1, [x]);
vector_element!(Long2, i64, "long2", make_long2, [x, y]);
vector_element!(Long3, i64, "long3", make_long3, [x, y, z]);
vector_element!(Long4, i64, "long4", make_long4, [x, y, z, w]);
vector_element!(Ulong1, u64, "ulong1", make_ulong1, [x]);
vector_element!(Ulong2, u64, "ulong2", make_ulong2, [x, y]);
vector_element!(Ulong3, u64, "ulong3", make_ulong3, [x, y, z]);
vector_element!(Ulong4, u64, "ulong4", make_ulong4, [x, y, z, w]);
vector_element!(Longlong1, i64, "longlong1", make_longlong1, [x]);
vector_element!(Longlong2, i64, "longlong2", make_longlong2, [x, y]);
vector_element!(Longlong3, i64, "longlong3", make_longlong3, [x, y, z]);
vector_element!(Longlong4, i64, "longlong4", make_longlong4, [x, y, z, w]);
vector_element!(Ulonglong1, u64, "ulonglong1", make_ulonglong1, [x]);
vector_element!(Ulonglong2, u64, "ulonglong2", make_ulonglong2, [x, y]);
vector_element!(Ulonglong3, u64, "ulonglong3", make_ulonglong3, [x, y, z]);
vector_element!(Ulonglong4, u64, "ulonglong4", make_ulonglong4, [x, y, z, w]);
vector_element!(Float1, f32, "float1", make_float1, [x]);
vector_element!(Float2, f32, "float2", make_float2, [x, y]);
vector_element!(Float3, f32, "float3", make_float3, [x, y, z]);
vector_element!(Float4, f32, "float4", make_float4, [x, y, z, w]);
vector_element!(Double1, f64, "double1", make_double1, [x]);
vector_element!(Double2, f64, "double2", make_double2, [x, y]);
vector_element!(Double3, f64, "double3", make_double3, [x, y, z]);
vector_element!(Double4, f64, "double4", make_double4, [x, y, z, w]);

/// Every vector type, as `DType::Record`s.
pub(crate) const VECTOR_DTYPES: [DType; 48] = [
    DType::Record(<Char1 as StructElement>::RECORD),
    DType::Record(<Char2 as StructElement>::RECORD),
    DType::Record(<Char3 as StructElement>::RECORD),
    DType::Record(<Char4 as StructElement>::RECORD),
    DType::Record(<Uchar1 as StructElement>::RECORD),
    DType::Record(<Uchar2 as StructElement>::RECORD),
    DType::Record(<Uchar3 as StructElement>::RECORD),
    DType::Record(<Uchar4 as StructElement>::RECORD),
    DType::Record(<Short1 as StructElement>::RECORD),
    DType::Record(<Short2 as StructElement>::RECORD),
    DType::Record(<Short3 as StructElement>::RECORD),
    DType::Record(<Short4 as StructElement>::RECORD),
    DType::Record(<Ushort1 as StructElement>::RECORD),
    DType::Record(<Ushort2 as StructElement>::RECORD),
    DType::Record(<Ushort3 as StructElement>::RECORD),
    DType::Record(<Ushort4 as StructElement>::RECORD),
    DType::Record(<Int1 as StructElement>::RECORD),
    DType::Record(<Int2 as StructElement>::RECORD),
    DType::Record(<Int3 as StructElement>::RECORD),
    DType::Record(<Int4 as StructElement>::RECORD),
    DType::Record(<Uint1 as StructElement>::RECORD),
    DType::Record(<Uint2 as StructElement>::RECORD),
    DType::Record(<Uint3 as StructElement>::RECORD),
    DType::Record(<Uint4 as StructElement>::RECORD),
    DType::Record(<Long1 as StructElement>::RECORD),
    DType::Record(<Long2 as StructElement>::RECORD),
    DType::Record(<Long3 as StructElement>::RECORD),
    DType::Record(<Long4 as StructElement>::RECORD),
    DType::Record(<Ulong1 as StructElement>::RECORD),
    DType::Record(<Ulong2 as StructElement>::RECORD),
    DType::Record(<Ulong3 as StructElement>::RECORD),
    DType::Record(<Ulong4 as StructElement>::RECORD),
    DType::Record(<Longlong1 as StructElement>::RECORD),
    DType::Record(<Longlong2 as StructElement>::RECORD),
    DType::Record(<Longlong3 as StructElement>::RECORD),
    DType::Record(<Longlong4 as StructElement>::RECORD),
    DType::Record(<Ulonglong1 as StructElement>::RECORD),
    DType::Record(<Ulonglong2 as StructElement>::RECORD),
    DType::Record(<Ulonglong3 as StructElement>::RECORD),
    DType::Record(<Ulonglong4 as StructElement>::RECORD),
    DType::Record(<Float1 as StructElement>::RECORD),
    DType::Record(<Float2 as StructElement>::RECORD),
    DType::Record(<Float3 as StructElement>::RECORD),
    DType::Record(<Float4 as StructElement>::RECORD),
    DType::Record(<Double1 as StructElement>::RECORD),
    DType::Record(<Double2 as StructElement>::RECORD),
    DType::Record(<Double3 as StructElement>::RECORD),
    DType::Record(<Double4 as StructElement>::RECORD),
];

#[cfg(test)]
#[path = "vec_tests.rs"]
mod tests;
