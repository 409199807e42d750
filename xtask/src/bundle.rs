//! The GPU bundle: a self-contained folder, `target/gpu-bundle/`, carried to a machine with a
//! GPU and no Rust. `gpu-test` and `bench` each fill their part of it and keep the other's.
//!
//! ```text
//! run.sh              the runner (from xtask/templates/run.sh)
//! lib/                what run.sh sources: common.sh, plain.sh, sanitize.sh (with
//!                     parse_libtest.awk), bench.sh (from xtask/templates/lib/)
//! manifest.json       what is in the bundle: files, sizes, git commit, date
//! tests.txt           test binaries, one file name under bin/ a line
//! examples.txt        the examples run.sh runs: "<name under examples/> [ARGS...]" a line
//! bin/<crate>__<target>   stripped libtest binaries (`lib` for a crate's unit tests)
//! bin/rucuda-bench    the bench binary (from `cargo xtask bench`)
//! examples/<crate>__<example>
//! cdylib/             shared libraries the tests load from Python (fixtures.rs)
//! peers/              cupy_bench.py, nvidia_bench.cu (compiled by run.sh with nvcc)
//! ```

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::util::{utc_timestamp, XResult};

/// The largest bundle we accept: what can be carried to the GPU machine, with room to spare.
pub const MAX_BYTES: u64 = 60 * 1024 * 1024;

/// The runner written into every bundle: `run.sh` and the files it sources from `lib/`
/// (bundle path, text).
pub const RUNNER: &[(&str, &str)] = &[
    ("run.sh", include_str!("../templates/run.sh")),
    ("lib/common.sh", include_str!("../templates/lib/common.sh")),
    ("lib/plain.sh", include_str!("../templates/lib/plain.sh")),
    (
        "lib/sanitize.sh",
        include_str!("../templates/lib/sanitize.sh"),
    ),
    (
        "lib/parse_libtest.awk",
        include_str!("../templates/lib/parse_libtest.awk"),
    ),
    ("lib/bench.sh", include_str!("../templates/lib/bench.sh")),
    ("lib/pycuda.sh", include_str!("../templates/lib/pycuda.sh")),
    (
        "lib/pycuda_long_first.py",
        include_str!("../templates/lib/pycuda_long_first.py"),
    ),
];

/// Writes [`RUNNER`] into the bundle folder `dir` (an older `lib/` is replaced).
pub fn write_runner(dir: &Path) -> XResult<()> {
    let lib = dir.join("lib");
    if lib.exists() {
        fs::remove_dir_all(&lib)?;
    }
    fs::create_dir_all(&lib)?;
    for (name, text) in RUNNER {
        fs::write(dir.join(name), text)?;
    }
    make_executable(&dir.join("run.sh"))
}

/// The cargo profile the bundle's binaries are built with (optimized, stripped).
pub const PROFILE: &str = "gpu-test";

/// The workspace as `cargo metadata` describes it.
pub struct Workspace {
    /// The workspace root.
    pub root: PathBuf,
    /// Cargo's target directory (honours `CARGO_TARGET_DIR`).
    pub target_dir: PathBuf,
    /// Package name by manifest path, for naming artifacts.
    packages: BTreeMap<PathBuf, String>,
}

impl Workspace {
    /// Asks cargo for the workspace's packages and target directory.
    pub fn load() -> XResult<Self> {
        let out = cargo()
            .args(["metadata", "--no-deps", "--format-version", "1"])
            .stderr(Stdio::inherit())
            .output()?;
        if !out.status.success() {
            return Err(format!("cargo metadata failed ({})", out.status).into());
        }
        let meta: Value = serde_json::from_slice(&out.stdout)?;
        let text = |v: &Value, key: &str| {
            v[key]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("cargo metadata: no {key}"))
        };
        let mut packages = BTreeMap::new();
        for p in meta["packages"].as_array().into_iter().flatten() {
            packages.insert(PathBuf::from(text(p, "manifest_path")?), text(p, "name")?);
        }
        Ok(Self {
            root: PathBuf::from(text(&meta, "workspace_root")?),
            target_dir: PathBuf::from(text(&meta, "target_directory")?),
            packages,
        })
    }

    /// Where the bundle is built.
    pub fn bundle_dir(&self) -> PathBuf {
        self.target_dir.join("gpu-bundle")
    }

    /// The package name of a compiler-artifact message, if it is a workspace package.
    fn package_of(&self, message: &Value) -> Option<&str> {
        let manifest = message["manifest_path"].as_str()?;
        self.packages.get(Path::new(manifest)).map(String::as_str)
    }
}

