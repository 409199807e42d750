//! Every generated elementwise kernel variant compiled for real with NVRTC (no GPU
//! needed): every element type, every variant, the prelude's types in use. Needs NVRTC
//! (`pip install nvidia-cuda-nvrtc==13.0.*`, which `.ci/run` does).

use rucuda_array::codegen::ArgSpec;
use rucuda_array::elementwise::{ElementwiseSpec, Variant, MAX_STRIDED_DIMS};
use rucuda_array::{DType, JitCompiler};
use rucuda_jit::{Arch, CompileOptions, OutputKind};

fn compiler(output: OutputKind) -> JitCompiler {
    JitCompiler::with_options(
        CompileOptions::new()
            .no_extern_c(true)
            .cache_dir(None)
            .output(output),
    )
}

/// Compiles one variant to PTX and a cubin; returns the PTX text.
fn compile(spec: &ElementwiseSpec, variant: &Variant) -> String {
    let k = spec.render(variant).unwrap();
    let ptx = compiler(OutputKind::Ptx)
        .compile_for(&k.source, Arch::SM_90)
        .unwrap_or_else(|e| panic!("{} failed to compile: {e}\n{}", k.entry, k.source));
    let text = String::from_utf8_lossy(&ptx.image).into_owned();
    assert!(
        text.contains(&format!(".entry {}(", k.entry)),
        "{}",
        k.entry
    );
    compiler(OutputKind::Cubin)
        .compile_for(&k.source, Arch::SM_75)
        .unwrap_or_else(|e| panic!("{} (sm_75) failed: {e}", k.entry));
    text
}

fn all_variants(spec: &ElementwiseSpec) -> Vec<Variant> {
    let arrays = spec.args().iter().filter(|a| a.is_vector()).count();
    let mut v = vec![Variant::Contiguous, Variant::Ranged];
    if spec.vectorizable() {
        v.push(Variant::Vectorized);
    }
    for ndim in [1, 3] {
        v.push(Variant::Strided {
            ndim,
            strided: vec![true; arrays],
        });
    }
    v
}

/// The body of a kernel's PTX (from its `.entry` to the next `.entry` or the end).
fn entry_body<'a>(ptx: &'a str, entry: &str) -> &'a str {
    let start = ptx.find(&format!(".entry {entry}(")).unwrap();
    let rest = &ptx[start..];
    let end = rest[1..].find(".entry").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

#[test]
fn copy_kernels_for_every_dtype_and_variant_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    for d in DType::ALL {
        let spec = ElementwiseSpec::builder("copy")
            .arg(ArgSpec::const_vector("src", d))
            .arg(ArgSpec::vector("dst", d))
            .arg(ArgSpec::scalar("v", d))
            .operation("dst[i] = src[i]; (void)v")
            .build()
            .unwrap();
        for variant in all_variants(&spec) {
            compile(&spec, &variant);
        }
    }
}

#[test]
fn arithmetic_on_every_dtype_compiles() {
    rucuda_testkit::nvrtc_or_skip!();
    for d in DType::ALL {
        let op = match d {
            DType::Bool => "z[i] = x[i] && !y[i]",
            DType::C64 | DType::C128 => "z[i] = a * x[i] / (y[i] + a) - conj(x[i]) * abs(y[i])",
            DType::F16 | DType::BF16 => "z[i] = (float)a * x[i] + y[i]; z[i] += 1.0f",
            _ => "z[i] = a * x[i] + y[i]",
        };
        let spec = ElementwiseSpec::builder("arith")
            .arg(ArgSpec::scalar("a", d))
            .arg(ArgSpec::const_vector("x", d))
            .arg(ArgSpec::const_vector("y", d))
            .arg(ArgSpec::vector("z", d))
            .operation(op)
            .build()
            .unwrap();
        for variant in all_variants(&spec) {
            compile(&spec, &variant);
        }
    }
}

#[test]
fn saxpy_vectorized_uses_16_byte_accesses() {
    rucuda_testkit::nvrtc_or_skip!();
    let spec = ElementwiseSpec::parse(
        "float a, const float *x, const float *y, float *z",
        "z[i] = a * x[i] + y[i]",
        "saxpy",
    )
    .unwrap();
    let ptx = compile(&spec, &Variant::Vectorized);
    let body = entry_body(&ptx, "saxpy_vec");
    assert!(body.contains("ld.global.nc.v4"), "{body}");
    assert!(body.contains("st.global.v4"), "{body}");
    assert!(
        !body.contains(".local"),
        "tiles must stay in registers:\n{body}"
    );
    // The same for double (two 16-byte halves per 4-element tile of a float/double mix).
    let spec =
        ElementwiseSpec::parse("const float *x, double *z", "z[i] = 2.0 * x[i]", "widen").unwrap();
    let ptx = compile(&spec, &Variant::Vectorized);
    let body = entry_body(&ptx, "widen_vec");
    assert!(body.contains("ld.global.nc.v4"), "{body}");
    assert!(
        body.contains("st.global.v2.f64") || body.contains("st.global.v4"),
        "{body}"
    );
}

#[test]
fn user_snippets_and_reserved_names_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    let spec = ElementwiseSpec::builder("snippets")
        .input::<f32>("x")
        .output::<f32>("y")
        .preamble("__device__ float sq(float v) { return v * v; }")
        .loop_prep("float acc = 0.0f")
        .operation("acc += sq(x[i]); y[i] = acc + (float)(i + n + tid + total_threads)")
        .after_loop("if (acc < 0) y[0] = acc")
        .build()
        .unwrap();
    for variant in all_variants(&spec) {
        compile(&spec, &variant);
    }
    let spec = ElementwiseSpec::parse("double *x", "x[i] = x[i] * 2", "deep").unwrap();
    compile(
        &spec,
        &Variant::Strided {
            ndim: MAX_STRIDED_DIMS,
            strided: vec![true],
        },
    );
}

#[test]
fn a_compile_error_carries_the_log() {
    rucuda_testkit::nvrtc_or_skip!();
    let spec = ElementwiseSpec::parse("float *x", "x[i] = undefined_thing", "broken").unwrap();
    let k = spec.render(&Variant::Contiguous).unwrap();
    let e = compiler(OutputKind::Ptx)
        .compile_for(&k.source, Arch::SM_90)
        .unwrap_err();
    assert!(e.to_string().contains("undefined_thing"), "{e}");
}
