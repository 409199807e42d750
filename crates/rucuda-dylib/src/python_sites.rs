//! Where Python keeps its packages: NVIDIA's pip wheels (NVRTC, NCCL, nvcc, the CUDA
//! runtime) put their files under a `site-packages` folder, which these functions find,
//! first without running Python, then by asking it ([`search_site_packages`] does both,
//! in that order).

use std::ffi::OsString;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::search::{absolute_entries, version_cmp};

/// `paths` without repeats, first occurrences kept in order.
///
/// ```
/// use std::path::PathBuf;
/// let p = |s: &str| PathBuf::from(s);
/// let d = rucuda_dylib::python_sites::dedup(vec![p("/a"), p("/b"), p("/a")]);
/// assert_eq!(d, [p("/a"), p("/b")]);
/// ```
pub fn dedup(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen: Vec<PathBuf> = Vec::new();
    for p in paths {
        if !seen.contains(&p) {
            seen.push(p);
        }
    }
    seen
}

/// Site-packages folders found without running Python, read through `env` (the process's
/// environment in production, a fake in tests): under `VIRTUAL_ENV`, `CONDA_PREFIX`,
/// `~/.local`, pyenv's interpreters, the prefix of every `python3` on `PATH` (both the
/// folder holding it, a virtual environment's, and its link's target, the base
/// interpreter's), and the system's `/usr/local/lib` and `/usr/lib`. Only folders of the
/// form `PREFIX/lib/python3*/{site,dist}-packages` are listed, newest version first; they
/// need not exist.
///
/// ```
/// let sites = rucuda_dylib::python_sites::guessed_site_packages(&|_| None);
/// assert!(sites.iter().all(|s| s.ends_with("site-packages") || s.ends_with("dist-packages")));
/// ```
pub fn guessed_site_packages(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    // Only absolute folders: a relative one would depend on the current folder.
    let var = |name: &str| {
        env(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let mut prefixes: Vec<PathBuf> = Vec::new();
    prefixes.extend(var("VIRTUAL_ENV"));
    prefixes.extend(var("CONDA_PREFIX"));
    let home = var("HOME");
    if let Some(home) = &home {
        prefixes.push(home.join(".local"));
    }
    // pyenv's `python3` is a shell script; its interpreters live under versions/.
    let pyenv_root = var("PYENV_ROOT").or_else(|| home.as_ref().map(|h| h.join(".pyenv")));
    if let Some(Ok(versions)) = pyenv_root.map(|r| std::fs::read_dir(r.join("versions"))) {
        let mut found: Vec<PathBuf> = versions.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        found.sort_by(|a, b| version_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
        prefixes.extend(found.into_iter().rev());
    }
    {
        for dir in absolute_entries(env, "PATH", &mut Vec::new()) {
            let python = dir.join("python3");
            if !python.exists() {
                continue;
            }
            // A virtual environment's python3 is a link to the base interpreter: its own
            // prefix holds the environment's packages, the link's target the base ones.
            if let Some(prefix) = dir.parent() {
                prefixes.push(prefix.to_path_buf());
            }
            if let Ok(real) = std::fs::canonicalize(&python) {
                if let Some(prefix) = real.parent().and_then(Path::parent) {
                    prefixes.push(prefix.to_path_buf());
                }
            }
        }
    }
    prefixes.push(PathBuf::from("/usr/local"));
    prefixes.push(PathBuf::from("/usr"));
    let mut sites = Vec::new();
    for prefix in dedup(prefixes) {
        let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else {
            continue;
        };
        let mut versions: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path())
            .collect();
        // python3.10 before python3.9: newest first, compared as versions.
        versions.sort_by(|a, b| version_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
        for v in versions.into_iter().rev() {
            sites.push(v.join("site-packages"));
            sites.push(v.join("dist-packages"));
        }
    }
    sites
}

/// Python's site-packages folders (system, user, and the running venv), asked of
/// `python3` once per process. Empty when there is no Python.
pub fn python_site_packages() -> &'static [PathBuf] {
    static SITES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    SITES.get_or_init(|| {
        let script = "import site, sys\n\
                      p = list(getattr(site, 'getsitepackages', lambda: [])())\n\
                      p.append(site.getusersitepackages())\n\
                      p += [x for x in sys.path if x.endswith('-packages')]\n\
                      print('\\n'.join(p))";
        let output = std::process::Command::new("python3")
            .args(["-I", "-c", script])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output();
        match output {
            Ok(out) if out.status.success() => dedup(
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .filter(|l| !l.is_empty())
                    .map(PathBuf::from)
                    .collect(),
            ),
            _ => Vec::new(),
        }
    })
}

/// Visits Python's site-packages folders in search order and returns what `visit` broke
/// with: first the folders found without running Python ([`guessed_site_packages`],
/// through `env`), then, only when `visit` broke on none of them, the ones `python3`
/// reports ([`python_site_packages`]) that were not among the first. `None` when it
/// never broke.
///
/// ```
/// use std::ops::ControlFlow;
/// use rucuda_dylib::python_sites::search_site_packages;
/// let found = search_site_packages(&|_| None, |site| {
///     let file = site.join("surely-not-a-wheel/lib/libnothing.so");
///     if file.is_file() { ControlFlow::Break(file) } else { ControlFlow::Continue(()) }
/// });
/// assert_eq!(found, None);
/// ```
pub fn search_site_packages<B>(
    env: &dyn Fn(&str) -> Option<OsString>,
    mut visit: impl FnMut(&Path) -> ControlFlow<B>,
) -> Option<B> {
    let guessed = guessed_site_packages(env);
    for site in &guessed {
        if let ControlFlow::Break(found) = visit(site) {
            return Some(found);
        }
    }
    // Python is asked only when the folders found without it had nothing.
    for site in python_site_packages()
        .iter()
        .filter(|s| !guessed.contains(s))
    {
        if let ControlFlow::Break(found) = visit(site) {
            return Some(found);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_virtual_environment_comes_first() {
        let root = std::env::temp_dir().join(format!("rucuda-dylib-sites-{}", std::process::id()));
        let venv = root.join("venv");
        std::fs::create_dir_all(venv.join("lib/python3.12/site-packages")).unwrap();
        let env = |name: &str| match name {
            "VIRTUAL_ENV" => Some(venv.clone().into_os_string()),
            "HOME" => Some(root.join("home").into_os_string()),
            _ => None,
        };
        let sites = guessed_site_packages(&env);
        assert_eq!(sites[0], venv.join("lib/python3.12/site-packages"));
        assert_eq!(sites[1], venv.join("lib/python3.12/dist-packages"));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn newest_python_first_and_relative_entries_skipped() {
        let root =
            std::env::temp_dir().join(format!("rucuda-dylib-sites-v-{}", std::process::id()));
        let venv = root.join("venv");
        for v in ["python3.9", "python3.10"] {
            std::fs::create_dir_all(venv.join("lib").join(v)).unwrap();
        }
        let env = |name: &str| match name {
            "VIRTUAL_ENV" => Some(venv.clone().into_os_string()),
            "CONDA_PREFIX" => Some("relative/conda".into()),
            _ => None,
        };
        let sites = guessed_site_packages(&env);
        assert_eq!(sites[0], venv.join("lib/python3.10/site-packages"));
        assert_eq!(sites[2], venv.join("lib/python3.9/site-packages"));
        assert!(sites.iter().all(|s| s.is_absolute()), "{sites:?}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
