//! The Rust element types that map onto an array format and channel count.

use crate::arrays::descriptor::ArrayDescriptor3D;
use crate::arrays::format::ArrayFormat;
use crate::error::{Error, Result};
use crate::repr::{vector, DeviceRepr};

/// Host types that map to an array element: the format and channel count an array
/// holding them has.
///
/// Implemented for the 8/16/32-bit integers and `f32` (one channel), `[T; 1|2|4]` and the
/// CUDA vector types (several channels), `Complex<f32>` (two `F32` channels, read as
/// `float2`), and, like PyCUDA's `np_to_array`, for `f64` (two `I32` channels; read with
/// `__hiloint2double`), [`vector::Double1`] (two), [`vector::Double2`] and `Complex<f64>`
/// (four `I32` channels), which the helpers of
/// [`TEXEL_HELPERS_CUH`](crate::TEXEL_HELPERS_CUH) read back as `double` and `double2`
/// (`fp_tex2D<double>`); the 1-, 2- and 4-vectors of 8-, 16- and 32-bit components.
/// `size_of::<Self>()` is checked against the format at run time.
///
/// PyCUDA stores a complex64 as two `I32` channels and reads them with `__int_as_float`;
/// two `F32` channels hold the same bytes and read as `float2` directly.
pub trait ArrayElement: DeviceRepr {
    /// The channel type.
    const FORMAT: ArrayFormat;
    /// Channels per element (1, 2 or 4).
    const CHANNELS: u32;
}

macro_rules! array_element {
    ($($t:ty => $f:ident, $c:literal;)*) => {$(
        impl ArrayElement for $t {
            const FORMAT: ArrayFormat = ArrayFormat::$f;
            const CHANNELS: u32 = $c;
        }
    )*};
}

array_element! {
    u8 => U8, 1; i8 => I8, 1; u16 => U16, 1; i16 => I16, 1;
    u32 => U32, 1; i32 => I32, 1; f32 => F32, 1; f64 => I32, 2;
    vector::Float2 => F32, 2; vector::Float4 => F32, 4;
    vector::Int2 => I32, 2; vector::Int4 => I32, 4;
    vector::Uint2 => U32, 2; vector::Uint4 => U32, 4;
    vector::Double2 => I32, 4;
    num_complex::Complex<f32> => F32, 2; num_complex::Complex<f64> => I32, 4;
    vector::Char1 => I8, 1; vector::Char2 => I8, 2; vector::Char4 => I8, 4;
    vector::Uchar1 => U8, 1; vector::Uchar2 => U8, 2; vector::Uchar4 => U8, 4;
    vector::Short1 => I16, 1; vector::Short2 => I16, 2; vector::Short4 => I16, 4;
    vector::Ushort1 => U16, 1; vector::Ushort2 => U16, 2; vector::Ushort4 => U16, 4;
    vector::Int1 => I32, 1; vector::Uint1 => U32, 1; vector::Float1 => F32, 1;
    vector::Double1 => I32, 2;
}

impl<T: ArrayElement> ArrayElement for [T; 1] {
    const FORMAT: ArrayFormat = T::FORMAT;
    const CHANNELS: u32 = T::CHANNELS;
}
impl<T: ArrayElement> ArrayElement for [T; 2] {
    const FORMAT: ArrayFormat = T::FORMAT;
    const CHANNELS: u32 = T::CHANNELS * 2;
}
impl<T: ArrayElement> ArrayElement for [T; 4] {
    const FORMAT: ArrayFormat = T::FORMAT;
    const CHANNELS: u32 = T::CHANNELS * 4;
}

/// Checks that `T`'s size is what its format and channel count say.
pub(crate) fn check_element<T: ArrayElement>() -> Result<()> {
    let d = ArrayDescriptor3D::d1(1, T::FORMAT, T::CHANNELS);
    d.validate()?;
    let want = d.element_bytes()?;
    if std::mem::size_of::<T>() != want {
        return Err(Error::invalid(format!(
            "ArrayElement {}: {} bytes, but {:?} x {} channels is {want} bytes",
            T::C_TYPE,
            std::mem::size_of::<T>(),
            T::FORMAT,
            T::CHANNELS
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_elements_have_their_format_size() {
        fn ok<T: ArrayElement>() {
            assert!(check_element::<T>().is_ok(), "{}", T::C_TYPE);
        }
        ok::<u8>();
        ok::<i8>();
        ok::<u16>();
        ok::<i16>();
        ok::<u32>();
        ok::<i32>();
        ok::<f32>();
        ok::<f64>();
        ok::<[u8; 4]>();
        ok::<[f32; 2]>();
        ok::<[i16; 1]>();
        ok::<vector::Float2>();
        ok::<vector::Float4>();
        ok::<vector::Int2>();
        ok::<vector::Int4>();
        ok::<vector::Uint2>();
        ok::<vector::Uint4>();
        ok::<vector::Double2>();
        ok::<num_complex::Complex<f32>>();
        ok::<num_complex::Complex<f64>>();
        assert_eq!(
            (
                <num_complex::Complex<f32> as ArrayElement>::FORMAT,
                <num_complex::Complex<f32> as ArrayElement>::CHANNELS
            ),
            (ArrayFormat::F32, 2)
        );
        assert_eq!(
            (
                <num_complex::Complex<f64> as ArrayElement>::FORMAT,
                <num_complex::Complex<f64> as ArrayElement>::CHANNELS
            ),
            (ArrayFormat::I32, 4)
        );
        ok::<vector::Char1>();
        ok::<vector::Char2>();
        ok::<vector::Char4>();
        ok::<vector::Uchar1>();
        ok::<vector::Uchar2>();
        ok::<vector::Uchar4>();
        ok::<vector::Short1>();
        ok::<vector::Short2>();
        ok::<vector::Short4>();
        ok::<vector::Ushort1>();
        ok::<vector::Ushort2>();
        ok::<vector::Ushort4>();
        ok::<vector::Int1>();
        ok::<vector::Uint1>();
        ok::<vector::Float1>();
        ok::<vector::Double1>();
        // Eight channels is not an array element.
        assert!(check_element::<[f64; 4]>().is_err());
    }
}
