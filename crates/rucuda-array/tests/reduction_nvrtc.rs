//! Every generated reduction and scan kernel compiled for real with NVRTC (no GPU
//! needed): the reductions behind the array methods for every element type and variant,
//! user reductions from the string form and with struct types, scans of every element
//! type, kind and variant, custom scan operators; and the PTX checked for 16-byte
//! read-only loads and stores with tiles in registers. Needs NVRTC (`.ci/run` installs
//! NVIDIA's wheel).

use rucuda_array::codegen::ArgSpec;
use rucuda_array::reduction::{builtin_specs, ReductionSpec, ReductionType, Variant};
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

/// Compiles `source` to PTX for sm_90 (and, with `cubin`, to a cubin for sm_75, the
/// oldest architecture we build for); checks the entries and returns the PTX text.
fn compile_source(source: &str, entries: &[&str], cubin: bool) -> String {
    let ptx = compiler(OutputKind::Ptx)
        .compile_for(source, Arch::SM_90)
        .unwrap_or_else(|e| panic!("{} failed to compile: {e}\n{source}", entries[0]));
    let text = String::from_utf8_lossy(&ptx.image).into_owned();
    for entry in entries {
        assert!(text.contains(&format!(".entry {entry}(")), "{entry}");
    }
    if cubin {
        compiler(OutputKind::Cubin)
            .compile_for(source, Arch::SM_75)
            .unwrap_or_else(|e| panic!("{} (sm_75) failed: {e}", entries[0]));
    }
    text
}

/// Compiles one reduction variant (both stages); returns the PTX text.
fn compile(spec: &ReductionSpec, variant: &Variant, cubin: bool) -> String {
    let k = spec.render(variant).unwrap();
    compile_source(&k.source, &[&k.stage1, &k.stage2], cubin)
}

/// The variants a call can choose for `spec`.
fn variants(spec: &ReductionSpec) -> Vec<Variant> {
    let arrays = spec.args().iter().filter(|a| a.is_vector()).count();
    let mut v = vec![Variant::Contiguous];
    if spec.render(&Variant::Vectorized).is_ok() {
        v.push(Variant::Vectorized);
    }
    // Strided: the first array through strides (others, used as `x[idx[i]]`, stay flat).
    let mut strided = vec![false; arrays];
    strided[0] = true;
    v.push(Variant::Strided { ndim: 3, strided });
    v
}

/// The body of a kernel's PTX (from its `.entry` to the next `.entry` or the end).
fn entry_body<'a>(ptx: &'a str, entry: &str) -> &'a str {
    let start = ptx.find(&format!(".entry {entry}(")).unwrap();
    let rest = &ptx[start..];
    let end = rest[1..].find(".entry").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

/// The built-ins of the array methods whose label contains `filter`, every variant;
/// one of the variants also to a cubin.
fn compile_builtins(filter: impl Fn(&str) -> bool) -> usize {
    let mut count = 0;
    for (label, spec) in builtin_specs().into_iter().filter(|(l, _)| filter(l)) {
        for (k, variant) in variants(&spec).iter().enumerate() {
            let ptx = compile(&spec, variant, k == 0);
            assert!(
                !ptx.contains(".local"),
                "{label} {variant:?} spills:\n{ptx}"
            );
            count += 1;
        }
    }
    count
}

#[test]
fn sums_and_dots_of_every_dtype_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    let n = compile_builtins(|l| l.starts_with("Sum") || l.starts_with("Dot"));
    assert!(n >= 2 * 15 * 3, "{n}");
}

#[test]
fn orderings_of_every_dtype_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    let n = compile_builtins(|l| {
        ["Max", "Min", "ArgMax", "ArgMin"]
            .iter()
            .any(|p| l.starts_with(&format!("{p}(")))
    });
    assert!(n >= 4 * 13 * 3, "{n}");
}

#[test]
fn any_all_and_index_ranges_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    let n = compile_builtins(|l| {
        l.starts_with("Any") || l.starts_with("All") || l.starts_with("IndexRange")
    });
    assert!(n >= (2 * 15 + 8) * 3, "{n}");
}

#[test]
fn subset_reductions_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    let n = compile_builtins(|l| l.starts_with("Subset"));
    assert!(n >= 4 * 13 * 3, "{n}");
}

