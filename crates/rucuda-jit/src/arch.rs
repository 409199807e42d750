//! [`Arch`]: a GPU architecture (`sm_90`, `sm_100f`), how it is written for each
//! compiler, and parsing it from the forms users write.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A GPU architecture: a compute capability and an optional feature suffix (`a` for
/// architecture-specific features as in `sm_90a`, `f` for family features as in
/// `sm_100f`).
///
/// ```
/// use rucuda_jit::Arch;
/// let a: Arch = "sm_90a".parse()?;
/// assert_eq!((a.major, a.minor), (9, 0));
/// assert_eq!(a.real(), "sm_90a");
/// assert_eq!(a.virtual_arch(), "compute_90a");
/// assert_eq!(Arch::new(12, 0).to_string(), "sm_120");
/// # Ok::<(), rucuda_jit::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Arch {
    /// The major compute capability (9 for `sm_90`).
    pub major: u32,
    /// The minor compute capability (0 for `sm_90`).
    pub minor: u32,
    /// `Some('a')` or `Some('f')` for the feature-specific variants, else `None`.
    pub suffix: Option<char>,
}

impl Arch {
    /// Turing, the oldest architecture CUDA 13 supports.
    pub const SM_75: Arch = Arch::new(7, 5);
    /// Ampere A100.
    pub const SM_80: Arch = Arch::new(8, 0);
    /// Ampere consumer GPUs.
    pub const SM_86: Arch = Arch::new(8, 6);
    /// Ada.
    pub const SM_89: Arch = Arch::new(8, 9);
    /// Hopper (H100, H200).
    pub const SM_90: Arch = Arch::new(9, 0);
    /// Blackwell B200.
    pub const SM_100: Arch = Arch::new(10, 0);
    /// Blackwell consumer GPUs.
    pub const SM_120: Arch = Arch::new(12, 0);

    /// The architecture of compute capability `major.minor`.
    ///
    /// ```
    /// assert_eq!(rucuda_jit::Arch::new(8, 6).real(), "sm_86");
    /// ```
    pub const fn new(major: u32, minor: u32) -> Arch {
        Arch {
            major,
            minor,
            suffix: None,
        }
    }

    /// The real (machine code) architecture name: `sm_90`.
    pub fn real(&self) -> String {
        format!("sm_{}", self.number())
    }

    /// The virtual (PTX) architecture name: `compute_90`.
    pub fn virtual_arch(&self) -> String {
        format!("compute_{}", self.number())
    }

    fn number(&self) -> String {
        let mut s = format!("{}{}", self.major, self.minor);
        if let Some(c) = self.suffix {
            s.push(c);
        }
        s
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.real())
    }
}

impl FromStr for Arch {
    type Err = Error;

    /// Accepts `sm_90`, `compute_90`, `lto_90`, `sm_90a`, `sm_100f`, `90` and `9.0`.
    fn from_str(text: &str) -> Result<Arch> {
        let bad = || Error::InvalidOption {
            option: text.to_string(),
            reason: "not an architecture: expected sm_XY, compute_XY, XY or X.Y".into(),
        };
        let t = text.trim();
        if let Some((major, minor)) = t.split_once('.') {
            // Plain digits, one minor digit, and a number that `sm_XY` can hold: what
            // parses here must print (`real()`) and parse back to the same arch.
            let plain = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            if !plain(major) || minor.len() != 1 || !plain(minor) {
                return Err(bad());
            }
            let major: u32 = major.parse().map_err(|_| bad())?;
            let minor: u32 = minor.parse().map_err(|_| bad())?;
            if major
                .checked_mul(10)
                .and_then(|m| m.checked_add(minor))
                .is_none()
            {
                return Err(bad());
            }
            return Ok(Arch::new(major, minor));
        }
        let digits = ["sm_", "compute_", "lto_"]
            .iter()
            .find_map(|p| t.strip_prefix(p))
            .unwrap_or(t);
        let (digits, suffix) = match digits.chars().last() {
            Some(c @ ('a' | 'f')) => (&digits[..digits.len() - 1], Some(c)),
            _ => (digits, None),
        };
        if digits.len() < 2 || !digits.chars().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let number: u32 = digits.parse().map_err(|_| bad())?;
        Ok(Arch {
            major: number / 10,
            minor: number % 10,
            suffix,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_parsing() {
        let cases = [
            ("sm_90", Arch::new(9, 0)),
            ("compute_86", Arch::new(8, 6)),
            ("lto_80", Arch::new(8, 0)),
            ("75", Arch::new(7, 5)),
            ("8.9", Arch::new(8, 9)),
            ("sm_120", Arch::new(12, 0)),
            ("sm_103", Arch::new(10, 3)),
        ];
        for (text, want) in cases {
            assert_eq!(text.parse::<Arch>().unwrap(), want, "{text}");
        }
        let a: Arch = "sm_100f".parse().unwrap();
        assert_eq!(a.suffix, Some('f'));
        assert_eq!(a.virtual_arch(), "compute_100f");
        for bad in ["", "sm_", "sm_9", "gfx90a", "9.12", "sm_9x"] {
            assert!(bad.parse::<Arch>().is_err(), "{bad}");
        }
    }

    /// What parses must print and parse back to the same arch: the dotted form takes
    /// plain digits, one minor digit, and a number whose `sm_XY` name fits in a `u32`
    /// ("555555550.000000" would print as `sm_5555555500`, which does not).
    #[test]
    fn dotted_arch_round_trips_or_is_refused() {
        for bad in [
            "555555550.000000",
            "429496729.6",
            "+9.0",
            "9.+0",
            "8.06",
            "9.",
            ".9",
        ] {
            assert!(bad.parse::<Arch>().is_err(), "{bad}");
        }
        for good in [
            "9.0",
            "12.1",
            "429496729.5",
            "00.0",
            "sm_90a",
            "compute_100f",
            "4294967295",
        ] {
            let a: Arch = good.parse().unwrap();
            assert_eq!(a.real().parse::<Arch>().unwrap(), a, "{good}");
            assert_eq!(a.virtual_arch().parse::<Arch>().unwrap(), a, "{good}");
        }
    }
}
