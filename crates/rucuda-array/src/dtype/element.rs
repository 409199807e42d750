//! [`Element`]: the Rust types a `GpuArray` can hold, with their device storage.
//!
//! Why a storage type: `bool` cannot be `DeviceRepr` (a byte written by a kernel may be
//! neither 0 nor 1), so every element type names a `Storage` that is plain device data
//! with the same size and alignment: `u8` holds a `bool`, and `u16` the bits of an `f16`
//! or `bf16`, `[f32; 2]` a `Complex<f32>` (those are `DeviceRepr` themselves in
//! rucuda-driver now, with the C names of [`DType::c_type`]; a test keeps the two equal).
//! Host copies reinterpret slices (no copy) except for `bool`, which is validated byte by
//! byte on the way back. The C name a kernel sees comes from [`DType::c_type`], never from
//! the storage's.

use std::borrow::Cow;

use half::{bf16, f16};
use num_complex::Complex;
use rucuda_driver::DeviceRepr;

use super::DType;

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// A type that a [`crate::GpuArray`] can hold. Implemented for `bool`, the integers,
/// `f16`, `bf16`, `f32`, `f64`, `Complex<f32>` and `Complex<f64>` (the numbers), and for
/// every [`crate::StructElement`]: CUDA's vector types ([`crate::vec`]) and your
/// `#[repr(C)]` structs ([`crate::struct_element!`]). Sealed otherwise.
///
/// ```
/// use rucuda_array::{DType, Element};
/// assert_eq!(<half::f16 as Element>::DTYPE, DType::F16);
/// assert_eq!(f32::from_f64(2.5), 2.5f32);
/// assert_eq!(bool::from_f64(0.0), false);
/// ```
pub trait Element:
    sealed::Sealed + Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static
{
    /// Plain device data with this type's size, alignment and bits.
    type Storage: DeviceRepr + bytemuck::Pod;
    /// The run-time type.
    const DTYPE: DType;

    /// The bits of one value as stored on the device.
    fn to_storage(self) -> Self::Storage;
    /// A value from its stored bits (`bool`: any nonzero byte is `true`).
    fn from_storage(bits: Self::Storage) -> Self;
    /// Converts from `f64` as a C cast would (`as` semantics: saturating for integers,
    /// nearest for floats; complex gets a zero imaginary part; bool is `v != 0`).
    fn from_f64(v: f64) -> Self;
    /// The value as `(real, imaginary)` parts in `f64` (imaginary is 0 for real types).
    fn to_complex_f64(self) -> (f64, f64);

    /// The stored form of a host slice, borrowed when the layouts are the same.
    fn slice_to_storage(values: &[Self]) -> Cow<'_, [Self::Storage]>;
    /// Host values from their stored form, reusing the allocation when possible.
    fn vec_from_storage(stored: Vec<Self::Storage>) -> Vec<Self>;
}

macro_rules! same_storage_element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            type Storage = $t;
            const DTYPE: DType = DType::$d;
            #[inline]
            fn to_storage(self) -> $t { self }
            #[inline]
            fn from_storage(bits: $t) -> $t { bits }
            #[inline]
            fn from_f64(v: f64) -> $t { v as $t }
            #[inline]
            fn to_complex_f64(self) -> (f64, f64) { (self as f64, 0.0) }
            fn slice_to_storage(values: &[$t]) -> Cow<'_, [$t]> { Cow::Borrowed(values) }
            fn vec_from_storage(stored: Vec<$t>) -> Vec<$t> { stored }
        }
    )*};
}

same_storage_element! {
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    f32 => F32, f64 => F64,
}

/// Reinterprets a slice of one plain type as another of the same size and alignment, or
/// converts element by element when bytemuck refuses (it never does for the pairs here).
fn cast_or_map<A: bytemuck::Pod, B: bytemuck::Pod>(
    values: &[A],
    map: impl Fn(A) -> B,
) -> Cow<'_, [B]> {
    match bytemuck::try_cast_slice::<A, B>(values) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(values.iter().copied().map(map).collect()),
    }
}

/// Takes over a vector of one plain type as another of the same size and alignment, or
/// converts element by element when that is impossible.
fn cast_vec_or_map<A: bytemuck::Pod, B: bytemuck::Pod>(
    values: Vec<A>,
    map: impl Fn(A) -> B,
) -> Vec<B> {
    match bytemuck::allocation::try_cast_vec::<A, B>(values) {
        Ok(v) => v,
        Err((_, values)) => values.into_iter().map(map).collect(),
    }
}

macro_rules! bits_element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            type Storage = u16;
            const DTYPE: DType = DType::$d;
            #[inline]
            fn to_storage(self) -> u16 { self.to_bits() }
            #[inline]
            fn from_storage(bits: u16) -> $t { <$t>::from_bits(bits) }
            #[inline]
            fn from_f64(v: f64) -> $t { <$t>::from_f64(v) }
            #[inline]
            fn to_complex_f64(self) -> (f64, f64) { (self.to_f64(), 0.0) }
            fn slice_to_storage(values: &[$t]) -> Cow<'_, [u16]> {
                cast_or_map(values, <$t>::to_bits)
            }
            fn vec_from_storage(stored: Vec<u16>) -> Vec<$t> {
                cast_vec_or_map(stored, <$t>::from_bits)
            }
        }
    )*};
}

