//! Poison values: fill an output buffer with these before a kernel writes it, and an
//! element the kernel skipped shows up as a value no correct result has.
//!
//! Every pattern is all bytes `0xFF`, so a device buffer is poisoned with one
//! `cuMemsetD8(ptr, POISON_BYTE, bytes)` whatever its element type. As floats the pattern
//! is a NaN (which fails every comparison), as signed integers it is `-1`.
//!
//! ```
//! use rucuda_testkit::poison;
//! let out = vec![poison::F32; 4];
//! assert!(out.iter().all(|&v| poison::is_poison_f32(v)));
//! assert!(f32::is_nan(poison::F32));
//! ```

/// The byte every poison pattern is made of.
pub const BYTE: u8 = 0xFF;
/// An `f32` of all ones bits: a quiet NaN with a full payload.
pub const F32: f32 = f32::from_bits(u32::MAX);
/// An `f64` of all ones bits: a quiet NaN with a full payload.
pub const F64: f64 = f64::from_bits(u64::MAX);
/// An `i32` of all ones bits.
pub const I32: i32 = -1;
/// An `i64` of all ones bits.
pub const I64: i64 = -1;
/// A `u32` of all ones bits.
pub const U32: u32 = u32::MAX;

/// True when `value` is exactly the poison pattern (a NaN a kernel computed is not).
pub fn is_poison_f32(value: f32) -> bool {
    value.to_bits() == u32::MAX
}

/// True when `value` is exactly the poison pattern.
pub fn is_poison_f64(value: f64) -> bool {
    value.to_bits() == u64::MAX
}

/// Element types whose poison pattern can be recognised.
pub trait Poisoned: Copy {
    /// True when every byte of the value is [`BYTE`].
    fn is_poison(self) -> bool;
}

macro_rules! impl_poisoned {
    ($($t:ty),*) => {$(
        impl Poisoned for $t {
            fn is_poison(self) -> bool {
                self.to_ne_bytes().iter().all(|&b| b == BYTE)
            }
        }
    )*};
}
impl_poisoned!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// The index of the first element still holding the poison bytes, if any.
pub fn first_poisoned<T: Poisoned>(values: &[T]) -> Option<usize> {
    values.iter().position(|value| value.is_poison())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_all_ones_bytes() {
        assert_eq!(F32.to_bits().to_ne_bytes(), [BYTE; 4]);
        assert_eq!(F64.to_bits().to_ne_bytes(), [BYTE; 8]);
        assert_eq!(I32.to_ne_bytes(), [BYTE; 4]);
        assert_eq!(I64.to_ne_bytes(), [BYTE; 8]);
        assert!(F32.is_nan() && F64.is_nan());
        assert!(!is_poison_f32(f32::NAN));
        assert!(is_poison_f64(F64));
    }

    #[test]
    fn first_poisoned_finds_the_first() {
        assert_eq!(first_poisoned(&[1.0f32, F32, F32]), Some(1));
        assert_eq!(first_poisoned(&[1i32, 2, 3]), None);
        assert_eq!(first_poisoned::<u8>(&[]), None);
    }
}
