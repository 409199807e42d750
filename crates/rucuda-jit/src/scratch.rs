//! Private scratch folders for compiler files (nvcc's input and output, `keep`), made by
//! `tempfile`: a fresh random name under the system temporary folder, created atomically,
//! removed on drop; `TempDir::keep` leaves it in place.

use tempfile::TempDir;

/// A new, empty folder under the system temporary folder named `rucuda-jit-{what}-…`,
/// readable by its owner only (on Unix: mode 0700; `tempfile` would otherwise create it
/// with the default mode, open to other users per the umask). Removed on drop unless
/// `keep()` is called.
pub(crate) fn scratch_dir(what: &str) -> std::io::Result<TempDir> {
    let prefix = format!("rucuda-jit-{what}-");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder.tempdir()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_removed_unless_kept() {
        let a = scratch_dir("t").unwrap();
        let pa = a.path().to_path_buf();
        assert!(pa.is_dir());
        assert!(pa
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("rucuda-jit-t-")));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = pa.metadata().unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        }
        drop(a);
        assert!(!pa.exists());
        let b = scratch_dir("t").unwrap();
        let pb = b.keep();
        assert!(pb.is_dir());
        std::fs::remove_dir_all(pb).unwrap();
    }
}
