//! Radix keys: how each element type's bits become an unsigned number whose order is the
//! sort order (the same transform the kernels apply, here on the host for tests and
//! documentation).
//!
//! - unsigned integers and `bool`: the bits as they are;
//! - signed integers: the sign bit flipped;
//! - floats (`f16`, `bf16`, `f32`, `f64`): all bits flipped when the sign bit is set, else
//!   the sign bit flipped, so `-inf < … < -0.0 < +0.0 < … < +inf`;
//! - descending: every bit flipped afterwards;
//! - NaNs (any sign, any payload): all ones, after the flip, so NaNs come last in both
//!   orders (NumPy's place for them in ascending order).

use crate::dtype::DType;
use crate::error::{ArrayError, Result};

/// How a key's bits are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// Unsigned integers and `bool`.
    Unsigned,
    /// Two's complement integers.
    Signed,
    /// IEEE binary floating point.
    Float,
}

/// The radix view of a key type: its width, kind and (floats) the bits of `+inf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyBits {
    /// Width in bits (8, 16, 32 or 64): one radix pass per byte.
    pub bits: u32,
    /// How the bits are read.
    pub kind: KeyKind,
    /// `+inf`'s bits (floats; 0 otherwise): larger magnitudes are NaNs.
    pub inf_bits: u64,
}

impl KeyBits {
    /// The radix view of `dtype`; complex (and other) types have no order to sort by.
    ///
    /// ```
    /// use rucuda_array::{DType, sort::{KeyBits, KeyKind}};
    /// assert_eq!(KeyBits::of(DType::F16)?.inf_bits, 0x7c00);
    /// assert_eq!(KeyBits::of(DType::I64)?.kind, KeyKind::Signed);
    /// assert!(KeyBits::of(DType::C64).is_err());
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn of(dtype: DType) -> Result<KeyBits> {
        use KeyKind::*;
        let (bits, kind, inf_bits) = match dtype {
            DType::Bool | DType::U8 => (8, Unsigned, 0),
            DType::U16 => (16, Unsigned, 0),
            DType::U32 => (32, Unsigned, 0),
            DType::U64 => (64, Unsigned, 0),
            DType::I8 => (8, Signed, 0),
            DType::I16 => (16, Signed, 0),
            DType::I32 => (32, Signed, 0),
            DType::I64 => (64, Signed, 0),
            DType::F16 => (16, Float, 0x7c00),
            DType::BF16 => (16, Float, 0x7f80),
            DType::F32 => (32, Float, 0x7f80_0000),
            DType::F64 => (64, Float, 0x7ff0_0000_0000_0000),
            other => {
                return Err(ArrayError::InvalidArgument(format!(
                    "sorting: {other} has no order to sort by (integers, bool and real floats sort)"
                )))
            }
        };
        Ok(KeyBits {
            bits,
            kind,
            inf_bits,
        })
    }

    /// The C type of the key's bits (`unsigned int` for `f32`).
    pub fn c_type(&self) -> &'static str {
        match self.bits {
            8 => "unsigned char",
            16 => "unsigned short",
            32 => "unsigned int",
            _ => "unsigned long long",
        }
    }

    /// Radix passes (one per byte).
    pub fn passes(&self) -> u32 {
        self.bits / 8
    }

    fn mask(&self) -> u64 {
        if self.bits == 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }

    /// The sortable bits of a key given by its bits (low `bits` of `b`), as the kernels
    /// compute them.
    ///
    /// ```
    /// use rucuda_array::{DType, sort::KeyBits};
    /// let k = KeyBits::of(DType::F32)?;
    /// let t = |x: f32| k.twiddle(x.to_bits() as u64, false);
    /// assert!(t(-1.0) < t(-0.0) && t(-0.0) < t(0.0) && t(0.0) < t(f32::INFINITY));
    /// assert_eq!(t(f32::NAN), u32::MAX as u64);
    /// assert_eq!(t(-f32::NAN), u32::MAX as u64);
    /// assert!(k.twiddle(2.0f32.to_bits() as u64, true) < k.twiddle(1.0f32.to_bits() as u64, true));
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn twiddle(&self, b: u64, descending: bool) -> u64 {
        let mask = self.mask();
        let sign = 1u64 << (self.bits - 1);
        let b = b & mask;
        let mut t = match self.kind {
            KeyKind::Unsigned => b,
            KeyKind::Signed => b ^ sign,
            KeyKind::Float if b & sign != 0 => !b & mask,
            KeyKind::Float => b ^ sign,
        };
        if descending {
            t = !t & mask;
        }
        if self.kind == KeyKind::Float && (b & !sign) > self.inf_bits {
            t = mask;
        }
        t
    }

    /// The inverse of [`KeyBits::twiddle`] (NaNs come back as a NaN).
    ///
    /// ```
    /// use rucuda_array::{DType, sort::KeyBits};
    /// let k = KeyBits::of(DType::I16)?;
    /// for b in [0u64, 1, 0x7fff, 0x8000, 0xffff] {
    ///     assert_eq!(k.untwiddle(k.twiddle(b, true), true), b);
    /// }
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn untwiddle(&self, t: u64, descending: bool) -> u64 {
        let mask = self.mask();
        let sign = 1u64 << (self.bits - 1);
        let mut t = t & mask;
        if descending {
            t = !t & mask;
        }
        match self.kind {
            KeyKind::Unsigned => t,
            KeyKind::Signed => t ^ sign,
            KeyKind::Float if t & sign != 0 => t ^ sign,
            KeyKind::Float => !t & mask,
        }
    }
}

/// The C type of raw values of `size` bytes moved with the keys (1, 2, 4 or 8).
pub(crate) fn value_c_type(size: usize) -> Result<&'static str> {
    Ok(match size {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        8 => "unsigned long long",
        _ => {
            return Err(ArrayError::InvalidArgument(format!(
                "sorting: values of {size} bytes cannot move with keys (1, 2, 4 or 8 bytes)"
            )))
        }
    })
}
