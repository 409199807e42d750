//! `cargo xtask doc`: the API docs of every workspace crate, with rustdoc warnings as
//! errors (broken intra-doc links, bad code blocks). The guide
//! (`crates/rucuda/guide/*.md`) is part of them: the `rucuda` crate includes each chapter
//! as a page of `rucuda::guide`, and every path its PyCUDA map names as an intra-doc link,
//! so a path that no longer resolves fails this command.
//!
//! rustdoc renders a link into another crate only when that crate's docs are already in
//! `target/doc`; otherwise it prints the bare `[name]`, with no warning. cargo documents
//! the workspace's crates in no fixed order, so a first pass can leave the facade's links
//! to the crates it re-exports (`[driver]`, `mod@array`, ...) unrendered. Once every
//! crate's folder exists, a second pass renders them all, and [`links`] fails on any link
//! still left as text.

mod links;

use crate::bundle::{cargo, Workspace};
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
    flags.push_str("-D warnings -D rustdoc::broken_intra_doc_links");
    let document = |jobs: &[&str]| {
        run(cargo()
            .args(["doc", "--workspace", "--no-deps"])
            .args(jobs)
            .env("RUSTDOCFLAGS", &flags)
            .current_dir(project_root()))
    };
    document(&[])?;
    let doc_dir = Workspace::load()?.target_dir.join("doc");
    let crates = links::workspace_crates()?;
    // Removing a crate's front page makes cargo document it again, now that every
    // crate's folder is there for its links to point into. One crate at a time: cargo
    // empties a crate's folder before documenting it, which would hide it from a crate
    // documented at the same moment.
    for name in &crates {
        let front = doc_dir.join(name).join("index.html");
        if front.exists() {
            std::fs::remove_file(&front)?;
        }
    }
    document(&["--jobs", "1"])?;
    links::check_rendered(&doc_dir, &crates)?;
    println!("docs: target/doc/rucuda/index.html");
    println!("guide: target/doc/rucuda/guide/index.html (sources: crates/rucuda/guide/)");
    Ok(())
}
