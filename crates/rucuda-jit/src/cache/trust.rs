//! Whether a cache folder may be trusted: compiled kernels read from it run on the GPU,
//! so a folder another local user can write (or owns) could hand us their code. Such a
//! folder is refused, with the reason, and compiles then go without the disk cache.

use std::collections::HashSet;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

/// `Ok` when `dir` (created 0700 when missing) is owned by this user and writable by
/// nobody else, or cannot be created at all (then it holds nothing to read, and the
/// store's own warning says it cannot be written); else why not.
pub(crate) fn check(dir: &Path) -> Result<(), String> {
    if !dir.exists()
        && std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .is_err()
    {
        return Ok(());
    }
    let meta = std::fs::metadata(dir).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_dir() {
        return Err("it is not a folder".into());
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(format!(
            "it is owned by user {}, not by this user ({me})",
            meta.uid()
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o022 != 0 {
        return Err(format!(
            "other users can write it (mode {mode:o}; `chmod go-w` it)"
        ));
    }
    Ok(())
}

/// [`check`], warning once per folder when it fails.
pub(crate) fn trusted(dir: &Path) -> bool {
    match check(dir) {
        Ok(()) => true,
        Err(reason) => {
            static WARNED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
            let mut warned = WARNED
                .get_or_init(Default::default)
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if warned.insert(dir.to_path_buf()) {
                log::warn!(
                    "rucuda-jit: not using the kernel cache {}: {reason}; compiling without \
                     a disk cache",
                    dir.display()
                );
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rucuda-trust-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_missing_folder_is_created_private() {
        let d = scratch("missing").join("a/b");
        assert!(check(&d).is_ok());
        let mode = std::fs::metadata(&d).unwrap().mode() & 0o777;
        assert_eq!(mode & 0o077, 0, "mode {mode:o}");
        let _ = std::fs::remove_dir_all(d.parent().unwrap().parent().unwrap());
    }

    #[test]
    fn a_folder_others_can_write_is_refused() {
        let d = scratch("open");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check(&d).unwrap_err();
        assert!(e.contains("other users can write"), "{e}");
        assert!(!trusted(&d));
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(check(&d).is_ok());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn an_uncreatable_folder_is_left_to_the_store() {
        let d = scratch("blocked");
        std::fs::write(&d, b"x").unwrap();
        assert!(check(&d.join("cache")).is_ok());
        let _ = std::fs::remove_file(&d);
    }

    #[test]
    fn a_file_is_not_a_cache_folder() {
        let d = scratch("file");
        std::fs::write(&d, b"x").unwrap();
        assert!(check(&d).unwrap_err().contains("not a folder"));
        let _ = std::fs::remove_file(&d);
    }
}
