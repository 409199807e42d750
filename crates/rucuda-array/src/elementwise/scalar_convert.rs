//! Scalar arguments converted to the type a kernel declares, as PyCUDA's argument
//! packing (Python's `struct.pack` with the declared type's format) and NumPy's
//! `can_cast(from, to, "same_kind")` agree:
//!
//! - `bool` converts to any number type (0 or 1);
//! - an integer converts to any integer type when its value fits (else refused, as
//!   `struct.pack` and NEP 50 refuse `int8` 300), and to any float or complex type
//!   (rounded to nearest);
//! - a float converts to any float or complex type (rounded to nearest; a finite value
//!   that overflows to infinity is refused, as `struct.pack` refuses it);
//! - a complex number converts to any complex type;
//! - refused: float or complex to an integer (`same_kind` refuses it and `struct.pack`
//!   wants an integer), complex to a real type, a number to `bool`, and any conversion
//!   to or from a struct or vector element type (those must match exactly).

use half::{bf16, f16};
use num_complex::Complex;

use super::ScalarValue;
use crate::dtype::{DType, DTypeKind};

/// A scalar's value, widened.
#[derive(Debug, Clone, Copy)]
enum Num {
    Bool(bool),
    Int(i128),
    Float(f64),
    Complex(f64, f64),
}

fn decode(v: &ScalarValue) -> Option<Num> {
    let b = v.bytes();
    let arr = |n: usize| -> [u8; 8] {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(&b[..n]);
        w
    };
    let f64_at = |k: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[k..k + 8]);
        f64::from_ne_bytes(w)
    };
    let f32_at = |k: usize| f32::from_ne_bytes([b[k], b[k + 1], b[k + 2], b[k + 3]]);
    Some(match v.dtype() {
        DType::Bool => Num::Bool(b[0] != 0),
        DType::I8 => Num::Int(i128::from(b[0] as i8)),
        DType::I16 => Num::Int(i128::from(i16::from_ne_bytes([b[0], b[1]]))),
        DType::I32 => Num::Int(i128::from(i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))),
        DType::I64 => Num::Int(i128::from(i64::from_ne_bytes(arr(8)))),
        DType::U8 => Num::Int(i128::from(b[0])),
        DType::U16 => Num::Int(i128::from(u16::from_ne_bytes([b[0], b[1]]))),
        DType::U32 => Num::Int(i128::from(u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))),
        DType::U64 => Num::Int(i128::from(u64::from_ne_bytes(arr(8)))),
        DType::F16 => Num::Float(f16::from_bits(u16::from_ne_bytes([b[0], b[1]])).to_f64()),
        DType::BF16 => Num::Float(bf16::from_bits(u16::from_ne_bytes([b[0], b[1]])).to_f64()),
        DType::F32 => Num::Float(f64::from(f32_at(0))),
        DType::F64 => Num::Float(f64_at(0)),
        DType::C64 => Num::Complex(f64::from(f32_at(0)), f64::from(f32_at(4))),
        DType::C128 => Num::Complex(f64_at(0), f64_at(8)),
        DType::Record(_) => return None,
    })
}

/// An integer value as `to`, when it fits.
fn int_to(v: i128, to: DType) -> Option<ScalarValue> {
    Some(match to {
        DType::I8 => ScalarValue::new(i8::try_from(v).ok()?),
        DType::I16 => ScalarValue::new(i16::try_from(v).ok()?),
        DType::I32 => ScalarValue::new(i32::try_from(v).ok()?),
        DType::I64 => ScalarValue::new(i64::try_from(v).ok()?),
        DType::U8 => ScalarValue::new(u8::try_from(v).ok()?),
        DType::U16 => ScalarValue::new(u16::try_from(v).ok()?),
        DType::U32 => ScalarValue::new(u32::try_from(v).ok()?),
        DType::U64 => ScalarValue::new(u64::try_from(v).ok()?),
        _ => return None,
    })
}

/// A real or complex value (`re`, `im`) as the float or complex type `to`, rounded to
/// nearest; `None` when a finite part overflows to infinity.
fn float_to(re: f64, im: f64, to: DType, from_int: Option<i128>) -> Option<ScalarValue> {
    let finite_ok = |src: f64, dst: f64| !(src.is_finite() && dst.is_infinite());
    match to {
        DType::F16 => {
            let r = f16::from_f64(re);
            finite_ok(re, r.to_f64()).then(|| ScalarValue::new(r))
        }
        DType::BF16 => {
            let r = bf16::from_f64(re);
            finite_ok(re, r.to_f64()).then(|| ScalarValue::new(r))
        }
        // Integers round once, straight to f32 (not through f64).
        DType::F32 => {
            let r = from_int.map_or(re as f32, |i| i as f32);
            finite_ok(re, f64::from(r)).then(|| ScalarValue::new(r))
        }
        DType::F64 => Some(ScalarValue::new(from_int.map_or(re, |i| i as f64))),
        DType::C64 => {
            let (r, i) = (from_int.map_or(re as f32, |i| i as f32), im as f32);
            (finite_ok(re, f64::from(r)) && finite_ok(im, f64::from(i)))
                .then(|| ScalarValue::new(Complex::new(r, i)))
        }
        DType::C128 => Some(ScalarValue::new(Complex::new(
            from_int.map_or(re, |i| i as f64),
            im,
        ))),
        _ => None,
    }
}

