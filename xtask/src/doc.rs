//! `cargo xtask doc`: the API docs of every workspace crate, with rustdoc warnings as
//! errors (broken intra-doc links, bad code blocks). The guide
//! (`crates/rucuda/guide/*.md`) is part of them: the `rucuda` crate includes each chapter
//! as a page of `rucuda::guide`, and every path its PyCUDA map names as an intra-doc link,
//! so a path that no longer resolves fails this command.

use crate::bundle::cargo;
use crate::util::{project_root, run, XResult};

/// Entry point.
pub fn main(args: &[String]) -> XResult<()> {
    if let Some(arg) = args.first() {
        return Err(format!("doc takes no arguments (got {arg})").into());
    }
    let mut flags = std::env::var("RUSTDOCFLAGS").unwrap_or_default();
    if !flags.is_empty() {
        flags.push(' ');
    }
    flags.push_str("-D warnings");
    run(cargo()
        .args(["doc", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", flags)
        .current_dir(project_root()))?;
    println!("docs: target/doc/rucuda/index.html");
    println!("guide: target/doc/rucuda/guide/index.html (sources: crates/rucuda/guide/)");
    Ok(())
}
