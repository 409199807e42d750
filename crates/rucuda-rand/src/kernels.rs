//! The CUDA C++ sources of our kernels, one module per generator family.
//!
//! Every source is self-contained (no `#include`: NVRTC needs no CUDA headers) and is
//! compiled with the compiler's defaults (in particular `-fmad=true`, as cuRAND's own
//! device code is when compiled with them): the transforms are written in cuRAND's
//! operation order, so the same multiply-adds are contracted and the results match bit
//! for bit.
//!
//! Kernels of a pseudo-random generator `G` (`rr_philox`, `rr_xorwow`, `rr_mrg32k3a`):
//!
//! - `G_init(states, n, seeds*, seed, subsequences*, subsequence, offsets*, offset[, table,
//!   powers])`: `curand_init` for states `0..n`; each parameter comes from its array when
//!   the pointer is not null, else from the scalar (the subsequence as `subsequence + i`).
//! - `G_skipahead(states, n, counts*, count, kind[, table, powers])`.
//! - fills `G_raw_u32`, `G_uniform_f32`, `G_uniform_f64`, `G_normal_f32`, `G_normal_f64`,
//!   `G_log_normal_f32`, `G_log_normal_f64`, `G_poisson_u32`, all
//!   `(states, nstates, out, n, mean, stddev, lambda)`, laid out as
//!   [`crate::reference::Layout`] says.
//!
//! Sobol (`rr_sobol32_*`, `rr_sobol64_*`): fills `(idx_in, idx_out, dims, vectors,
//! scramble*, out, n, per_thread, mean, stddev, lambda)` and
//! `rr_sobol{32,64}_skipahead(idx, dims, counts*, count)`.
//!
//! ```
//! let src = rucuda_rand::kernels::source(rucuda_rand::kernels::Family::Philox)?;
//! assert!(src.contains("rr_philox_init") && src.contains("RR_PSEUDO_KERNELS(rr_philox, RRPhilox)"));
//! # Ok::<(), rucuda_rand::Error>(())
//! ```

use rucuda_array::codegen::template::render;

use crate::distributions::ln_factorial_table;
use crate::error::{Error, Result};

/// What a module holds, in order (slots: the family, the `ln(k!)` table, the shared code
/// and the family's generators).
const MODULE: &str = include_str!("kernels/module.cu");

/// Transforms, Poisson, Box–Muller caching.
pub const COMMON: &str = include_str!("kernels/common.cuh");
/// The fill loops and kernel macros of the pseudo-random generators.
pub const FILL: &str = include_str!("kernels/fill.cuh");
/// Philox4x32-10.
pub const PHILOX: &str = include_str!("kernels/philox.cu");
/// XORWOW.
pub const XORWOW: &str = include_str!("kernels/xorwow.cu");
/// MRG32k3a.
pub const MRG32K3A: &str = include_str!("kernels/mrg32k3a.cu");
/// The four Sobol generators.
pub const SOBOL: &str = include_str!("kernels/sobol.cu");

/// Size in bytes of one state of a pseudo-random generator in device memory (all three
/// use 48).
pub const PSEUDO_STATE_BYTES: usize = 48;

/// A family of generators sharing one compiled module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// Philox4x32-10.
    Philox,
    /// XORWOW.
    Xorwow,
    /// MRG32k3a.
    Mrg32k3a,
    /// Sobol32, scrambled Sobol32, Sobol64, scrambled Sobol64.
    Sobol,
}

impl Family {
    /// The kernel-name prefix (`rr_philox`, ...; Sobol kernels are `rr_sobol32_*` and
    /// `rr_sobol64_*`).
    pub fn prefix(self) -> &'static str {
        match self {
            Family::Philox => "rr_philox",
            Family::Xorwow => "rr_xorwow",
            Family::Mrg32k3a => "rr_mrg32k3a",
            Family::Sobol => "rr_sobol",
        }
    }
}

/// `ln(k!)`, k = 0..=8, as C hexadecimal-float literals (exactly the doubles our CPU code
/// uses).
fn ln_factorial_literal() -> String {
    let items: Vec<String> = ln_factorial_table()
        .iter()
        .map(|&x| hex_double(x))
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// A finite double as a C99 hexadecimal floating literal (exact).
pub(crate) fn hex_double(x: f64) -> String {
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0x0p+0"
        } else {
            "0x0p+0"
        }
        .to_string();
    }
    let bits = x.to_bits();
    let sign = if bits >> 63 == 1 { "-" } else { "" };
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    if exp == 0 {
        // Subnormal: 0x0.fffp-1022.
        return format!("{sign}0x0.{frac:013x}p-1022");
    }
    format!("{sign}0x1.{frac:013x}p{:+}", exp - 1023)
}

/// The complete source of a family's module (`kernels/module.cu` filled with the
/// shared code and the family's generators).
pub fn source(family: Family) -> Result<String> {
    let specific = match family {
        Family::Philox => PHILOX,
        Family::Xorwow => XORWOW,
        Family::Mrg32k3a => MRG32K3A,
        Family::Sobol => SOBOL,
    };
    let family_name = format!("{family:?}");
    render(
        MODULE,
        &[
            ("FAMILY", &family_name),
            ("LN_FACTORIAL_TABLE", &ln_factorial_literal()),
            ("COMMON", COMMON),
            ("FILL", FILL),
            ("GENERATOR", specific),
        ],
    )
    .map_err(|e| Error::Array(e.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_literals_are_exact() {
        assert_eq!(hex_double(1.0), "0x1.0000000000000p+0");
        assert_eq!(hex_double(std::f64::consts::LN_2), "0x1.62e42fefa39efp-1");
        assert_eq!(hex_double(-0.5), "-0x1.0000000000000p-1");
        assert_eq!(hex_double(0.0), "0x0p+0");
    }

    #[test]
    fn ln_factorial_table_has_cuda_s_values() {
        // ln(k!) correctly rounded, as cuRAND's table holds them.
        let bits: Vec<u64> = ln_factorial_table().iter().map(|x| x.to_bits()).collect();
        assert_eq!(
            bits,
            [
                0,
                0,
                0x3fe6_2e42_fefa_39ef,
                0x3ffc_ab0b_fa2a_2002,
                0x4009_6ca7_7c92_2cf9,
                0x4013_2664_3c44_79c9,
                0x401a_5127_3acf_01ca,
                0x4021_0ce1_f32d_cc30,
                0x4025_358e_82fc_b70d,
            ]
        );
    }

    #[test]
    fn every_family_has_its_kernels() {
        for f in [Family::Philox, Family::Xorwow, Family::Mrg32k3a] {
            let src = source(f).unwrap();
            assert!(src.contains(&format!("{}_init(", f.prefix())));
            assert!(src.contains(&format!("{}_skipahead(", f.prefix())));
            assert!(src.contains(&format!("RR_PSEUDO_KERNELS({},", f.prefix())));
        }
        assert!(source(Family::Sobol)
            .unwrap()
            .contains("rr_sobol64_normal_f64"));
    }
}
