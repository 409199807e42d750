//! [`DeviceRepr`]: the types that may live in device memory and be kernel arguments, and
//! [`device_repr!`](crate::device_repr), the one way to make a `bytemuck::Pod` type of
//! your own one.

/// Plain data that may be copied to and from the device byte for byte.
///
/// Implemented for the primitive numbers, arrays of them, CUDA's vector types
/// ([`vector`]), `half::f16`, `half::bf16`, `num_complex::Complex<f32>` and
/// `Complex<f64>`. For a plain-data type of your own, derive `bytemuck::Pod` and use
/// [`device_repr!`](crate::device_repr) rather than writing the `unsafe impl`.
///
/// ```
/// use rucuda_driver::DeviceRepr;
/// assert_eq!(<half::f16 as DeviceRepr>::C_TYPE, "rucuda_half");
/// assert_eq!(<num_complex::Complex<f64> as DeviceRepr>::C_TYPE, "rucuda_complex128");
/// ```
///
/// ```no_run
/// use half::{bf16, f16};
/// use num_complex::Complex;
/// use rucuda_driver::{Device, DeviceBuffer};
/// let ctx = Device::get(0)?.primary_context()?;
/// let h = DeviceBuffer::from_slice(&ctx, &[f16::from_f32(0.5), f16::ONE])?;
/// let b = DeviceBuffer::from_slice(&ctx, &[bf16::from_f32(0.5)])?;
/// let z = DeviceBuffer::from_slice(&ctx, &[Complex::new(1.0f32, 2.0)])?;
/// let w = DeviceBuffer::from_slice(&ctx, &[Complex::new(1.0f64, -2.0)])?;
/// assert_eq!(h.to_vec()?[1], f16::ONE);
/// # let _ = (b, z, w);
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
///
/// # Safety
/// Implementors must be `Copy`, contain no pointers to host memory or padding that
/// matters, and every bit pattern must be a valid value (so bytes written by a kernel
/// can be read back as `Self`). `C_TYPE` must name the C type with the same layout.
pub unsafe trait DeviceRepr: Copy + Send + Sync + 'static {
    /// The C/CUDA name of the type, for code generators (`"float"`, `"unsigned int"`).
    const C_TYPE: &'static str;
}

macro_rules! primitive_repr {
    ($($t:ty => $c:literal),* $(,)?) => {
        $(
            // SAFETY: a primitive number: every bit pattern is valid, no pointers.
            unsafe impl DeviceRepr for $t {
                const C_TYPE: &'static str = $c;
            }
        )*
    };
}

primitive_repr! {
    i8 => "signed char", u8 => "unsigned char",
    i16 => "short", u16 => "unsigned short",
    i32 => "int", u32 => "unsigned int",
    i64 => "long long", u64 => "unsigned long long",
    isize => "long long", usize => "unsigned long long",
    f32 => "float", f64 => "double",
}

use crate::error::Error;
// The C names are rucuda-array's (its code generators define these types in the kernel
// prelude, with the layouts of `__half`, `__nv_bfloat16` and `cuComplex`/`cuDoubleComplex`),
// so a kernel generated for a `GpuArray` and one reading a `DeviceBuffer` agree.
// SAFETY: IEEE binary16 and bfloat16 are 16 bits with every bit pattern a value (NaNs
// included), `#[repr(transparent)]` over `u16` in `half`; no pointers.
unsafe impl DeviceRepr for half::f16 {
    const C_TYPE: &'static str = "rucuda_half";
}
// SAFETY: as for `f16` just above.
unsafe impl DeviceRepr for half::bf16 {
    const C_TYPE: &'static str = "rucuda_bfloat16";
}
// SAFETY: `Complex<T>` is `#[repr(C)] { re: T, im: T }`: two floats, no padding, every bit
// pattern valid.
unsafe impl DeviceRepr for num_complex::Complex<f32> {
    const C_TYPE: &'static str = "rucuda_complex64";
}
// SAFETY: as for `Complex<f32>` just above.
unsafe impl DeviceRepr for num_complex::Complex<f64> {
    const C_TYPE: &'static str = "rucuda_complex128";
}

