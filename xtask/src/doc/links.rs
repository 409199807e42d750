//! Links rustdoc resolved but left unrendered: an intra-doc link shows as `[name]` text,
//! or keeps its destination (`mod@array`) as the address, when the item it names has no
//! page rustdoc knows of. rustdoc gives no warning for these, so `cargo xtask doc` looks
//! for them in the pages it wrote.

use std::path::Path;

use serde_json::Value;

use crate::bundle::cargo;
use crate::util::{project_root, XResult};

/// Links of bitflags' generated methods into its own `Flags` trait: a `--no-deps` build
/// has no page for bitflags, and docs.rs links them. Not ours to fix.
const EXTERNAL_TEXT: &[&str] = &["Flags::insert", "Flags::remove", "Self::FLAGS"];

/// The folder name under `target/doc` of every target of every workspace package.
pub fn workspace_crates() -> XResult<Vec<String>> {
    let out = cargo()
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(project_root())
        .output()?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed ({})", out.status).into());
    }
    let meta: Value = serde_json::from_slice(&out.stdout)?;
    let mut names: Vec<String> = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["targets"].as_array().into_iter().flatten())
        .filter(|t| {
            t["kind"]
                .as_array()
                .into_iter()
                .flatten()
                // Libraries only: a binary's pages (xtask, the bench) hold the docs clap's
                // derives copy from clap's traits, whose links point into clap's crate.
                .any(|k| k == "lib")
        })
        .filter_map(|t| t["name"].as_str().map(|n| n.replace('-', "_")))
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// Fails with every unrendered link found in the pages of `crates` under `doc_dir`.
pub fn check_rendered(doc_dir: &Path, crates: &[String]) -> XResult<()> {
    let mut found = Vec::new();
    for name in crates {
        let dir = doc_dir.join(name);
        if dir.is_dir() {
            scan(&dir, doc_dir, &mut found)?;
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} intra-doc link(s) left unrendered by rustdoc:\n  {}",
        found.len(),
        found.join("\n  ")
    )
    .into())
}

/// Adds `page: link` to `found` for each unrendered link in the HTML files under `dir`.
fn scan(dir: &Path, doc_dir: &Path, found: &mut Vec<String>) -> XResult<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            scan(&path, doc_dir, found)?;
        } else if path.extension().is_some_and(|e| e == "html") {
            let html = std::fs::read_to_string(&path)?;
            let page = path.strip_prefix(doc_dir).unwrap_or(&path).display();
            for link in unrendered(&html) {
                found.push(format!("{page}: {link}"));
            }
        }
    }
    Ok(())
}

/// The unrendered links of one page: `[<code>name</code>]` text, and addresses that are
/// intra-doc destinations (`mod@x`, `crate::x`, `self::x`, `super::x`).
fn unrendered(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (start, _) in html.match_indices("[<code>") {
        let rest = &html[start + "[<code>".len()..];
        if let Some(end) = rest.find("</code>]") {
            let text = &rest[..end];
            if !text.contains('<') && !EXTERNAL_TEXT.contains(&text) {
                out.push(format!("[{text}]"));
            }
        }
    }
    for (start, _) in html.match_indices("href=\"") {
        let rest = &html[start + "href=\"".len()..];
        let target = rest.split('"').next().unwrap_or_default();
        let intra_doc = ["crate::", "self::", "super::"]
            .iter()
            .any(|p| target.starts_with(p))
            || (target.contains('@') && !target.contains(':'));
        if intra_doc {
            out.push(format!("href=\"{target}\""));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::unrendered;

    #[test]
    fn finds_text_links_and_intra_doc_addresses() {
        let html = r#"<td>[<code>driver</code>]</td><a href="mod@array"><code>array</code></a>
            <a href="tools/index.html">tools</a> [<code>Flags::insert</code>]
            <a href="mailto:a@b.c">mail</a>"#;
        assert_eq!(unrendered(html), ["[driver]", "href=\"mod@array\""]);
    }
}
