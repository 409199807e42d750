//! Private scratch folders for compiler files (nvcc's input and output, `keep`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// A new, empty folder under the system temporary folder, named after `what`, the
/// process and a counter. Removed on drop unless [`ScratchDir::keep`] was called.
pub(crate) struct ScratchDir {
    path: PathBuf,
    keep: bool,
}

impl ScratchDir {
    pub(crate) fn new(what: &str) -> std::io::Result<ScratchDir> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let path = base.join(format!(
                "rucuda-jit-{what}-{}-{n}-{nanos:x}",
                std::process::id()
            ));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(ScratchDir { path, keep: false }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    pub(crate) fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Leaves the folder in place and returns its path.
    pub(crate) fn keep(mut self) -> PathBuf {
        self.keep = true;
        self.path.clone()
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_unless_kept() {
        let a = ScratchDir::new("t").unwrap();
        let pa = a.path().to_path_buf();
        assert!(pa.is_dir());
        drop(a);
        assert!(!pa.exists());
        let b = ScratchDir::new("t").unwrap();
        let pb = b.keep();
        assert!(pb.is_dir());
        std::fs::remove_dir_all(pb).unwrap();
    }
}
