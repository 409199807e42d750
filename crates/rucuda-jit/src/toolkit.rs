//! Where a CUDA toolkit keeps its files — under `CUDA_PATH`, `CUDA_HOME` (absolute
//! entries only; relative ones are skipped) and `/usr/local/cuda` — and the one search for
//! a file that may also come from NVIDIA's pip wheels (nvcc, `libcudadevrt.a`).

use std::ffi::OsString;
use std::ops::ControlFlow;
use std::path::PathBuf;

use rucuda_dylib::python_sites::{dedup, search_site_packages};
use rucuda_dylib::Folder;

/// The toolkit's library folders, in search order.
pub(crate) const LIB64: &[Folder] = &[
    Folder::Env("CUDA_PATH", "lib64"),
    Folder::Env("CUDA_HOME", "lib64"),
    Folder::Fixed("/usr/local/cuda/lib64"),
];

/// The toolkit's header folders, in search order.
pub(crate) const INCLUDE: &[Folder] = &[
    Folder::Env("CUDA_PATH", "include"),
    Folder::Env("CUDA_HOME", "include"),
    Folder::Fixed("/usr/local/cuda/include"),
];

/// The `bin` folders the toolkit variables name (nvcc's search puts `PATH` between these
/// and `/usr/local/cuda/bin`).
pub(crate) const BIN_FROM_ENV: &[Folder] = &[
    Folder::Env("CUDA_PATH", "bin"),
    Folder::Env("CUDA_HOME", "bin"),
];

/// The process's environment, as the searches read it.
pub(crate) fn process_env(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// The first of `candidates` that is a file; else the first of `wheel_files` (paths
/// inside a site-packages folder) that is a file, in the order of
/// [`search_site_packages`]. `Err` lists every path looked at, each once.
pub(crate) fn find_file(
    env: &dyn Fn(&str) -> Option<OsString>,
    candidates: Vec<PathBuf>,
    wheel_files: &[&str],
) -> Result<PathBuf, Vec<PathBuf>> {
    let mut tried = dedup(candidates);
    if let Some(found) = tried.iter().find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    if wheel_files.is_empty() {
        return Err(tried);
    }
    let found = search_site_packages(env, |site| {
        for file in wheel_files {
            let path = site.join(file);
            if path.is_file() {
                return ControlFlow::Break(path);
            }
            if !tried.contains(&path) {
                tried.push(path);
            }
        }
        ControlFlow::Continue(())
    });
    found.ok_or(tried)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_first_then_nothing_without_wheel_files() {
        let dir = std::env::temp_dir().join(format!("rucuda-jit-toolkit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let there = dir.join("tool");
        std::fs::write(&there, b"").unwrap();
        let missing = dir.join("missing");
        let found = find_file(&|_| None, vec![missing.clone(), there.clone()], &[]);
        assert_eq!(found, Ok(there));
        let none = find_file(&|_| None, vec![missing.clone(), missing.clone()], &[]);
        assert_eq!(none, Err(vec![missing]));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
