//! `cargo xtask`: the project's own commands.
//!
//! - `bindgen [--check]`: regenerate the committed raw bindings (driver, NVRTC).
//! - `gpu-test [--no-run]`: build the GPU test bundle under `target/gpu-bundle/`, run it where a GPU is local.
//! - `bench [--no-run]`: add the bench binary to the bundle, run it where a GPU is local.
//! - `doc`: build the API docs and the guide.

mod bindgen;
mod util;

const HELP: &str =
    "usage: cargo xtask <bindgen [--check] | gpu-test [--no-run] | bench [--no-run] | doc>";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("bindgen") => bindgen::main(&args[1..]),
        _ => {
            eprintln!("{HELP}");
            std::process::exit(2);
        }
    };
    if let Err(e) = result {
        eprintln!("xtask: {e}");
        std::process::exit(1);
    }
}
