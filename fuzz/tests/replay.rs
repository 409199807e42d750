//! Replays every seed and every kept regression input through its target: a crash found
//! once stays fixed. Runs on stable: `cargo test --manifest-path fuzz/Cargo.toml
//! --no-default-features`.

use rucuda_fuzz::{files_in, fuzz_dir, targets};

#[test]
fn seeds_and_regressions_pass_every_target() {
    let mut ran = 0;
    for (name, target) in targets::ALL {
        for kind in ["seeds", "regressions"] {
            for path in files_in(&fuzz_dir().join(kind).join(name)) {
                let input = std::fs::read(&path).unwrap();
                let r = std::panic::catch_unwind(|| target(&input));
                assert!(r.is_ok(), "{name}: {} panics", path.display());
                ran += 1;
            }
        }
    }
    assert!(ran >= targets::ALL.len(), "only {ran} inputs");
}
