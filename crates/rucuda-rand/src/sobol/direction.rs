//! Sobol direction vectors from Joe and Kuo's direction numbers ("Constructing Sobol
//! sequences with better two-dimensional projections", SIAM J. Sci. Comput. 30, 2008;
//! their table `new-joe-kuo-6.21201`, shipped in this crate's `data/` with its licence in
//! `data/README.md`).
//!
//! Dimension 0 (Joe and Kuo's dimension 1) has every `m_k = 1`: its vectors are the bits
//! `2^31, 2^30, ...` (van der Corput). Dimension `d ≥ 1` is line `d` of the table: the
//! degree `s` of a primitive polynomial, its inner coefficients `a` (bit `s−1−j` of `a`
//! is the coefficient `a_j`), and the initial numbers `m_1..m_s`. With `V_k = m_k << (W − k)`
//! for the first `s` (W = 32 or 64 bits, k from 1), the rest follow Bratley and Fox's
//! recurrence `V_k = V_{k−s} ⊕ (V_{k−s} >> s) ⊕ ⨁_{j<s} a_j V_{k−j}`.
//!
//! These are cuRAND's `CURAND_DIRECTION_VECTORS_32_JOEKUO6` and `..._64_JOEKUO6` sets
//! (which hold the first 20,000 dimensions; we have all 21,201).

use std::sync::OnceLock;

use crate::error::{Error, Result};

/// The direction numbers as published, one line per dimension from Joe and Kuo's
/// dimension 2.
const TABLE: &str = include_str!("../../data/new-joe-kuo-6.21201");

/// Dimensions available: Joe and Kuo's 21,201 (cuRAND's tables stop at 20,000).
pub const MAX_DIMENSIONS: usize = 21_201;

/// One dimension's primitive polynomial and initial direction numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectionNumbers {
    /// Degree of the polynomial.
    pub s: u32,
    /// Inner coefficients, most significant first.
    pub a: u32,
    /// The initial direction numbers `m_1..m_s` (each odd, below `2^k`).
    pub m: Vec<u32>,
}

fn parse() -> Result<Vec<DirectionNumbers>> {
    let mut out = Vec::with_capacity(MAX_DIMENSIONS - 1);
    for (idx, line) in TABLE.lines().enumerate() {
        let lineno = idx + 1;
        if idx == 0 {
            continue; // "d s a m_i"
        }
        let fields: Vec<u64> = line
            .split_whitespace()
            .map(|f| f.parse::<u64>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Error::DirectionTable {
                line: lineno,
                message: e.to_string(),
            })?;
        if fields.is_empty() {
            continue;
        }
        let bad = |message: &str| Error::DirectionTable {
            line: lineno,
            message: message.to_string(),
        };
        if fields.len() < 4 {
            return Err(bad("fewer than four fields"));
        }
        let (d, s, a) = (fields[0], fields[1], fields[2]);
        if d as usize != out.len() + 2 {
            return Err(bad("dimensions out of order"));
        }
        if s == 0 || s > 31 || fields.len() != 3 + s as usize {
            return Err(bad("degree does not match the number of m values"));
        }
        let m: Vec<u32> = fields[3..].iter().map(|&x| x as u32).collect();
        for (k, &mk) in m.iter().enumerate() {
            if mk % 2 == 0 || u64::from(mk) >= 1u64 << (k + 1) {
                return Err(bad("an m value is even or too large"));
            }
        }
        out.push(DirectionNumbers {
            s: s as u32,
            a: a as u32,
            m,
        });
    }
    if out.len() != MAX_DIMENSIONS - 1 {
        return Err(Error::DirectionTable {
            line: 0,
            message: format!("{} dimensions, expected {}", out.len() + 1, MAX_DIMENSIONS),
        });
    }
    Ok(out)
}

