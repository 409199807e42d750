//! The guide's PyCUDA map (`guide/pycuda-map.md`) names rucuda items by full path.
//! `src/guide/links.rs` repeats each as an intra-doc link, so that `cargo xtask doc`
//! (rustdoc with `-D warnings`) fails when a path stops resolving. This test keeps the
//! two lists equal; `RUCUDA_BLESS=1 cargo test -p rucuda --test guide_map` rewrites
//! `links.rs` from the map (then run it again: both files are read at compile time, so
//! the test binary also runs where the sources are not, as in the GPU bundle).

use std::collections::BTreeSet;
use std::path::PathBuf;

const MAP: &str = include_str!("../guide/pycuda-map.md");
const LINKS: &str = include_str!("../src/guide/links.rs");

/// Every code span of `text` that is a `rucuda::` path (a macro keeps its `!`).
fn rucuda_paths(text: &str) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| {
            span.starts_with("rucuda::")
                && span
                    .trim_end_matches('!')
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        })
        .map(str::to_string)
        .collect()
}

fn links_file(paths: &BTreeSet<String>) -> String {
    let mut out = String::from(
        "//! Every rucuda path that `guide/pycuda-map.md` names, as an intra-doc link, so\n\
         //! that rustdoc checks each one resolves. Written by `RUCUDA_BLESS=1 cargo test -p\n\
         //! rucuda --test guide_map`; do not edit by hand.\n//!\n",
    );
    for p in paths {
        out.push_str(&format!(
            "//! - [`{}`]\n",
            p.replacen("rucuda::", "crate::", 1)
        ));
    }
    out
}

#[test]
fn links_rs_lists_every_path_of_the_pycuda_map() {
    let paths = rucuda_paths(MAP);
    assert!(paths.len() > 200, "only {} paths in the map", paths.len());
    let want = links_file(&paths);
    if std::env::var_os("RUCUDA_BLESS").is_some() && LINKS != want {
        let links = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/guide/links.rs");
        std::fs::write(&links, &want).unwrap();
        println!("wrote {}: run the test again", links.display());
        return;
    }
    assert!(
        LINKS == want,
        "src/guide/links.rs does not match guide/pycuda-map.md: rerun with RUCUDA_BLESS=1"
    );
}

#[test]
fn every_row_of_the_map_has_an_answer() {
    let rows: Vec<&str> = MAP.lines().filter(|l| l.starts_with("| `")).collect();
    assert!(rows.len() >= 240, "{} rows", rows.len());
    for row in rows {
        let cells: Vec<&str> = row.split(" | ").collect();
        assert_eq!(cells.len(), 2, "a row of two cells: {row}");
        let answer = cells[1].trim_end_matches(" |").trim();
        assert!(
            answer.contains("rucuda::") || answer.contains("in progress"),
            "no rucuda item and not in progress: {row}"
        );
    }
}