/// `cargo`, as the one that runs us when there is one.
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// One executable cargo built.
pub struct Executable {
    /// The package it belongs to.
    pub package: String,
    /// The target name (`lib` for a library's unit tests).
    pub target: String,
    /// The first kind of the target: lib, bin, test, example, bench.
    pub kind: String,
    /// True when built as a libtest harness.
    pub test: bool,
    /// Where cargo put it.
    pub path: PathBuf,
}

impl Executable {
    /// The bundle's name for it: `<crate>__<target>`.
    pub fn bundle_name(&self) -> String {
        format!("{}__{}", self.package, self.target)
    }
}

/// Runs a cargo build command (with JSON messages added) and returns the workspace
/// executables it produced. Compiler diagnostics are rendered on stderr as usual.
pub fn build_executables(ws: &Workspace, cmd: &mut Command) -> XResult<Vec<Executable>> {
    cmd.arg("--message-format=json-render-diagnostics")
        .current_dir(&ws.root)
        .stderr(Stdio::inherit());
    eprintln!("xtask: {cmd:?}");
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(format!("cargo failed ({}): {cmd:?}", out.status).into());
    }
    let mut found = Vec::new();
    for line in out.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let message: Value = serde_json::from_slice(line)?;
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let (Some(path), Some(package)) = (message["executable"].as_str(), ws.package_of(&message))
        else {
            continue;
        };
        let kind = message["target"]["kind"][0]
            .as_str()
            .unwrap_or("")
            .to_owned();
        let name = message["target"]["name"].as_str().unwrap_or("").to_owned();
        found.push(Executable {
            package: package.to_owned(),
            target: if kind == "lib" {
                "lib".to_owned()
            } else {
                name
            },
            kind,
            test: message["profile"]["test"] == true,
            path: PathBuf::from(path),
        });
    }
    Ok(found)
}

/// Copies an executable into the bundle, stripping it when it still has a symbol table.
/// Returns its size in the bundle.
pub fn copy_executable(from: &Path, to: &Path) -> XResult<u64> {
    if let Some(dir) = to.parent() {
        fs::create_dir_all(dir)?;
    }
    fs::copy(from, to)?;
    if has_symbol_table(to)? {
        let status = Command::new("strip").arg(to).status();
        if !matches!(status, Ok(s) if s.success()) {
            eprintln!(
                "xtask: warning: could not strip {} (is binutils installed?)",
                to.display()
            );
        }
    }
    make_executable(to)?;
    Ok(fs::metadata(to)?.len())
}

/// True when the file is a 64-bit little-endian ELF file with a `SHT_SYMTAB` section
/// (a stripped binary keeps only the dynamic symbols).
fn has_symbol_table(path: &Path) -> XResult<bool> {
    let bytes = fs::read(path)?;
    let u16_at = |at: usize| {
        bytes
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
    };
    let u32_at = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |at: usize| {
        bytes
            .get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    };
    // ELF magic, ELFCLASS64, ELFDATA2LSB; anything else we leave alone.
    if bytes.get(..6) != Some(&[0x7f, b'E', b'L', b'F', 2, 1][..]) {
        return Ok(false);
    }
    let (Some(section_offset), Some(entry_size), Some(count)) =
        (u64_at(0x28), u16_at(0x3a), u16_at(0x3c))
    else {
        return Ok(false);
    };
    const SHT_SYMTAB: u32 = 2;
    Ok(
        (0..count)
            .any(|i| u32_at(section_offset as usize + i * entry_size + 4) == Some(SHT_SYMTAB)),
    )
}

