//! [`ParamPack`]: kernel parameters packed on the stack for the hot path of the built-in
//! operations (no heap allocation per launch), handed to `Function::launch` through the
//! driver's [`KernelArgs`] trait.

use std::ffi::c_void;

use rucuda_driver::KernelArgs;

/// Most parameters a pack holds; longer lists go through the driver's `ArgBuffer`.
pub(crate) const PACK_CAPACITY: usize = 24;

/// Up to [`PACK_CAPACITY`] parameters of at most 16 bytes each.
pub(crate) struct ParamPack {
    words: [[u64; 2]; PACK_CAPACITY],
    sizes: [usize; PACK_CAPACITY],
    len: usize,
}

impl ParamPack {
    /// An empty pack.
    #[inline]
    pub(crate) fn new() -> ParamPack {
        ParamPack {
            words: [[0; 2]; PACK_CAPACITY],
            sizes: [0; PACK_CAPACITY],
            len: 0,
        }
    }

    /// Appends one parameter's bytes (1 to 16); false when full or too long.
    #[inline]
    pub(crate) fn push_bytes(&mut self, bytes: &[u8]) -> bool {
        if self.len == PACK_CAPACITY || bytes.len() > 16 || bytes.is_empty() {
            return false;
        }
        let mut raw = [0u8; 16];
        raw[..bytes.len()].copy_from_slice(bytes);
        let lo = u64::from_ne_bytes([
            raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
        ]);
        let hi = u64::from_ne_bytes([
            raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15],
        ]);
        self.words[self.len] = [lo, hi];
        self.sizes[self.len] = bytes.len();
        self.len += 1;
        true
    }

    /// Appends an 8-byte value (a pointer or a 64-bit integer).
    #[inline]
    pub(crate) fn push_u64(&mut self, v: u64) -> bool {
        self.push_bytes(&v.to_ne_bytes())
    }
}

impl KernelArgs for &ParamPack {
    /// Not known statically: the driver only uses the sizes handed to the callback.
    const COUNT: usize = 0;

    /// The pack holds addresses the engine took through each array's use log
    /// (`ArrayMemory::use_on`) for this launch's stream.
    #[inline]
    fn with_params<R>(
        &self,
        _stream: Option<&rucuda_driver::Stream>,
        f: impl FnOnce(&mut [*mut c_void], &[usize]) -> rucuda_driver::Result<R>,
    ) -> rucuda_driver::Result<R> {
        let mut ptrs = [std::ptr::null_mut::<c_void>(); PACK_CAPACITY];
        for (p, w) in ptrs.iter_mut().zip(&self.words[..self.len]) {
            *p = w.as_ptr().cast_mut().cast();
        }
        f(&mut ptrs[..self.len], &self.sizes[..self.len])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_values_with_their_sizes() {
        let mut p = ParamPack::new();
        assert!(p.push_u64(0xdead_beef));
        assert!(p.push_bytes(&2.5f32.to_ne_bytes()));
        assert!(p.push_bytes(&[1u8; 16]));
        assert!(!p.push_bytes(&[1u8; 17]));
        (&p).with_params(None, |ptrs, sizes| {
            assert_eq!(sizes, &[8, 4, 16]);
            // SAFETY: each pointer addresses the words of its parameter.
            let v = unsafe { *(ptrs[0] as *const u64) };
            assert_eq!(v, 0xdead_beef);
            // SAFETY: as above, 4 bytes of an f32.
            let f = unsafe { *(ptrs[1] as *const f32) };
            assert_eq!(f, 2.5);
            Ok(())
        })
        .unwrap();
        for _ in 3..PACK_CAPACITY {
            assert!(p.push_u64(1));
        }
        assert!(!p.push_u64(1));
    }
}