#[test]
fn sum_and_dot_f32_load_16_bytes_into_registers() {
    rucuda_testkit::nvrtc_or_skip!();
    let find = |label: &str| {
        builtin_specs()
            .into_iter()
            .find(|(l, _)| l == label)
            .unwrap()
            .1
    };
    let ptx = compile(
        &find("Sum { input: F32, output: F32 }"),
        &Variant::Vectorized,
        false,
    );
    let body = entry_body(&ptx, "gpuarray_sum_r1v");
    // Eight 16-byte read-only loads in the main loop, one in the single-group loop.
    assert_eq!(body.matches("ld.global.nc.v4.u32").count(), 9, "{body}");
    assert!(
        !body.contains(".local") && !body.contains("atom."),
        "{body}"
    );
    assert!(body.contains("shfl.sync.down.b32"), "{body}");
    let ptx = compile(&find("Dot(F32)"), &Variant::Vectorized, false);
    let body = entry_body(&ptx, "gpuarray_dot_r1v");
    assert_eq!(body.matches("ld.global.nc.v4.u32").count(), 10, "{body}");
    for label in [
        "Sum { input: F64, output: F64 }",
        "Sum { input: I64, output: I64 }",
        "Max(F32)",
    ] {
        let spec = find(label);
        let ptx = compile(&spec, &Variant::Vectorized, false);
        let k = spec.render(&Variant::Vectorized).unwrap();
        let body = entry_body(&ptx, &k.stage1);
        assert_eq!(
            body.matches("ld.global.nc.v4").count(),
            9,
            "{label}:\n{body}"
        );
        assert!(!body.contains(".local"), "{label}");
    }
}

#[test]
fn user_reductions_from_strings_and_structs_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    // PyCUDA's string form, two arrays and a scalar in the map.
    let spec = ReductionSpec::parse(
        DType::F64,
        "0",
        "a+b",
        "w * x[i] * y[i] + (double)i / n",
        "double w, const float *x, const double *y",
        "weighted_dot",
    )
    .unwrap();
    for variant in variants(&spec) {
        compile(&spec, &variant, true);
    }
    // PyCUDA's struct reduction: min and max together, with a constructor.
    let spec = ReductionSpec::builder("minmax")
        .preamble(
            "struct minmax_collector {\n  float lo, hi;\n  __device__ minmax_collector() {}\n  \
             __device__ minmax_collector(float l, float h) : lo(l), hi(h) {}\n};\n\
             __device__ minmax_collector agg(minmax_collector a, minmax_collector b)\n\
             { return minmax_collector(fminf(a.lo, b.lo), fmaxf(a.hi, b.hi)); }",
        )
        .output_type(ReductionType::structure("minmax_collector", 8, 4))
        .neutral("minmax_collector(3.4e38f, -3.4e38f)")
        .reduce("agg(a, b)")
        .map("minmax_collector(x[i], x[i])")
        .input::<f32>("x")
        .build()
        .unwrap();
    for variant in variants(&spec) {
        compile(&spec, &variant, true);
    }
    // A gather the vectorized variant cannot tile, mixed sizes, a complex accumulator.
    let spec = ReductionSpec::builder("mixed")
        .output_dtype(DType::C128)
        .neutral("0")
        .reduce("a + b")
        .map("rucuda_complex128(x[i], 0.0) * y[i] + (double)z[n - 1 - i]")
        .input::<u8>("x")
        .arg(ArgSpec::const_vector("y", DType::C128))
        .input::<i16>("z")
        .build()
        .unwrap();
    for variant in variants(&spec) {
        compile(&spec, &variant, false);
    }
}

#[test]
fn a_reduction_compile_error_carries_the_log() {
    rucuda_testkit::nvrtc_or_skip!();
    let spec =
        ReductionSpec::parse(DType::F32, "0", "a+b", "x[i] + nope", "float *x", "broken").unwrap();
    let k = spec.render(&Variant::Contiguous).unwrap();
    let e = compiler(OutputKind::Ptx)
        .compile_for(&k.source, Arch::SM_90)
        .unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
}

mod scans {
    use super::*;
    use rucuda_array::scan::{ScanKind, ScanSpec, ScanTuning, ScanVariant};

    fn compile_scan(spec: &ScanSpec, cubin_for: Option<ScanVariant>) -> Vec<String> {
        ScanVariant::ALL
            .iter()
            .map(|&v| {
                let k = spec.render(v).unwrap();
                let ptx = compile_source(&k.source, &[&k.entry], cubin_for == Some(v));
                assert!(!ptx.contains(".local"), "{} spills:\n{ptx}", k.entry);
                ptx
            })
            .collect()
    }

    fn add_scan(d: DType, kind: ScanKind) -> ScanSpec {
        let op = match d {
            DType::Bool => "a || b",
            _ => "a + b",
        };
        ScanSpec::builder(d)
            .scan(op)
            .neutral("0")
            .kind(kind)
            .name("cumsum")
            .build()
            .unwrap()
    }

