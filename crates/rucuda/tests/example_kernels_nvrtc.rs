//! The examples' CUDA C, and the facade GPU tests' own, compiles with NVRTC for an H100
//! (sm_90), so a typo in a kernel fails here, not first on the GPU machine. No GPU needed; needs NVRTC (`pip install
//! nvidia-cuda-nvrtc==13.0.*`, which `.ci/run` does).

use rucuda::jit::{compile, Arch, CompileOptions, OutputKind};

const KERNELS: &[(&str, &str)] = &[
    (
        "multiply_them",
        include_str!("../examples/kernels/multiply_them.cu"),
    ),
    (
        "polynomial",
        include_str!("../examples/kernels/polynomial.cu"),
    ),
    ("sine_sum", include_str!("../examples/kernels/sine_sum.cu")),
    (
        "texture_sample",
        include_str!("../examples/kernels/texture_sample.cu"),
    ),
];

#[test]
fn every_example_kernel_compiles_with_nvrtc() {
    rucuda_testkit::nvrtc_or_skip!();
    for (name, source) in KERNELS {
        for output in [OutputKind::Cubin, OutputKind::Ptx] {
            let options = CompileOptions::new()
                .arch(Arch::SM_90)
                .output(output)
                .cache_dir(None);
            let compiled = compile(source, &options)
                .unwrap_or_else(|e| panic!("{name} ({output:?}) does not compile: {e}"));
            assert!(!compiled.image.is_empty(), "{name}: empty {output:?}");
            if output == OutputKind::Ptx {
                // extern "C" by default: the kernel keeps its plain name.
                let ptx = String::from_utf8_lossy(&compiled.image);
                assert!(
                    ptx.contains(&format!(".entry {name}(")),
                    "{name}: no entry of that name in the PTX"
                );
            }
        }
    }
}

#[test]
fn the_register_heavy_test_kernels_compile_with_nvrtc() {
    rucuda_testkit::nvrtc_or_skip!();
    let options = CompileOptions::new()
        .arch(Arch::SM_90)
        .output(OutputKind::Ptx)
        .no_extern_c(true)
        .cache_dir(None);
    let compiled = compile(include_str!("kernels/register_heavy.cu"), &options)
        .unwrap_or_else(|e| panic!("register_heavy.cu does not compile: {e}"));
    let ptx = String::from_utf8_lossy(&compiled.image);
    for name in ["live_24", "live_48", "live_72", "live_96"] {
        assert!(
            ptx.contains(&format!(".entry {name}(")),
            "{name}: no entry of that name in the PTX"
        );
    }
}
