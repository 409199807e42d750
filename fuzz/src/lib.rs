//! rucuda's fuzz targets and our stable mutation driver.
//!
//! - [`targets`]: one function per parser of user input; a panic is a finding.
//! - [`mutate`]: AFL-style byte mutations of a seed corpus, for the stable driver
//!   (`src/bin/stable_fuzz.rs`), used where `cargo fuzz` (nightly) is not available.
//!
//! `cargo xtask fuzz [--seconds N] [--driver libfuzzer|stable] [TARGET...]` runs each
//! target for a fixed time; `fuzz/README.md` says how, and what each target checks.

pub mod mutate;
pub mod targets;

use std::path::{Path, PathBuf};

/// The folder of this crate (`fuzz/`).
pub fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file directly under `dir`, sorted by name (none when it does not exist).
pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}