    /// Every tuning the bench sweeps compiles without local memory.
    #[test]
    fn tunings_compile_without_local_memory() {
        rucuda_testkit::nvrtc_or_skip!();
        let mut tunings = vec![];
        for (threads, vectors) in [(128, 8), (128, 20), (256, 8), (128, 16), (64, 16), (512, 8)] {
            for (streaming, early_look_back) in [(false, false), (true, false), (true, true)] {
                tunings.push(ScanTuning {
                    threads,
                    vectors,
                    streaming,
                    early_look_back,
                    ..ScanTuning::for_size(4)
                });
            }
        }
        for d in [DType::I32, DType::I64] {
            let spec = add_scan(d, ScanKind::Exclusive);
            for &t in &tunings {
                for v in [ScanVariant::ALL[0], ScanVariant::ALL[1]] {
                    let k = spec.render_tuned(v, t).unwrap();
                    let ptx = compile_source(&k.source, &[&k.entry], false);
                    assert!(!ptx.contains(".local"), "{} {t:?} spills", k.entry);
                }
            }
        }
    }

    #[test]
    fn inclusive_scans_of_every_dtype_compile() {
        rucuda_testkit::nvrtc_or_skip!();
        for d in DType::ALL {
            compile_scan(&add_scan(d, ScanKind::Inclusive), Some(ScanVariant::ALL[0]));
        }
    }

    #[test]
    fn exclusive_scans_of_every_dtype_compile() {
        rucuda_testkit::nvrtc_or_skip!();
        for d in DType::ALL {
            compile_scan(&add_scan(d, ScanKind::Exclusive), Some(ScanVariant::ALL[1]));
        }
    }

    #[test]
    fn custom_operators_compile() {
        rucuda_testkit::nvrtc_or_skip!();
        let max = ScanSpec::builder(DType::F32)
            .scan("fmaxf(a, b)")
            .neutral("__int_as_float(0xff800000)")
            .name("running_max")
            .build()
            .unwrap();
        compile_scan(&max, Some(ScanVariant::ALL[2]));
        // Composition of affine maps x -> m x + c (mod 2^32), packed in 64 bits: an
        // associative operator that does not commute.
        let affine = ScanSpec::builder(DType::U64)
            .preamble(
                "__device__ unsigned long long compose(unsigned long long f, unsigned long long g)\n\
                 {\n  unsigned int fm = (unsigned int)(f >> 32), fc = (unsigned int)f;\n  \
                 unsigned int gm = (unsigned int)(g >> 32), gc = (unsigned int)g;\n  \
                 return ((unsigned long long)(fm * gm) << 32) | (unsigned int)(fc * gm + gc);\n}",
            )
            .scan("compose(a, b)")
            .neutral("1ull << 32")
            .exclusive()
            .name("affine")
            .build()
            .unwrap();
        compile_scan(&affine, Some(ScanVariant::ALL[3]));
    }

    #[test]
    fn scans_move_16_bytes_per_access_and_poll_status_words() {
        rucuda_testkit::nvrtc_or_skip!();
        for (d, words) in [
            (DType::I32, 1),
            (DType::F32, 1),
            (DType::F64, 2),
            (DType::I64, 2),
        ] {
            let spec = add_scan(d, ScanKind::Inclusive);
            let ptx = &compile_scan(&spec, None)[0];
            let entry = spec.render(ScanVariant::ALL[0]).unwrap().entry;
            let body = entry_body(ptx, &entry);
            let v = rucuda_array::scan::VECTORS_PER_THREAD;
            // Evict-first (streaming) 16-byte loads and stores, and L2 prefetches.
            assert_eq!(body.matches("ld.global.cs.v4").count(), v, "{d}:\n{body}");
            let wide_stores = body
                .lines()
                .filter(|l| {
                    let l = l.trim_start();
                    l.starts_with("st.global.cs.v4.") && !l.starts_with("st.global.cs.v4.u16")
                        || l.starts_with("st.global.cs.v2.f64")
                        || l.starts_with("st.global.cs.v2.u64")
                        || l.starts_with("st.global.cs.v2.b64")
                })
                .count();
            assert_eq!(wide_stores, v, "{d}: 16-byte stores:\n{body}");
            assert!(body.contains("prefetch.global.L2"), "{d}");
            assert_eq!(body.matches("atom.global.add.u32").count(), 1, "{d}");
            assert!(
                body.matches("ld.volatile.global").count() >= 1,
                "{d}: status words are polled with volatile loads:\n{body}"
            );
            // Aggregate and inclusive prefix: one store of each status word each.
            let stores = body.matches("st.volatile.global").count()
                + 2 * body.matches("st.volatile.global.v2").count();
            assert!(stores >= 2 * words, "{d}: {stores} status stores:\n{body}");
        }
    }
}