// SAFETY: an array of plain data is plain data of the same kind.
unsafe impl<T: DeviceRepr, const N: usize> DeviceRepr for [T; N] {
    const C_TYPE: &'static str = T::C_TYPE;
}

/// Makes a `bytemuck::Pod` type of yours a [`DeviceRepr`] with the C type name `c_type`:
/// `device_repr!(MyType, "my_c_type");`. It fails to compile unless the type is `Pod`
/// (plain data, no padding, every bit pattern valid: what the device may write), `Send`
/// and `Sync`; the C name is what code generators write for it (make it a type of the
/// same layout in your kernel).
///
/// Why a macro and not a blanket `impl<T: Pod> DeviceRepr for T`: each type needs its own
/// C name, and a blanket impl would collide with the impls for `f16` and `Complex`. Why
/// not a `PodElement<T>` wrapper: the wrapper would have to be unwrapped at every copy.
///
/// ```
/// use rucuda_driver::{device_repr, DeviceRepr};
///
/// #[repr(C)]
/// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
/// struct Particle {
///     position: [f32; 3],
///     mass: f32,
/// }
/// device_repr!(Particle, "struct particle");
///
/// assert_eq!(Particle::C_TYPE, "struct particle");
/// // DeviceBuffer::<Particle>::from_slice(&ctx, &particles)? now works.
/// ```
///
/// A type that is not `Pod` (here: padding between the fields) is refused at compile
/// time:
///
/// ```compile_fail
/// #[repr(C)]
/// #[derive(Clone, Copy)]
/// struct Padded { a: u8, b: u32 }
/// rucuda_driver::device_repr!(Padded, "struct padded");
/// ```
#[macro_export]
macro_rules! device_repr {
    ($t:ty, $c_type:expr $(,)?) => {
        const _: fn() = $crate::__private::assert_pod::<$t>;
        // SAFETY: the line above compiles only when `$t: bytemuck::Pod + Send + Sync`:
        // `Copy`, no padding, no pointers that `Send + Sync` would not allow, every bit
        // pattern valid; that is all `DeviceRepr` asks, with the C name given.
        unsafe impl $crate::DeviceRepr for $t {
            const C_TYPE: &'static str = $c_type;
        }
    };
}

/// What [`device_repr!`](crate::device_repr) expands to; not a public API.
#[doc(hidden)]
pub mod __private {
    /// Compiles only for `Pod + Send + Sync` types.
    pub fn assert_pod<T: bytemuck::Pod + Send + Sync>() {}
}