bits_element! { f16 => F16, bf16 => BF16 }

macro_rules! complex_element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for Complex<$t> {}
        impl Element for Complex<$t> {
            type Storage = [$t; 2];
            const DTYPE: DType = DType::$d;
            #[inline]
            fn to_storage(self) -> [$t; 2] { [self.re, self.im] }
            #[inline]
            fn from_storage(bits: [$t; 2]) -> Self { Complex::new(bits[0], bits[1]) }
            #[inline]
            fn from_f64(v: f64) -> Self { Complex::new(v as $t, 0.0) }
            #[inline]
            fn to_complex_f64(self) -> (f64, f64) { (self.re as f64, self.im as f64) }
            fn slice_to_storage(values: &[Self]) -> Cow<'_, [[$t; 2]]> {
                cast_or_map(values, |c: Self| [c.re, c.im])
            }
            fn vec_from_storage(stored: Vec<[$t; 2]>) -> Vec<Self> {
                cast_vec_or_map(stored, |p: [$t; 2]| Complex::new(p[0], p[1]))
            }
        }
    )*};
}

complex_element! { f32 => C64, f64 => C128 }

impl sealed::Sealed for bool {}
impl Element for bool {
    type Storage = u8;
    const DTYPE: DType = DType::Bool;
    #[inline]
    fn to_storage(self) -> u8 {
        u8::from(self)
    }
    #[inline]
    fn from_storage(bits: u8) -> bool {
        bits != 0
    }
    #[inline]
    fn from_f64(v: f64) -> bool {
        v != 0.0
    }
    #[inline]
    fn to_complex_f64(self) -> (f64, f64) {
        (f64::from(u8::from(self)), 0.0)
    }
    fn slice_to_storage(values: &[bool]) -> Cow<'_, [u8]> {
        // A Rust bool is one byte holding 0 or 1: exactly our device encoding.
        Cow::Owned(values.iter().map(|&b| u8::from(b)).collect())
    }
    fn vec_from_storage(stored: Vec<u8>) -> Vec<bool> {
        stored.into_iter().map(|b| b != 0).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_names_our_element_types_as_our_kernels_do() {
        fn same<T: Element + DeviceRepr>() {
            assert_eq!(T::C_TYPE, T::DTYPE.c_type());
            assert_eq!(std::mem::size_of::<T>(), T::DTYPE.size_bytes());
            assert_eq!(std::mem::align_of::<T>(), T::DTYPE.align_bytes());
        }
        same::<f16>();
        same::<bf16>();
        same::<Complex<f32>>();
        same::<Complex<f64>>();
    }

    fn round_trip<T: Element>(values: &[T]) {
        let stored = T::slice_to_storage(values).into_owned();
        assert_eq!(stored.len(), values.len());
        assert_eq!(std::mem::size_of::<T::Storage>(), T::DTYPE.size_bytes());
        assert_eq!(std::mem::align_of::<T::Storage>(), T::DTYPE.align_bytes());
        let back = T::vec_from_storage(stored.clone());
        assert_eq!(back, values);
        for (v, s) in values.iter().zip(&stored) {
            assert_eq!(T::from_storage(v.to_storage()), *v);
            assert_eq!(bytemuck::bytes_of(&v.to_storage()), bytemuck::bytes_of(s));
        }
    }

    #[test]
    fn every_element_type_round_trips_through_its_storage() {
        round_trip(&[true, false, true]);
        round_trip(&[-3i8, 7, i8::MIN]);
        round_trip(&[-3i16, 7, i16::MAX]);
        round_trip(&[-3i32, 7, i32::MIN]);
        round_trip(&[-3i64, 7, i64::MAX]);
        round_trip(&[3u8, 255]);
        round_trip(&[3u16, 65535]);
        round_trip(&[3u32, u32::MAX]);
        round_trip(&[3u64, u64::MAX]);
        round_trip(&[f16::from_f32(1.5), f16::from_f32(-0.25)]);
        round_trip(&[bf16::from_f32(1.5), bf16::from_f32(-3.0)]);
        round_trip(&[1.5f32, -2.25]);
        round_trip(&[1.5f64, -2.25]);
        round_trip(&[Complex::new(1.0f32, -2.0), Complex::new(0.5, 0.25)]);
        round_trip(&[Complex::new(1.0f64, -2.0), Complex::new(0.5, 0.25)]);
    }

    #[test]
    fn half_storage_is_borrowed_not_copied() {
        let v = [f16::from_f32(2.0); 4];
        assert!(matches!(f16::slice_to_storage(&v), Cow::Borrowed(_)));
        let c = [Complex::new(1.0f64, 2.0); 3];
        assert!(matches!(
            Complex::<f64>::slice_to_storage(&c),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn conversions_from_f64_follow_c_casts() {
        assert_eq!(u8::from_f64(300.0), 255);
        assert_eq!(i8::from_f64(-1.9), -1);
        assert_eq!(f16::from_f64(0.5).to_f32(), 0.5);
        assert_eq!(Complex::<f32>::from_f64(2.0), Complex::new(2.0, 0.0));
        assert!(bool::from_f64(-0.5));
        assert!(bool::from_storage(7));
        assert_eq!(Complex::new(1.0f32, 2.0).to_complex_f64(), (1.0, 2.0));
    }
}
