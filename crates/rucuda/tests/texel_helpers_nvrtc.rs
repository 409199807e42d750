//! `rucuda-helpers.cuh` (the texel helpers for double and complex textures) and the
//! kernels of `texel_helpers_gpu.rs` compile with NVRTC, included from the folder
//! `texel_helpers_include_dir` writes and pasted in front of a source. No GPU needed;
//! needs NVRTC (`.ci/run` installs NVIDIA's wheel).

use rucuda::driver::{texel_helpers_include_dir, TEXEL_HELPERS_CUH};
use rucuda::jit::{compile, Arch, CompileOptions, OutputKind};

const KERNELS: &str = include_str!("kernels/texel_helpers.cu");
const ENTRIES: &[&str] = &[
    "fetch_f64",
    "fetch_c128",
    "fetch_c64",
    "tex2d_f64",
    "tex2d_c128",
    "tex2d_c64",
    "tex2d_layered_c128",
    "tex3d_f64",
    "surf2d_f64_affine",
    "surf2d_c128_affine",
];

#[test]
fn the_texel_helper_kernels_compile_with_the_header_from_its_folder() {
    rucuda_testkit::nvrtc_or_skip!();
    let dir = texel_helpers_include_dir().expect("the header is written");
    for arch in [Arch::SM_90, Arch::SM_75] {
        let options = CompileOptions::new()
            .arch(arch)
            .output(OutputKind::Ptx)
            .include_dir(&dir)
            .cache_dir(None);
        let compiled = compile(KERNELS, &options)
            .unwrap_or_else(|e| panic!("texel_helpers.cu ({arch:?}) does not compile: {e}"));
        let ptx = String::from_utf8_lossy(&compiled.image);
        for name in ENTRIES {
            assert!(
                ptx.contains(&format!(".entry {name}(")),
                "{name}: no entry of that name in the PTX"
            );
        }
    }
}

#[test]
fn the_header_pasted_in_front_of_a_source_compiles_twice_over() {
    rucuda_testkit::nvrtc_or_skip!();
    // Pasted, then included again through its guard: one definition.
    let source = format!(
        "{TEXEL_HELPERS_CUH}\n{TEXEL_HELPERS_CUH}\n{}",
        KERNELS.replace("#include <rucuda-helpers.cuh>", "")
    );
    let options = CompileOptions::new()
        .arch(Arch::SM_90)
        .output(OutputKind::Ptx)
        .cache_dir(None);
    compile(&source, &options).unwrap_or_else(|e| panic!("the pasted header: {e}"));
}
