//! `rucuda-helpers.cuh`: device helpers that read textures and surfaces of doubles and
//! complex numbers (PyCUDA's `pycuda-helpers.hpp`: `fp_tex1Dfetch`, `fp_tex2D`,
//! `fp_tex3D`, ... over texture and surface objects), to include in your CUDA sources.
//!
//! Texture hardware has no 64-bit channels: arrays and linear textures of `f64` hold
//! each element as two 32-bit ints and `Complex<f64>` as four (see [`ArrayElement`]); the
//! helpers put the words back together. Pick the element type with the template
//! argument: `fp_tex2D<double>(tex, x, y)`, `fp_tex1Dfetch<double2>(tex, i)` (a complex
//! double as `(re, im)`), `fp_tex2D<float2>` for `Complex<f32>`.
//!
//! Use it by writing it where the compiler looks ([`texel_helpers_include_dir`], then
//! `#include <rucuda-helpers.cuh>` with that folder among the include folders), or by
//! putting [`TEXEL_HELPERS_CUH`] in front of your source.
//!
//! [`ArrayElement`]: crate::ArrayElement

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The file name to `#include`: `rucuda-helpers.cuh`.
pub const TEXEL_HELPERS_NAME: &str = "rucuda-helpers.cuh";

/// The text of `rucuda-helpers.cuh`.
///
/// ```
/// assert!(rucuda_driver::TEXEL_HELPERS_CUH.contains("fp_tex2D"));
/// ```
pub const TEXEL_HELPERS_CUH: &str = include_str!("cuda/rucuda-helpers.cuh");

/// Writes `rucuda-helpers.cuh` into `dir` (created if missing) unless it already holds
/// the same text, and returns `dir`: add it to the compiler's include folders.
pub fn write_texel_helpers(dir: &Path) -> Result<PathBuf> {
    let io = |what: &str, path: &Path, e: std::io::Error| {
        Error::invalid(format!("cannot {what} {}: {e}", path.display()))
    };
    let file = dir.join(TEXEL_HELPERS_NAME);
    if std::fs::read_to_string(&file).ok().as_deref() == Some(TEXEL_HELPERS_CUH) {
        return Ok(dir.to_path_buf());
    }
    std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    // Written under a name of this process, then renamed: a compiler running meanwhile
    // never reads half a header.
    let tmp = dir.join(format!(".{TEXEL_HELPERS_NAME}.{}", std::process::id()));
    std::fs::write(&tmp, TEXEL_HELPERS_CUH).map_err(|e| io("write", &tmp, e))?;
    std::fs::rename(&tmp, &file).map_err(|e| io("rename to", &file, e))?;
    Ok(dir.to_path_buf())
}

/// A folder holding `rucuda-helpers.cuh`, under the system's temporary folder (named by
/// the header's contents, so versions never mix): add it to the include folders, for
/// example `CompileOptions::new().include_dir(texel_helpers_include_dir()?)` with
/// rucuda-jit, then `#include <rucuda-helpers.cuh>`.
///
/// ```no_run
/// let dir = rucuda_driver::texel_helpers_include_dir()?;
/// assert!(dir.join("rucuda-helpers.cuh").is_file());
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub fn texel_helpers_include_dir() -> Result<PathBuf> {
    let dir =
        std::env::temp_dir().join(format!("rucuda-include-{:016x}", fnv1a(TEXEL_HELPERS_CUH)));
    write_texel_helpers(&dir)
}

/// FNV-1a, 64 bits: a stable name for the header's contents (std's hasher may change
/// between Rust releases; no cryptographic strength is needed here).
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_has_every_helper_and_one_guard() {
        for name in [
            "fp_tex1Dfetch",
            "fp_tex1D",
            "fp_tex2D",
            "fp_tex2DLayered",
            "fp_tex3D",
            "fp_surf2Dwrite",
            "fp_surf2Dread",
            "fp_surf2DLayeredwrite",
            "fp_surf2DLayeredread",
            "fp_surf3Dwrite",
            "fp_surf3Dread",
        ] {
            assert!(
                TEXEL_HELPERS_CUH.contains(&format!(" {name}(")),
                "{name} missing"
            );
        }
        assert!(TEXEL_HELPERS_CUH.contains("#ifndef RUCUDA_HELPERS_CUH"));
        assert!(TEXEL_HELPERS_CUH
            .trim_end()
            .ends_with("#endif // RUCUDA_HELPERS_CUH"));
    }

    #[test]
    fn the_header_is_written_once_and_rewritten_when_stale() {
        let dir = std::env::temp_dir().join(format!("rucuda-helpers-test-{}", std::process::id()));
        let got = write_texel_helpers(&dir).unwrap();
        let file = got.join(TEXEL_HELPERS_NAME);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), TEXEL_HELPERS_CUH);
        std::fs::write(&file, "stale").unwrap();
        write_texel_helpers(&dir).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), TEXEL_HELPERS_CUH);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_ne!(fnv1a("a"), fnv1a("b"));
    }
}