/// The parsed table (dimensions 1.. in our 0-based numbering), read once.
pub fn table() -> Result<&'static [DirectionNumbers]> {
    static PARSED: OnceLock<std::result::Result<Vec<DirectionNumbers>, (usize, String)>> =
        OnceLock::new();
    let parsed = PARSED.get_or_init(|| {
        parse().map_err(|e| match e {
            Error::DirectionTable { line, message } => (line, message),
            other => (0, other.to_string()),
        })
    });
    match parsed {
        Ok(v) => Ok(v.as_slice()),
        Err((line, message)) => Err(Error::DirectionTable {
            line: *line,
            message: message.clone(),
        }),
    }
}

fn check_dimension(dim: usize) -> Result<()> {
    if dim >= MAX_DIMENSIONS {
        return Err(Error::invalid(format!(
            "Sobol dimension {dim}: there are {MAX_DIMENSIONS} (0..{})",
            MAX_DIMENSIONS - 1
        )));
    }
    Ok(())
}

macro_rules! vectors {
    ($name:ident, $t:ty, $bits:expr) => {
        /// The direction vectors of dimension `dim` (0-based), most significant first.
        pub fn $name(dim: usize) -> Result<[$t; $bits]> {
            check_dimension(dim)?;
            let mut v = [0 as $t; $bits];
            if dim == 0 {
                for (k, slot) in v.iter_mut().enumerate() {
                    *slot = 1 << ($bits - 1 - k);
                }
                return Ok(v);
            }
            let dn = &table()?[dim - 1];
            let s = dn.s as usize;
            for k in 0..$bits {
                v[k] = if k < s {
                    (dn.m[k] as $t) << ($bits - 1 - k)
                } else {
                    let mut x = v[k - s] ^ (v[k - s] >> s);
                    for j in 1..s {
                        if (dn.a >> (s - 1 - j)) & 1 == 1 {
                            x ^= v[k - j];
                        }
                    }
                    x
                };
            }
            Ok(v)
        }
    };
}

vectors!(direction_vectors_32, u32, 32);
vectors!(direction_vectors_64, u64, 64);

/// Direction vectors of dimensions `0..count`, concatenated (`32·count` words).
pub fn direction_vector_set_32(count: usize) -> Result<Vec<u32>> {
    let mut out = Vec::with_capacity(count * 32);
    for d in 0..count {
        out.extend_from_slice(&direction_vectors_32(d)?);
    }
    Ok(out)
}

/// Direction vectors of dimensions `0..count`, concatenated (`64·count` words).
pub fn direction_vector_set_64(count: usize) -> Result<Vec<u64>> {
    let mut out = Vec::with_capacity(count * 64);
    for d in 0..count {
        out.extend_from_slice(&direction_vectors_64(d)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_parses() {
        let t = table().unwrap();
        assert_eq!(t.len(), MAX_DIMENSIONS - 1);
        assert_eq!(
            t[0],
            DirectionNumbers {
                s: 1,
                a: 0,
                m: vec![1]
            }
        );
        assert_eq!(
            t[1],
            DirectionNumbers {
                s: 2,
                a: 1,
                m: vec![1, 3]
            }
        );
    }

    #[test]
    fn first_dimensions() {
        let v0 = direction_vectors_32(0).unwrap();
        assert_eq!(v0[0], 0x8000_0000);
        assert_eq!(v0[31], 1);
        let v1 = direction_vectors_32(1).unwrap();
        assert_eq!(
            &v1[..4],
            &[0x8000_0000, 0xc000_0000, 0xa000_0000, 0xf000_0000]
        );
        assert_eq!(v1[31], 0xffff_ffff);
        let v2 = direction_vectors_32(2).unwrap();
        assert_eq!(&v2[..3], &[0x8000_0000, 0xc000_0000, 0x6000_0000]);
        assert!(direction_vectors_32(MAX_DIMENSIONS).is_err());
    }

    #[test]
    fn sixty_four_bit_vectors_extend_the_32_bit_ones() {
        for d in [0usize, 1, 5, 100, 21_200] {
            let a = direction_vectors_32(d).unwrap();
            let b = direction_vectors_64(d).unwrap();
            for k in 0..32 {
                assert_eq!((b[k] >> 32) as u32, a[k], "dimension {d}, vector {k}");
            }
        }
    }
}
