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

/// The size in bytes of `len` elements of `T`, or an error naming the overflow.
pub(crate) fn byte_size<T>(len: usize) -> crate::error::Result<usize> {
    len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
        Error::invalid(format!(
            "{len} elements of {} bytes overflow usize",
            std::mem::size_of::<T>()
        ))
    })
}
