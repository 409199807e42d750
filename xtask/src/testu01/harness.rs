//! The harness and its input: where TestU01 comes from (`TESTU01_CFLAGS`, or Debian's
//! packages fetched once), `smallcrush.c` compiled against it, and `rucuda-rand`'s
//! `stream` example that writes each case's words.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use super::fetch::{fetch, find_lib_dir, COMPONENT, SUITE};
use crate::bundle::{self, Workspace};
use crate::util::{run, XResult};

/// Where TestU01 came from, for the report.
pub(super) enum Source {
    /// Debian packages: suite, component, (name, version) of each.
    Debian {
        suite: String,
        packages: Vec<(String, String)>,
    },
    /// `TESTU01_CFLAGS`.
    Flags(String),
}

impl Source {
    pub(super) fn describe(&self) -> String {
        match self {
            Source::Debian { suite, packages } => {
                let list: Vec<String> = packages.iter().map(|(n, v)| format!("{n} {v}")).collect();
                format!("Debian {suite} {COMPONENT}: {}", list.join(", "))
            }
            Source::Flags(flags) => format!("TESTU01_CFLAGS={flags}"),
        }
    }

    pub(super) fn to_json(&self) -> Value {
        match self {
            Source::Debian { suite, packages } => json!({
                "debian_suite": suite,
                "component": COMPONENT,
                "packages": packages.iter()
                    .map(|(n, v)| json!({"name": n, "version": v}))
                    .collect::<Vec<_>>(),
            }),
            Source::Flags(flags) => json!({ "cflags": flags }),
        }
    }
}

/// Compiler flags for the harness: include folders, then the libraries.
pub(super) struct Toolkit {
    pub(super) source: Source,
    flags: Vec<String>,
    /// Whether `glibc_compat.c` is linked (Debian's archives, not `TESTU01_CFLAGS`).
    compat: bool,
}

/// The harness's flags: from `TESTU01_CFLAGS`, or Debian's packages (fetched when missing).
pub(super) fn toolkit(dir: &Path, refetch: bool) -> XResult<Toolkit> {
    if let Ok(flags) = std::env::var("TESTU01_CFLAGS") {
        return Ok(Toolkit {
            flags: flags.split_whitespace().map(str::to_owned).collect(),
            source: Source::Flags(flags),
            compat: false,
        });
    }
    let root = dir.join("root");
    let stamp = dir.join("packages.json");
    if refetch || !stamp.exists() || find_lib_dir(&root).is_none() {
        fetch(dir)?;
    }
    let recorded: Value = serde_json::from_str(&fs::read_to_string(&stamp)?)?;
    let packages = recorded["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["name"].as_str().unwrap_or("?").to_owned(),
                p["version"].as_str().unwrap_or("?").to_owned(),
            )
        })
        .collect();
    let suite = recorded["suite"].as_str().unwrap_or(SUITE).to_owned();
    let lib = find_lib_dir(&root).ok_or_else(|| {
        format!(
            "no libtestu01.a under {}: run with --refetch",
            root.join("usr/lib").display()
        )
    })?;
    let include = root.join("usr/include");
    let mut flags = vec![
        // smallcrush.c includes "bbattery.h" (upstream's flat layout); Debian's headers
        // include <testu01/...>, and gdefconf.h sits in the multiarch folder.
        format!("-I{}", include.join("testu01").display()),
        format!("-I{}", include.display()),
    ];
    if let Some(multiarch) = lib.file_name() {
        flags.push(format!("-I{}", include.join(multiarch).display()));
    }
    for archive in ["libtestu01.a", "libtestu01probdist.a", "libtestu01mylib.a"] {
        flags.push(lib.join(archive).display().to_string());
    }
    Ok(Toolkit {
        source: Source::Debian { suite, packages },
        flags,
        compat: true,
    })
}

/// Compiles `smallcrush.c` into `dir/smallcrush`.
pub(super) fn build_harness(root: &Path, dir: &Path, toolkit: &Toolkit) -> XResult<PathBuf> {
    let sources = root.join("crates/rucuda-rand/testu01");
    let exe = dir.join("smallcrush");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let mut cmd = Command::new(&cc);
    cmd.args(["-O2", "-o"])
        .arg(&exe)
        .arg(sources.join("smallcrush.c"));
    if toolkit.compat {
        cmd.arg(sources.join("glibc_compat.c"));
    }
    cmd.args(&toolkit.flags).arg("-lm");
    run(&mut cmd).map_err(|e| {
        format!(
            "building the SmallCrush harness with {cc} failed ({e}); with Debian's archives, \
             undefined symbols from a newer C library belong in glibc_compat.c"
        )
    })?;
    Ok(exe)
}

/// Builds `rucuda-rand`'s `stream` example in release and returns its path.
pub(super) fn build_stream(ws: &Workspace) -> XResult<PathBuf> {
    let built = bundle::build_executables(
        ws,
        bundle::cargo().args([
            "build",
            "--release",
            "-p",
            "rucuda-rand",
            "--example",
            "stream",
        ]),
    )?;
    built
        .into_iter()
        .find(|e| e.kind == "example" && e.target == "stream")
        .map(|e| e.path)
        .ok_or_else(|| "cargo built no `stream` example".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harness_sources_are_in_place() {
        let dir = crate::util::project_root().join("crates/rucuda-rand/testu01");
        let harness = fs::read_to_string(dir.join("smallcrush.c")).unwrap();
        assert!(harness.contains("rucuda-smallcrush\\tpvalue\\t%d\\t%.17g\\t%s\\n"));
        assert!(dir.join("glibc_compat.c").is_file());
    }
}