#[cfg(unix)]
fn make_executable(path: &Path) -> XResult<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))?;
    Ok(())
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> XResult<()> {
    Ok(())
}

/// Removes a folder's contents (the folder itself stays or is created).
pub fn clear_dir(dir: &Path) -> XResult<()> {
    if dir.exists() {
        fs::remove_dir_all(dir)?;
    }
    fs::create_dir_all(dir)?;
    Ok(())
}

/// Writes `run.sh` and `manifest.json`, prints the bundle's path and size, and fails when
/// the packed bundle is over [`MAX_BYTES`].
pub fn finish(ws: &Workspace) -> XResult<()> {
    let dir = ws.bundle_dir();
    fs::create_dir_all(&dir)?;
    write_runner(&dir)?;
    // Removed first, so that its `total_bytes` counts every other file of the bundle.
    let _ = fs::remove_file(dir.join("manifest.json"));
    let manifest = manifest(ws, &dir)?;
    fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)? + "\n",
    )?;
    let total = dir_size(&dir)?;
    let mib = total as f64 / (1024.0 * 1024.0);
    println!("bundle: {} ({mib:.1} MiB)", dir.display());
    // What travels to a GPU machine is the packed bundle. xz, not gzip: each test binary
    // links its own copy of the crates, and xz's large window finds the copies across
    // files (145 MiB packed to 18 MiB with xz, 59 MiB with gzip, over the carry limit
    // beside the sources).
    let packed = dir.with_extension("tar.xz");
    let _ = fs::remove_file(dir.with_extension("tar.gz"));
    let parent = dir.parent().ok_or("the bundle folder has no parent")?;
    crate::util::run(
        std::process::Command::new("tar")
            .env("XZ_OPT", "-6 -T0")
            .arg("-cJf")
            .arg(&packed)
            .arg("-C")
            .arg(parent)
            .arg("gpu-bundle"),
    )?;
    let packed_bytes = fs::metadata(&packed)?.len();
    let packed_mib = packed_bytes as f64 / (1024.0 * 1024.0);
    println!(
        "packed: {} ({packed_mib:.1} MiB): carry it and run `tar -xJf target/gpu-bundle.tar.xz -C target` there",
        packed.display()
    );
    if packed_bytes > MAX_BYTES {
        return Err(format!(
            "the packed bundle is {packed_mib:.1} MiB, over the {} MiB that can be carried to the GPU machine",
            MAX_BYTES / (1024 * 1024)
        )
        .into());
    }
    Ok(())
}

