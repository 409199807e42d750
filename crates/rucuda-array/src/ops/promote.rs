//! NumPy's type promotion at compile time: the result type of `&a + &b` is
//! `<A as Promote<B>>::Output`, of `&a + scalar` `<A as PromoteWeak<S>>::Output`, and of
//! true division the float type of the promoted type ([`TrueDivide`]).
//!
//! The 450 impls live in `promote_impls.rs`, generated from [`DType::promote`] and
//! [`DType::promote_weak`] by a unit test that fails when the file is stale, so the
//! types the compiler computes always equal the ones the kernels are built for.
//!
//! [`DType::promote`]: crate::DType::promote
//! [`DType::promote_weak`]: crate::DType::promote_weak

use half::{bf16, f16};
use num_complex::Complex;

use crate::dtype::Element;

#[rustfmt::skip]
#[path = "promote_impls.rs"]
mod promote_impls;

/// The result type of a binary operation between arrays of `Self` and `Rhs` (NumPy's
/// `promote_types`; the table is [`crate::dtype::PROMOTION_TABLE_DOC`]).
///
/// ```
/// use rucuda_array::ops::Promote;
/// fn result<A: Promote<B>, B: rucuda_array::Element>() -> rucuda_array::DType {
///     <A as Promote<B>>::Output::DTYPE
/// }
/// use rucuda_array::Element;
/// assert_eq!(result::<i8, u8>(), rucuda_array::DType::I16);
/// assert_eq!(result::<half::f16, i16>(), rucuda_array::DType::F32);
/// ```
pub trait Promote<Rhs: Element>: Element {
    /// The promoted type.
    type Output: Element + TrueDivide + RealPart;
}

/// The result type of an operation between an array of `Self` and a Rust scalar of type
/// `S` (NEP 50's weak scalars: within a category the array's type wins, so
/// `f16 array * 2.0f64` stays `f16`; see [`crate::DType::promote_weak`]).
///
/// ```
/// use rucuda_array::{ops::PromoteWeak, Element, DType};
/// assert_eq!(<half::f16 as PromoteWeak<f64>>::Output::DTYPE, DType::F16);
/// assert_eq!(<i32 as PromoteWeak<f32>>::Output::DTYPE, DType::F64);
/// ```
pub trait PromoteWeak<S: Element>: Element {
    /// The promoted type.
    type Output: Element + TrueDivide + RealPart;
}

/// The type of a true division's result computed in `Self` (the promoted operand
/// type): `f64` for integers and `bool` (NumPy's `/`), the type itself otherwise.
///
/// ```
/// use rucuda_array::{ops::TrueDivide, Element, DType};
/// assert_eq!(<u8 as TrueDivide>::Output::DTYPE, DType::F64);
/// assert_eq!(<f32 as TrueDivide>::Output::DTYPE, DType::F32);
/// ```
pub trait TrueDivide: Element {
    /// The quotient's type.
    type Output: Element;
}

/// The type of the real (and imaginary) part: the component type for complex types,
/// the type itself otherwise. `abs` of a complex array has this type.
///
/// ```
/// use rucuda_array::{ops::RealPart, Complex, Element, DType};
/// assert_eq!(<Complex<f32> as RealPart>::Real::DTYPE, DType::F32);
/// assert_eq!(<i16 as RealPart>::Real::DTYPE, DType::I16);
/// ```
pub trait RealPart: Element {
    /// The part's type.
    type Real: Element;
}

macro_rules! per_type {
    ($trait:ident, $assoc:ident; $($t:ty => $o:ty),* $(,)?) => {$(
        impl $trait for $t { type $assoc = $o; }
    )*};
}

per_type! { TrueDivide, Output;
    bool => f64, i8 => f64, i16 => f64, i32 => f64, i64 => f64,
    u8 => f64, u16 => f64, u32 => f64, u64 => f64,
    f16 => f16, bf16 => bf16, f32 => f32, f64 => f64,
    Complex<f32> => Complex<f32>, Complex<f64> => Complex<f64>,
}

per_type! { RealPart, Real;
    bool => bool, i8 => i8, i16 => i16, i32 => i32, i64 => i64,
    u8 => u8, u16 => u16, u32 => u32, u64 => u64,
    f16 => f16, bf16 => bf16, f32 => f32, f64 => f64,
    Complex<f32> => f32, Complex<f64> => f64,
}

#[cfg(test)]
mod tests {
    use crate::dtype::DType;

    fn rust_name(d: DType) -> &'static str {
        match d {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::C64 => "Complex<f32>",
            DType::C128 => "Complex<f64>",
            DType::Record(_) => unreachable!("DType::ALL holds numbers only"),
        }
    }

    fn render() -> String {
        let mut s = String::from(
            "//! Generated from `DType::promote` and `DType::promote_weak` by the unit test\n\
             //! `ops::promote::tests::impls_are_current`; do not edit (rerun that test with\n\
             //! RUCUDA_BLESS=1 to regenerate).\n\n\
             use super::{bf16, f16, Complex, Promote, PromoteWeak};\n\n",
        );
        for a in DType::ALL {
            for b in DType::ALL {
                s.push_str(&format!(
                    "impl Promote<{}> for {} {{ type Output = {}; }}\n",
                    rust_name(b),
                    rust_name(a),
                    rust_name(a.promote(b))
                ));
            }
        }
        s.push('\n');
        for a in DType::ALL {
            for b in DType::ALL {
                s.push_str(&format!(
                    "impl PromoteWeak<{}> for {} {{ type Output = {}; }}\n",
                    rust_name(b),
                    rust_name(a),
                    rust_name(a.promote_weak(b))
                ));
            }
        }
        s
    }

    #[test]
    fn impls_are_current() {
        let want = render();
        // Read at compile time, so the test also runs where the sources are not (the GPU
        // bundle); only a rewrite needs the source tree.
        let have = include_str!("promote_impls.rs");
        if have != want {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/ops/promote_impls.rs");
            if std::env::var_os("RUCUDA_BLESS").is_some() {
                std::fs::write(path, &want).expect("write promote_impls.rs");
            } else {
                panic!("{path} is stale: rerun this test with RUCUDA_BLESS=1 to rewrite it");
            }
        }
    }

    #[test]
    fn static_types_match_dynamic_promotion() {
        use super::*;
        use crate::Element;
        fn p<A: Promote<B>, B: Element>() -> DType {
            <A as Promote<B>>::Output::DTYPE
        }
        fn w<A: PromoteWeak<B>, B: Element>() -> DType {
            <A as PromoteWeak<B>>::Output::DTYPE
        }
        assert_eq!(p::<i64, u64>(), DType::F64);
        assert_eq!(p::<bf16, f16>(), DType::F32);
        assert_eq!(p::<Complex<f32>, f64>(), DType::C128);
        assert_eq!(w::<u8, i64>(), DType::U8);
        assert_eq!(w::<f32, Complex<f64>>(), DType::C128);
    }
}
