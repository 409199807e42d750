//! Small helpers shared by the xtask commands.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every xtask command's result.
pub type XResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The workspace root (xtask lives one folder below it).
pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Runs a command, failing with its command line when it exits non-zero.
pub fn run(cmd: &mut Command) -> XResult<()> {
    let status = cmd.status()?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("command failed ({status}): {cmd:?}").into())
    }
}

/// Writes a generated file, or with `check` fails when the committed one differs.
pub fn write_or_check(path: &Path, contents: &str, check: bool) -> XResult<()> {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    if old == contents {
        return Ok(());
    }
    if check {
        return Err(format!(
            "{} is stale: run `cargo xtask bindgen` and commit the result",
            path.display()
        )
        .into());
    }
    std::fs::write(path, contents)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ` (humantime, as the bench uses).
pub fn utc_timestamp() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// Owned strings from string slices: a command line in tests.
#[cfg(test)]
pub fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_seconds_in_utc() {
        let t = utc_timestamp();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T', "{t}");
    }
}