/// Lines of a list file in the bundle (missing file: none).
fn read_list(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Writes a list file, one name a line.
pub fn write_list(path: &Path, names: &[String]) -> XResult<()> {
    let mut text = names.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    fs::write(path, text)?;
    Ok(())
}

/// The manifest, rebuilt from what the bundle holds now.
fn manifest(ws: &Workspace, dir: &Path) -> XResult<Value> {
    let entry = |folder: &str, name: &str| -> XResult<Value> {
        let (krate, target) = name.split_once("__").unwrap_or((name, ""));
        let file = format!("{folder}/{name}");
        Ok(json!({
            "file": file,
            "crate": krate,
            "target": target,
            "bytes": fs::metadata(dir.join(&file))?.len(),
        }))
    };
    let tests = read_list(&dir.join("tests.txt"))
        .iter()
        .map(|n| entry("bin", n))
        .collect::<XResult<Vec<_>>>()?;
    // Every example carried, with the arguments run.sh runs it with (null: not run).
    let runs: Vec<(String, String)> = read_list(&dir.join("examples.txt"))
        .iter()
        .filter(|l| !l.starts_with('#'))
        .map(|l| match l.split_once(' ') {
            Some((name, args)) => (name.to_owned(), args.trim().to_owned()),
            None => (l.clone(), String::new()),
        })
        .collect();
    let mut example_names = Vec::new();
    if let Ok(entries) = fs::read_dir(dir.join("examples")) {
        for e in entries {
            example_names.push(e?.file_name().to_string_lossy().into_owned());
        }
    }
    example_names.sort();
    let mut examples = Vec::new();
    for name in &example_names {
        let mut e = entry("examples", name)?;
        e["run_args"] = match runs.iter().find(|(n, _)| n == name) {
            Some((_, args)) => Value::from(args.as_str()),
            None => Value::Null,
        };
        examples.push(e);
    }
    let bench = dir.join("bin/rucuda-bench");
    let bench = match fs::metadata(&bench) {
        Ok(m) => json!({ "file": "bin/rucuda-bench", "bytes": m.len() }),
        Err(_) => Value::Null,
    };
    let mut peers = Vec::new();
    if let Ok(entries) = fs::read_dir(dir.join("peers")) {
        for e in entries {
            peers.push(format!("peers/{}", e?.file_name().to_string_lossy()));
        }
    }
    peers.sort();
    Ok(json!({
        "format": 1,
        "created": utc_timestamp(),
        "git_commit": git_commit(&ws.root),
        "profile": PROFILE,
        "tests": tests,
        "examples": examples,
        "bench": bench,
        "peers": peers,
        "total_bytes": dir_size(dir)?,
        "usage": "bash run.sh [filter PATTERN] [exclude PATTERN] [sanitize [memcheck|racecheck|initcheck|synccheck] [--jobs N]] [list] | bench [--quick]",
    }))
}

/// `git rev-parse HEAD`, with `-dirty` when the tree has changes; `unknown` without git.
fn git_commit(root: &Path) -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    match git(&["rev-parse", "HEAD"]) {
        Some(rev) if git(&["status", "--porcelain"]).is_some_and(|s| !s.is_empty()) => {
            format!("{rev}-dirty")
        }
        Some(rev) => rev,
        None => "unknown".to_owned(),
    }
}

/// Total size of the files under `dir`.
fn dir_size(dir: &Path) -> XResult<u64> {
    let mut total = 0;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        total += if meta.is_dir() {
            dir_size(&entry.path())?
        } else {
            meta.len()
        };
    }
    Ok(total)
}

/// True when this machine has an NVIDIA GPU: `nvidia-smi -L` works or `/dev/nvidia0` exists.
pub fn has_gpu() -> bool {
    let smi = Command::new("nvidia-smi")
        .arg("-L")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    smi || Path::new("/dev/nvidia0").exists()
}

/// Runs the bundle here: `bash run.sh ARGS`, or explains what to do without a GPU.
pub fn run_in_place(ws: &Workspace, args: &[String]) -> XResult<()> {
    let run_sh = ws.bundle_dir().join("run.sh");
    if !has_gpu() {
        return Err(format!(
            "no GPU here (`nvidia-smi -L` failed and /dev/nvidia0 is missing). The bundle is built: \
             carry {} to a GPU machine and run `bash {}`, or pass --no-run to only build it",
            ws.bundle_dir().display(),
            Path::new("target/gpu-bundle/run.sh").display()
        )
        .into());
    }
    let status = Command::new("bash").arg(&run_sh).args(args).status()?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{} {} failed ({status})", run_sh.display(), args.join(" ")).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_binary_itself_is_recognised_as_elf() {
        // The running test binary is an ELF file on Linux, unstripped in the dev profile.
        let me = std::env::current_exe().unwrap();
        let symbols = has_symbol_table(&me).unwrap();
        if cfg!(all(target_os = "linux", debug_assertions)) {
            assert!(symbols, "a dev-profile test binary has a symbol table");
        }
        let tmp = std::env::temp_dir().join("xtask-not-elf");
        fs::write(&tmp, b"#!/bin/sh\n").unwrap();
        assert!(!has_symbol_table(&tmp).unwrap());
        let _ = fs::remove_file(tmp);
    }

    #[test]
    fn the_run_scripts_parse() {
        for (name, text) in RUNNER.iter().filter(|(name, _)| name.ends_with(".sh")) {
            let ok = Command::new("bash").args(["-n", "-c", text]).status();
            if let Ok(status) = ok {
                assert!(status.success(), "bash -n rejects templates/{name}");
            }
        }
    }
}