impl ScalarValue {
    /// This scalar as type `to`, as PyCUDA's argument packing and NumPy's `same_kind`
    /// agree: `bool` to any number; an integer to an integer type it fits, or to any
    /// float or complex type; a float to any float or complex type (rounded; a finite
    /// value overflowing to infinity is refused); complex to complex. Float to integer,
    /// complex to real, a number to `bool`, and struct or vector scalars of another type
    /// are refused. `Err` says why.
    ///
    /// ```
    /// use rucuda_array::{elementwise::ScalarValue, DType};
    /// let two = ScalarValue::new(2i64);
    /// assert_eq!(two.convert_to(DType::F32).unwrap(), ScalarValue::new(2.0f32));
    /// assert_eq!(ScalarValue::new(0.1f64).convert_to(DType::F32).unwrap(), ScalarValue::new(0.1f32));
    /// assert!(ScalarValue::new(300i32).convert_to(DType::I8).is_err()); // does not fit
    /// assert!(ScalarValue::new(2.5f64).convert_to(DType::I32).is_err()); // float to int
    /// ```
    pub fn convert_to(&self, to: DType) -> Result<ScalarValue, String> {
        if self.dtype() == to {
            return Ok(self.clone());
        }
        let from = self.dtype();
        let refuse = |why: &str| Err(format!("cannot convert a {from} scalar to {to}: {why}"));
        let Some(num) = decode(self) else {
            return refuse("struct and vector scalars must have the declared type");
        };
        if matches!(to.kind(), DTypeKind::Bool) {
            return refuse("only a bool converts to bool (NumPy's same_kind)");
        }
        let converted = match num {
            Num::Bool(b) => {
                let v = i128::from(u8::from(b));
                int_to(v, to).or_else(|| float_to(v as f64, 0.0, to, Some(v)))
            }
            Num::Int(v) if to.is_integer() => {
                return int_to(v, to).map_or_else(|| refuse(&format!("{v} does not fit")), Ok)
            }
            Num::Int(v) => float_to(v as f64, 0.0, to, Some(v)),
            Num::Float(_) if to.is_integer() => {
                return refuse("a float does not convert to an integer (NumPy's same_kind)")
            }
            Num::Float(re) => float_to(re, 0.0, to, None),
            Num::Complex(..) if !to.is_complex() => {
                return refuse("a complex number does not convert to a real type")
            }
            Num::Complex(re, im) => float_to(re, im, to, None),
        };
        match converted {
            Some(v) => Ok(v),
            None => refuse("the value overflows the declared type"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s<T: crate::Element>(v: T) -> ScalarValue {
        ScalarValue::new(v)
    }

    fn conv(v: ScalarValue, to: DType) -> Option<ScalarValue> {
        v.convert_to(to).ok()
    }

    #[test]
    fn numpy_same_kind_with_pycuda_range_checks() {
        use DType::*;
        // Python int for a float argument, and float64 for float32.
        assert_eq!(conv(s(3i64), F32), Some(s(3.0f32)));
        assert_eq!(conv(s(2.5f64), F32), Some(s(2.5f32)));
        assert_eq!(conv(s(2.5f64), F16), Some(s(f16::from_f32(2.5))));
        assert_eq!(conv(s(2.5f32), C128), Some(s(Complex::new(2.5f64, 0.0))));
        assert_eq!(conv(s(7u8), I64), Some(s(7i64)));
        assert_eq!(conv(s(-7i64), I8), Some(s(-7i8)));
        assert_eq!(conv(s(true), F64), Some(s(1.0f64)));
        assert_eq!(conv(s(true), U16), Some(s(1u16)));
        assert_eq!(
            conv(s(Complex::new(1.0f64, -2.0)), C64),
            Some(s(Complex::new(1.0f32, -2.0)))
        );
        assert_eq!(conv(s(u64::MAX), F64), Some(s(u64::MAX as f64)));
        // Integers that do not fit, floats to integers, complex to real, to bool.
        assert_eq!(conv(s(300i32), I8), None);
        assert_eq!(conv(s(-1i32), U32), None);
        assert_eq!(conv(s(u64::MAX), I64), None);
        assert_eq!(conv(s(2.0f64), I32), None);
        assert_eq!(conv(s(Complex::new(1.0f32, 0.0)), F32), None);
        assert_eq!(conv(s(1i32), Bool), None);
        // Finite values that overflow; infinities and NaN pass.
        assert_eq!(conv(s(1e300f64), F32), None);
        assert_eq!(conv(s(1e6f64), F16), None);
        assert_eq!(conv(s(100_000i64), F16), None);
        assert_eq!(conv(s(f64::INFINITY), F32), Some(s(f32::INFINITY)));
        assert!(conv(s(f64::NAN), F32).is_some());
        // An i64 rounds straight to f32.
        let big = (1i64 << 40) + 1;
        assert_eq!(conv(s(big), F32), Some(s(big as f32)));
        let e = s(2.5f64).convert_to(I32).unwrap_err();
        assert!(e.contains("float64") && e.contains("int32"), "{e}");
    }
}
