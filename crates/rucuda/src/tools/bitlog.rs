//! PyCUDA's `pycuda.tools.bitlog2`.

/// The position of the highest set bit of `v`, `floor(log2(v))`, and 0 for 0 (PyCUDA's
/// `bitlog2`, which its memory pool uses to pick bins).
///
/// ```
/// use rucuda::tools::bitlog2;
/// assert_eq!((bitlog2(0), bitlog2(1), bitlog2(2), bitlog2(3)), (0, 0, 1, 1));
/// assert_eq!((bitlog2(1024), bitlog2(1025), bitlog2(u64::MAX)), (10, 10, 63));
/// ```
pub fn bitlog2(v: u64) -> u32 {
    v.checked_ilog2().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::bitlog2;

    #[test]
    fn matches_pycudas_table_based_bitlog2() {
        // PyCUDA: a 256-entry table of floor(log2) (0 for 0), applied to the top
        // nonzero 8-, 16- and 32-bit pieces.
        fn reference(v: u64) -> u32 {
            let table = |b: u64| if b == 0 { 0 } else { 63 - b.leading_zeros() };
            let b16 = |v: u64| {
                if v >> 8 != 0 {
                    8 + table(v >> 8)
                } else {
                    table(v)
                }
            };
            let b32 = |v: u64| {
                if v >> 16 != 0 {
                    16 + b16(v >> 16)
                } else {
                    b16(v)
                }
            };
            if v >> 32 != 0 {
                32 + b32(v >> 32)
            } else {
                b32(v)
            }
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for k in 0..64 {
            for v in [1u64 << k, (1u64 << k) - 1, (1u64 << k) + 1, x >> k] {
                assert_eq!(bitlog2(v), reference(v), "{v}");
            }
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
        }
        assert_eq!(bitlog2(0), 0);
    }
}