/// CUDA's vector types (`char1` ... `double4`, PyCUDA's `gpuarray.vec`) with the layouts
/// of CUDA's `vector_types.h` on 64-bit Linux: usable as kernel arguments and device
/// data (and, through rucuda-array, as `GpuArray` elements).
///
/// Alignment: the 1-vectors and 3-vectors have their component's alignment (`float3`
/// is 12 bytes aligned to 4, `char3` 3 bytes aligned to 1); the 2- and 4-vectors are
/// aligned to their size (`short2` 4, `int2` 8, `float4` 16, `double2` 16) up to 16
/// bytes (`long4`, `longlong4`, `double4`: 32 bytes aligned to 16). `long` is 8 bytes (LP64).
/// None has padding, so each is `bytemuck::Pod`. (CUDA 13 deprecates the 16-byte-aligned
/// `long4`, `ulong4`, `longlong4`, `ulonglong4` and `double4` in favour of `*_16a`/`*_32a`
/// spellings of the same layouts; kernels naming them compile with a warning.)
///
/// ```
/// use rucuda_driver::vector::{Double2, Float3, Char3, Long4};
/// assert_eq!((std::mem::size_of::<Float3>(), std::mem::align_of::<Float3>()), (12, 4));
/// assert_eq!((std::mem::size_of::<Double2>(), std::mem::align_of::<Double2>()), (16, 16));
/// assert_eq!((std::mem::size_of::<Char3>(), std::mem::align_of::<Char3>()), (3, 1));
/// assert_eq!((std::mem::size_of::<Long4>(), std::mem::align_of::<Long4>()), (32, 16));
/// assert_eq!(Float3::new(1.0, 2.0, 3.0).y, 2.0);
/// ```
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
            impl $name {
                #[doc = concat!("A `", $c, "` of its components (CUDA's `make_", $c, "`).")]
                #[inline]
                pub const fn new($($f: $t),+) -> $name {
                    $name { $($f),+ }
                }
            }
            const _: () = assert!(
                std::mem::size_of::<$name>() == [$(stringify!($f)),+].len() * std::mem::size_of::<$t>(),
                "a vector type has no padding"
            );
            // SAFETY: repr(C) plain numbers with no padding (the size is the sum of the
            // components, checked just above): every bit pattern is valid, no pointers.
            unsafe impl super::DeviceRepr for $name {
                const C_TYPE: &'static str = $c;
            }
            // SAFETY: as above: all-zero bits are a valid value.
            unsafe impl bytemuck::Zeroable for $name {}
            // SAFETY: as above: Copy, 'static, no padding, every bit pattern valid.
            unsafe impl bytemuck::Pod for $name {}
        };
    }

    /// Declares the 1-, 2-, 3- and 4-vectors of one component type with their alignments.
    macro_rules! vector_family {
        ($t:ty; $n1:ident $c1:literal $a1:literal, $n2:ident $c2:literal $a2:literal,
         $n3:ident $c3:literal $a3:literal, $n4:ident $c4:literal $a4:literal) => {
            vector_type!($n1, $t, $a1, $c1, [x]);
            vector_type!($n2, $t, $a2, $c2, [x, y]);
            vector_type!($n3, $t, $a3, $c3, [x, y, z]);
            vector_type!($n4, $t, $a4, $c4, [x, y, z, w]);
        };
    }

    vector_family!(i8; Char1 "char1" 1, Char2 "char2" 2, Char3 "char3" 1, Char4 "char4" 4);
    vector_family!(u8; Uchar1 "uchar1" 1, Uchar2 "uchar2" 2, Uchar3 "uchar3" 1, Uchar4 "uchar4" 4);
    vector_family!(i16; Short1 "short1" 2, Short2 "short2" 4, Short3 "short3" 2, Short4 "short4" 8);
    vector_family!(u16; Ushort1 "ushort1" 2, Ushort2 "ushort2" 4, Ushort3 "ushort3" 2, Ushort4 "ushort4" 8);
    vector_family!(i32; Int1 "int1" 4, Int2 "int2" 8, Int3 "int3" 4, Int4 "int4" 16);
    vector_family!(u32; Uint1 "uint1" 4, Uint2 "uint2" 8, Uint3 "uint3" 4, Uint4 "uint4" 16);
    vector_family!(i64; Long1 "long1" 8, Long2 "long2" 16, Long3 "long3" 8, Long4 "long4" 16);
    vector_family!(u64; Ulong1 "ulong1" 8, Ulong2 "ulong2" 16, Ulong3 "ulong3" 8, Ulong4 "ulong4" 16);
    vector_family!(i64; Longlong1 "longlong1" 8, Longlong2 "longlong2" 16, Longlong3 "longlong3" 8, Longlong4 "longlong4" 16);
    vector_family!(u64; Ulonglong1 "ulonglong1" 8, Ulonglong2 "ulonglong2" 16, Ulonglong3 "ulonglong3" 8, Ulonglong4 "ulonglong4" 16);
    vector_family!(f32; Float1 "float1" 4, Float2 "float2" 8, Float3 "float3" 4, Float4 "float4" 16);
    vector_family!(f64; Double1 "double1" 8, Double2 "double2" 16, Double3 "double3" 8, Double4 "double4" 16);
}

/// The size in bytes of `len` elements of `T`, or an error naming the overflow.
pub(crate) fn byte_size<T>(len: usize) -> crate::error::Result<usize> {
    len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
        Error::invalid(format!(
            "{len} elements of {} bytes overflow usize",
            std::mem::size_of::<T>()
        ))
    })
}
