//! The hasher of the kernel memo's small `Copy` keys (see `engine.rs`).

use std::hash::{BuildHasherDefault, Hasher};

/// A small, fast hasher for the memo's `Copy` keys (multiply-rotate, as in rustc's).
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

pub(crate) type KeyBuild = BuildHasherDefault<KeyHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::key::OpKey;
    use std::hash::Hash;

    #[test]
    fn key_hasher_spreads_small_keys() {
        let h = |k: &OpKey| {
            let mut s = KeyHasher::default();
            k.hash(&mut s);
            s.finish()
        };
        use crate::dtype::DType;
        let a = OpKey::Fill { dtype: DType::F32 };
        let b = OpKey::Fill { dtype: DType::F64 };
        assert_ne!(h(&a), h(&b));
        assert_eq!(h(&a), h(&a));
    }
}
