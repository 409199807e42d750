//! Shared libraries that the GPU tests load from another language: the DLPack fixture
//! (`crates/rucuda-dlpack-fixture`), which a Python script loads with ctypes beside CuPy.
//! Built with the bundle's profile into the bundle's `cdylib/` folder, where the test
//! (`rucuda-array`'s `dlpack_gpu`) finds it beside `bin/`.

use std::path::PathBuf;
use std::process::Stdio;

use serde_json::Value;

use crate::bundle::{self, Workspace};
use crate::util::XResult;

/// The workspace packages built as C-ABI shared libraries for the bundle.
pub const FIXTURES: &[&str] = &["rucuda-dlpack-fixture"];

/// Builds [`FIXTURES`] and copies their shared libraries into `cdylib/` of the bundle
/// (replacing what a previous build put there). Returns how many were copied.
pub fn build(ws: &Workspace) -> XResult<usize> {
    let dir = ws.bundle_dir().join("cdylib");
    bundle::clear_dir(&dir)?;
    let mut cmd = bundle::cargo();
    cmd.args(["build", "--profile", bundle::PROFILE])
        .arg("--message-format=json-render-diagnostics");
    for p in FIXTURES {
        cmd.args(["-p", p]);
    }
    cmd.current_dir(&ws.root).stderr(Stdio::inherit());
    eprintln!("xtask: {cmd:?}");
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(format!("cargo failed ({}): {cmd:?}", out.status).into());
    }
    let mut copied = 0;
    for path in shared_libraries(&out.stdout)? {
        let name = path
            .file_name()
            .ok_or("a shared library without a file name")?;
        bundle::copy_executable(&path, &dir.join(name))?;
        copied += 1;
    }
    Ok(copied)
}

/// The `.so` files of the `cdylib` artifacts in cargo's JSON messages.
fn shared_libraries(stdout: &[u8]) -> XResult<Vec<PathBuf>> {
    let mut found = Vec::new();
    for line in stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let message: Value = serde_json::from_slice(line)?;
        let is_cdylib = message["target"]["kind"]
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|k| k == "cdylib"));
        if message["reason"] != "compiler-artifact" || !is_cdylib {
            continue;
        }
        for file in message["filenames"].as_array().into_iter().flatten() {
            if let Some(f) = file.as_str().filter(|f| f.ends_with(".so")) {
                found.push(PathBuf::from(f));
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_cdylib_shared_libraries_are_picked() {
        let json = br#"{"reason":"compiler-artifact","target":{"kind":["cdylib"]},"filenames":["/t/librucuda_dlpack_fixture.so"]}
{"reason":"compiler-artifact","target":{"kind":["lib"]},"filenames":["/t/libother.rlib"]}
{"reason":"build-finished","success":true}
"#;
        assert_eq!(
            shared_libraries(json).unwrap(),
            [PathBuf::from("/t/librucuda_dlpack_fixture.so")]
        );
    }
}
