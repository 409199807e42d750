//! Every axis-reduction kernel module (each operation for each element type it
//! supports) compiled for real with NVRTC (no GPU needed), and the PTX of the
//! contiguous-row kernel checked for 16-byte loads. Needs NVRTC (`.ci/run` installs
//! NVIDIA's wheel).

use rucuda_array::axis_reduce::kernel_sources;
use rucuda_array::JitCompiler;
use rucuda_jit::{Arch, CompileOptions, OutputKind};

fn compiler(output: OutputKind) -> JitCompiler {
    JitCompiler::with_options(
        CompileOptions::new()
            .no_extern_c(true)
            .cache_dir(None)
            .output(output),
    )
}

const ENTRIES: [&str; 3] = ["rucuda_axis_rows", "rucuda_axis_cols", "rucuda_axis_merge"];

#[test]
fn every_axis_kernel_compiles() {
    let sources = kernel_sources();
    // 11 operations; complex types lack the 6 orderings and moments.
    assert_eq!(sources.len(), 11 * 15 - 2 * 6);
    for (label, source) in &sources {
        let ptx = compiler(OutputKind::Ptx)
            .compile_for(source, Arch::SM_90)
            .unwrap_or_else(|e| panic!("{label} failed to compile: {e}\n{source}"));
        let text = String::from_utf8_lossy(&ptx.image);
        for entry in ENTRIES {
            assert!(
                text.contains(&format!(".entry {entry}(")),
                "{label}: {entry}"
            );
        }
        // The contiguous rows are read 16 bytes at a time.
        let rows = text
            .split(".entry ")
            .find(|body| body.starts_with("rucuda_axis_rows"))
            .unwrap_or_default();
        assert!(
            rows.contains(".v4.u32") || rows.contains(".v4.b32"),
            "{label}: no 16-byte loads"
        );
    }
}

#[test]
fn axis_kernels_compile_for_the_oldest_architecture() {
    for (label, source) in kernel_sources()
        .iter()
        .filter(|(l, _)| l.ends_with("float16") || l.ends_with("float32") || l.ends_with("bool"))
    {
        compiler(OutputKind::Cubin)
            .compile_for(source, Arch::SM_75)
            .unwrap_or_else(|e| panic!("{label} (sm_75) failed: {e}"));
    }
}

/// The f32 sum's kernels keep everything in registers (no local-memory frame), so that
/// the strided odometer and the unrolled loads cost no memory traffic.
#[test]
fn f32_sum_kernels_use_no_local_memory() {
    let (_, source) = kernel_sources()
        .into_iter()
        .find(|(l, _)| l == "Sum float32")
        .expect("the f32 sum");
    let ptx = compiler(OutputKind::Ptx)
        .compile_for(&source, Arch::SM_90)
        .expect("compiles");
    let text = String::from_utf8_lossy(&ptx.image);
    for body in text.split(".entry ").skip(1) {
        let name = body.split('(').next().unwrap_or_default();
        assert!(!body.contains(".local"), "{name} uses local memory");
    }
}
