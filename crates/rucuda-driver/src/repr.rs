//! [`DeviceRepr`]: the types that may live in device memory and be kernel arguments.

/// Plain data that may be copied to and from the device byte for byte.
///
/// # Safety
/// Implementors must be `Copy`, contain no pointers to host memory or padding that
/// matters, and every bit pattern must be a valid value (so bytes written by a kernel
/// can be read back as `Self`). `C_TYPE` must name the C type with the same layout.
pub unsafe trait DeviceRepr: Copy + Send + Sync + 'static {
    /// The C/CUDA name of the type, for code generators (`"float"`, `"unsigned int"`).
    const C_TYPE: &'static str;
}

macro_rules! device_repr {
    ($($t:ty => $c:literal),* $(,)?) => {
        $(
            // SAFETY: a primitive number: every bit pattern is valid, no pointers.
            unsafe impl DeviceRepr for $t {
                const C_TYPE: &'static str = $c;
            }
        )*
    };
}

device_repr! {
    i8 => "signed char", u8 => "unsigned char",
    i16 => "short", u16 => "unsigned short",
    i32 => "int", u32 => "unsigned int",
    i64 => "long long", u64 => "unsigned long long",
    isize => "long long", usize => "unsigned long long",
    f32 => "float", f64 => "double",
}

// SAFETY: an array of plain data is plain data of the same kind.
unsafe impl<T: DeviceRepr, const N: usize> DeviceRepr for [T; N] {
    const C_TYPE: &'static str = T::C_TYPE;
}

/// CUDA's vector types (`float4`, `int2`, ...) with their C alignment, usable as kernel
/// arguments and device data.
pub mod vector {
    macro_rules! vector_type {
        ($name:ident, $t:ty, $align:literal, $c:literal, [$($f:ident),+]) => {
            #[doc = concat!("CUDA's `", $c, "`.")]
            #[repr(C, align($align))]
            #[derive(Debug, Clone, Copy, PartialEq, Default)]
            pub struct $name {
                $(
                    #[doc = concat!("The `", stringify!($f), "` component.")]
                    pub $f: $t,
                )+
            }
            // SAFETY: repr(C) plain numbers, no padding inside (sizes are multiples of the alignment).
            unsafe impl super::DeviceRepr for $name {
                const C_TYPE: &'static str = $c;
            }
        };
    }
    vector_type!(Float2, f32, 8, "float2", [x, y]);
    vector_type!(Float4, f32, 16, "float4", [x, y, z, w]);
    vector_type!(Double2, f64, 16, "double2", [x, y]);
    vector_type!(Int2, i32, 8, "int2", [x, y]);
    vector_type!(Int4, i32, 16, "int4", [x, y, z, w]);
    vector_type!(Uint2, u32, 8, "uint2", [x, y]);
    vector_type!(Uint4, u32, 16, "uint4", [x, y, z, w]);
    vector_type!(Longlong2, i64, 16, "longlong2", [x, y]);
}
