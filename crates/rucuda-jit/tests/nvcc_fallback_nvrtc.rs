//! The nvcc fallback with a stand-in nvcc (a shell script that prints a version and
//! writes a fixed image), so that which compiler runs, what the result says and which
//! cache key it gets are checked on any machine with NVRTC, nvcc or not.
#![cfg(unix)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::temp_dir;
use rucuda_jit::{compile, Arch, Backend, CompileOptions, Error};

/// The image the stand-in writes.
const FAKE_IMAGE: &[u8] = b"\x7fELF rucuda stand-in nvcc";

/// Writes an executable stand-in for nvcc into `dir`: `--version` prints `version`;
/// otherwise it writes [`FAKE_IMAGE`] to the `-o` file, or, with `fail`, prints an
/// error and exits 2.
fn stand_in(dir: &Path, version: &str, fail: bool) -> PathBuf {
    let path = dir.join("nvcc");
    let body = if fail {
        "echo 'kernel.cu(1): error: the stand-in refuses' >&2\nexit 2".to_string()
    } else {
        let bytes: String = FAKE_IMAGE.iter().map(|b| format!("\\{b:03o}")).collect();
        format!(
            "out=\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = -o ]; then out=\"$2\"; fi\n  shift\n\
             done\nprintf '{bytes}' > \"$out\""
        )
    };
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '{version}'; exit 0; fi\n{body}\n"
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// NVRTC options whose fallback runs `nvcc` (the field, not the setter, which would
/// pick the nvcc backend).
fn with_nvcc(nvcc: &Path, cache: &tempfile::TempDir) -> CompileOptions {
    let mut o = CompileOptions::new()
        .arch(Arch::SM_90)
        .cache_dir(Some(cache.path().to_path_buf()));
    o.nvcc = Some(nvcc.to_path_buf());
    o
}

const HOST_HEADER: &str =
    "#include <vector>\n#include <cstdio>\n__global__ void k() { printf(\"x\\n\"); }\n";

#[test]
fn nvrtc_hands_a_host_header_to_nvcc() {
    rucuda_testkit::nvrtc_or_skip!();
    let bin = temp_dir("fake-nvcc-a");
    let cache = temp_dir("fake-nvcc-a-cache");
    let nvcc = stand_in(bin.path(), "stand-in nvcc, release 99.1", false);
    let o = with_nvcc(&nvcc, &cache);
    assert_eq!(o.backend, Backend::Nvrtc);
    let c = compile(HOST_HEADER, &o).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.compiler, Backend::Nvcc);
    assert_eq!(c.image, FAKE_IMAGE);
    assert!(c.std_headers.is_empty());
    assert!(c.cache.path().is_some(), "{:?}", c.cache);
    // nvcc's key: the same as asking for nvcc directly.
    let direct = compile(HOST_HEADER, &o.clone().backend(Backend::Nvcc)).unwrap();
    assert_eq!(direct.key, c.key);
    assert!(direct.cache.is_hit());
    // Another nvcc (another version) is another key.
    let bin_b = temp_dir("fake-nvcc-b");
    let other = stand_in(bin_b.path(), "stand-in nvcc, release 99.2", false);
    let c2 = compile(HOST_HEADER, &with_nvcc(&other, &cache)).unwrap();
    assert_eq!(c2.compiler, Backend::Nvcc);
    assert_ne!(c2.key, c.key);
    // A source NVRTC can compile never reaches nvcc.
    let plain = "#include <cstdio>\n__global__ void k() { printf(\"x\\n\"); }\n";
    let n = compile(plain, &o).unwrap();
    assert_eq!(n.compiler, Backend::Nvrtc);
    assert_eq!(n.std_headers, ["cstdio", "stdio.h", "stddef.h"]);
    assert_ne!(n.image, FAKE_IMAGE);
    // Switched off: NVRTC's error, with a note.
    let e = compile(HOST_HEADER, &o.clone().nvcc_fallback(false)).unwrap_err();
    let ce = e.as_compile_error().unwrap();
    assert!(ce.compiler.starts_with("NVRTC"), "{}", ce.compiler);
    assert!(ce.notes[0].contains("nvcc_fallback"), "{:?}", ce.notes);
    // The version helper runs the same nvcc.
    let v = rucuda_jit::get_nvcc_version(Some(&nvcc)).unwrap();
    assert_eq!(v.trim(), "stand-in nvcc, release 99.1");
}

#[test]
fn nvccs_error_says_nvrtc_came_first() {
    rucuda_testkit::nvrtc_or_skip!();
    let bin = temp_dir("fake-nvcc-fail");
    let nvcc = stand_in(bin.path(), "stand-in nvcc, release 99.3", true);
    let mut o = CompileOptions::new().arch(Arch::SM_90).cache_dir(None);
    o.nvcc = Some(nvcc.clone());
    let e = compile(HOST_HEADER, &o).unwrap_err();
    let ce = e.as_compile_error().expect("nvcc's compile error");
    assert_eq!(ce.compiler, nvcc.display().to_string());
    assert!(ce.log.contains("the stand-in refuses"), "{}", ce.log);
    let shown = e.to_string();
    assert!(
        shown.contains("note: compiled with nvcc because NVRTC cannot open \"vector\""),
        "{shown}"
    );
}

#[test]
fn without_nvcc_nvrtcs_error_says_so() {
    rucuda_testkit::nvrtc_or_skip!();
    let mut o = CompileOptions::new().arch(Arch::SM_90).cache_dir(None);
    o.nvcc = Some(PathBuf::from("/surely/not/here/nvcc"));
    let e = compile(HOST_HEADER, &o).unwrap_err();
    let Error::Compile(ce) = &e else {
        panic!("NVRTC's compile error, not {e:?}");
    };
    assert!(ce.compiler.starts_with("NVRTC"), "{}", ce.compiler);
    assert_eq!(ce.notes.len(), 1);
    let note = &ce.notes[0];
    assert!(note.contains("NVRTC cannot open \"vector\""), "{note}");
    assert!(note.contains("nvcc was not found"), "{note}");
    assert!(note.contains("/surely/not/here/nvcc"), "{note}");
}
