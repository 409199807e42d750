//! The vector types' layouts against CUDA's `vector_types.h` (64-bit Linux).

use super::*;
use crate::dtype::{DType, StructElement};
use crate::Element;

fn layout<T: StructElement>() -> (&'static str, usize, usize) {
    let r = T::RECORD;
    assert_eq!(r.size, std::mem::size_of::<T>(), "{}", r.name);
    assert_eq!(r.align, std::mem::align_of::<T>(), "{}", r.name);
    assert!(r.c_layout_matches(), "{}", r.name);
    assert!(r.builtin && r.c_definition().is_empty());
    assert_eq!(T::DTYPE, DType::Record(r));
    assert_eq!(T::DTYPE.c_type(), r.name);
    (r.name, r.size, r.align)
}

#[test]
fn every_vector_type_has_cudas_size_and_alignment() {
    // (C name, sizeof, alignof) as CUDA 12/13's vector_types.h gives them on LP64.
    let want = [
        layout::<Char1>() == ("char1", 1, 1),
        layout::<Char2>() == ("char2", 2, 2),
        layout::<Char3>() == ("char3", 3, 1),
        layout::<Char4>() == ("char4", 4, 4),
        layout::<Uchar1>() == ("uchar1", 1, 1),
        layout::<Uchar2>() == ("uchar2", 2, 2),
        layout::<Uchar3>() == ("uchar3", 3, 1),
        layout::<Uchar4>() == ("uchar4", 4, 4),
        layout::<Short1>() == ("short1", 2, 2),
        layout::<Short2>() == ("short2", 4, 4),
        layout::<Short3>() == ("short3", 6, 2),
        layout::<Short4>() == ("short4", 8, 8),
        layout::<Ushort1>() == ("ushort1", 2, 2),
        layout::<Ushort2>() == ("ushort2", 4, 4),
        layout::<Ushort3>() == ("ushort3", 6, 2),
        layout::<Ushort4>() == ("ushort4", 8, 8),
        layout::<Int1>() == ("int1", 4, 4),
        layout::<Int2>() == ("int2", 8, 8),
        layout::<Int3>() == ("int3", 12, 4),
        layout::<Int4>() == ("int4", 16, 16),
        layout::<Uint1>() == ("uint1", 4, 4),
        layout::<Uint2>() == ("uint2", 8, 8),
        layout::<Uint3>() == ("uint3", 12, 4),
        layout::<Uint4>() == ("uint4", 16, 16),
        layout::<Long1>() == ("long1", 8, 8),
        layout::<Long2>() == ("long2", 16, 16),
        layout::<Long3>() == ("long3", 24, 8),
        layout::<Long4>() == ("long4", 32, 16),
        layout::<Ulong1>() == ("ulong1", 8, 8),
        layout::<Ulong2>() == ("ulong2", 16, 16),
        layout::<Ulong3>() == ("ulong3", 24, 8),
        layout::<Ulong4>() == ("ulong4", 32, 16),
        layout::<Longlong1>() == ("longlong1", 8, 8),
        layout::<Longlong2>() == ("longlong2", 16, 16),
        layout::<Longlong3>() == ("longlong3", 24, 8),
        layout::<Longlong4>() == ("longlong4", 32, 16),
        layout::<Ulonglong1>() == ("ulonglong1", 8, 8),
        layout::<Ulonglong2>() == ("ulonglong2", 16, 16),
        layout::<Ulonglong3>() == ("ulonglong3", 24, 8),
        layout::<Ulonglong4>() == ("ulonglong4", 32, 16),
        layout::<Float1>() == ("float1", 4, 4),
        layout::<Float2>() == ("float2", 8, 8),
        layout::<Float3>() == ("float3", 12, 4),
        layout::<Float4>() == ("float4", 16, 16),
        layout::<Double1>() == ("double1", 8, 8),
        layout::<Double2>() == ("double2", 16, 16),
        layout::<Double3>() == ("double3", 24, 8),
        layout::<Double4>() == ("double4", 32, 16),
    ];
    for (k, ok) in want.iter().enumerate() {
        assert!(ok, "vector type #{k} differs from CUDA's layout");
    }
    assert_eq!(VECTOR_DTYPES.len(), 48);
}

#[test]
fn vector_names_parse_and_look_up() {
    assert_eq!(DType::from_name("double2"), Some(Double2::DTYPE));
    let args = crate::codegen::parse_arguments("const float3 *p, float4 s, long2 *q").unwrap();
    assert_eq!(args[0].dtype(), Float3::DTYPE);
    assert_eq!(args[0].declarator(), "const float3 *p");
    assert_eq!(args[1].dtype(), Float4::DTYPE);
    assert_eq!(args[2].dtype(), Long2::DTYPE);
    assert_eq!(make_float3(1.0, 2.0, 3.0), Float3::new(1.0, 2.0, 3.0));
    assert_eq!(make_char4(1, -2, 3, 4).y, -2);
}

#[test]
fn vector_values_round_trip_through_storage_and_scalars() {
    let v = [make_double3(1.0, -2.0, 3.5), make_double3(0.0, 4.0, -1.0)];
    let stored = Double3::slice_to_storage(&v);
    assert_eq!(Double3::vec_from_storage(stored.into_owned()), v);
    let s = crate::elementwise::ScalarValue::new(make_double4(1.0, 2.0, 3.0, 4.0));
    assert_eq!(s.bytes().len(), 32);
    assert_eq!(s.dtype(), Double4::DTYPE);
    assert_eq!(
        bytemuck::cast_slice::<u8, f64>(s.bytes()),
        &[1.0, 2.0, 3.0, 4.0]
    );
    assert!(s.convert_to(DType::F64).is_err());
}
