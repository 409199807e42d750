//! Debian's TestU01 packages: downloaded with a private apt (signed by the Debian archive
//! keyring) into `<target>/testu01/debs` and unpacked into `<target>/testu01/root`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::util::{run, utc_timestamp, XResult};

/// The Debian suite the packages come from (Debian 13, stable).
pub(super) const SUITE: &str = "trixie";
/// The Debian mirror.
pub(super) const MIRROR: &str = "http://deb.debian.org/debian";
/// The packages' archive area (TestU01's licence forbids commercial use).
pub(super) const COMPONENT: &str = "non-free";
/// What is downloaded: the static archives and the headers.
pub(super) const PACKAGES: &[&str] = &["libtestu01-0-dev", "libtestu01-0-dev-common"];
/// The key that signs the suite's `InRelease` (bookworm's keyring holds trixie's keys).
pub(super) const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";

/// The folder of `libtestu01.a` under an unpacked root (`usr/lib/<multiarch>`).
pub(super) fn find_lib_dir(root: &Path) -> Option<PathBuf> {
    let lib = root.join("usr/lib");
    fs::read_dir(&lib)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|dir| dir.join("libtestu01.a").is_file())
}

/// Downloads Debian's TestU01 packages into `dir/debs` and unpacks them into `dir/root`,
/// then records what it got in `dir/packages.json`.
pub(super) fn fetch(dir: &Path) -> XResult<()> {
    let mirror = std::env::var("TESTU01_MIRROR").unwrap_or_else(|_| MIRROR.to_owned());
    let suite = std::env::var("TESTU01_SUITE").unwrap_or_else(|_| SUITE.to_owned());
    for tool in ["apt-get", "dpkg-deb"] {
        if Command::new(tool).arg("--version").output().is_err() {
            return Err(format!(
                "{tool} was not found: `cargo xtask testu01` takes TestU01 from Debian's \
                 packages; elsewhere, install TestU01 and set TESTU01_CFLAGS to the flags that \
                 find it (e.g. \"-I/opt/tu/include -L/opt/tu/lib -ltestu01 -lprobdist -lmylib\")"
            )
            .into());
        }
    }
    if !Path::new(KEYRING).is_file() {
        return Err(format!(
            "{KEYRING} is missing (package debian-archive-keyring): it checks the download"
        )
        .into());
    }
    let apt = dir.join("apt");
    let debs = dir.join("debs");
    let root = dir.join("root");
    for d in [&apt, &debs, &root] {
        if d.exists() {
            fs::remove_dir_all(d)?;
        }
    }
    let _ = fs::remove_file(dir.join("packages.json"));
    for d in [
        apt.join("lists/partial"),
        apt.join("cache/archives/partial"),
        apt.join("empty"),
        debs.clone(),
        root.clone(),
    ] {
        fs::create_dir_all(d)?;
    }
    let sources = apt.join("sources.list");
    fs::write(
        &sources,
        format!("deb [signed-by={KEYRING}] {mirror} {suite} {COMPONENT}\n"),
    )?;
    // A private apt: its own lists, cache and sources, none of the system's preferences;
    // nothing is installed. Root's downloads stay root's (no _apt sandbox user).
    let empty = apt.join("empty");
    let options = [
        format!("-oDir::State::Lists={}", apt.join("lists").display()),
        format!("-oDir::Cache={}", apt.join("cache").display()),
        format!("-oDir::Etc::SourceList={}", sources.display()),
        format!("-oDir::Etc::SourceParts={}", empty.display()),
        format!("-oDir::Etc::Preferences={}", empty.join("none").display()),
        format!("-oDir::Etc::PreferencesParts={}", empty.display()),
        "-oAcquire::IndexTargets::deb::DEP-11::DefaultEnabled=false".to_owned(),
        "-oAPT::Sandbox::User=root".to_owned(),
        "-oAPT::Get::List-Cleanup=false".to_owned(),
        "-qq".to_owned(),
    ];
    eprintln!(
        "testu01: downloading {} from {mirror} {suite} {COMPONENT}",
        PACKAGES.join(", ")
    );
    let download_failed = |what: &str, e: Box<dyn std::error::Error>| {
        format!(
            "could not {what} ({e}): TestU01 comes from {mirror} {suite} {COMPONENT} \
             (network access needed once; TESTU01_MIRROR and TESTU01_SUITE choose another \
             source, TESTU01_CFLAGS a TestU01 of your own)"
        )
    };
    run(Command::new("apt-get")
        .args(&options)
        .args(["-oAPT::Update::Error-Mode=any", "update"]))
    .map_err(|e| download_failed("read the package lists", e))?;
    run(Command::new("apt-get")
        .args(&options)
        .arg("download")
        .args(PACKAGES)
        .current_dir(&debs))
    .map_err(|e| download_failed("download the packages", e))?;

    let mut packages = Vec::new();
    let mut files: Vec<PathBuf> = fs::read_dir(&debs)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "deb"))
        .collect();
    files.sort();
    for deb in &files {
        run(Command::new("dpkg-deb").arg("-x").arg(deb).arg(&root))?;
        let out = Command::new("dpkg-deb")
            .arg("-f")
            .arg(deb)
            .args(["Package", "Version"])
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim().to_owned())
                .unwrap_or_default()
        };
        packages.push(json!({
            "name": field("Package:"),
            "version": field("Version:"),
            "file": deb.file_name().map(|f| f.to_string_lossy().into_owned()),
        }));
    }
    if packages.len() != PACKAGES.len() {
        return Err(format!(
            "expected {} packages in {}, found {}",
            PACKAGES.len(),
            debs.display(),
            packages.len()
        )
        .into());
    }
    let record = json!({
        "mirror": mirror,
        "suite": suite,
        "component": COMPONENT,
        "date": utc_timestamp(),
        "packages": packages,
    });
    fs::write(
        dir.join("packages.json"),
        serde_json::to_string_pretty(&record)? + "\n",
    )?;
    Ok(())
}
