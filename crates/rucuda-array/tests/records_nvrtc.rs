//! Kernels over struct and vector elements compiled for real with NVRTC (no GPU needed):
//! fill, copy and take of CUDA's vector types and of a struct of ours (with nested
//! vector, half, complex and array fields) in every variant the engine can pick, an
//! ElementwiseKernel reading and writing fields, and ReductionKernels folding `float2`
//! values (with `make_float2`) and a struct (with an `operator+` of the preamble).
//! Needs NVRTC (`.ci/run` installs NVIDIA's wheel).

use rucuda_array::codegen::parse_arguments;
use rucuda_array::elementwise::{ElementwiseSpec, Variant};
use rucuda_array::ops::{IndexMode, OpKey};
use rucuda_array::reduction::{ReductionSpec, Variant as ReductionVariant};
use rucuda_array::vec::{Char3, Double2, Double4, Float2, Float3, Float4, Int3, Long4, Short2};
use rucuda_array::{bf16, f16, Complex, DType, Element, JitCompiler};
use rucuda_jit::{Arch, CompileOptions, OutputKind};

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Particle {
    pos: Float3,
    mass: f32,
    vel: Double2,
    charge: f16,
    flags: [u8; 6],
    z: Complex<f32>,
    w: bf16,
    pad: [u8; 14],
}
rucuda_array::struct_element!(Particle as "rec_particle" {
    pos: Float3, mass: f32, vel: Double2, charge: f16, flags: [u8; 6],
    z: Complex<f32>, w: bf16, pad: [u8; 14]
});

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Outer {
    inner: Particle,
    id: i64,
    spare: [i64; 1],
}
rucuda_array::struct_element!(Outer as "rec_outer" { inner: Particle, id: i64, spare: [i64; 1] });

fn compiler(output: OutputKind) -> JitCompiler {
    JitCompiler::with_options(
        CompileOptions::new()
            .no_extern_c(true)
            .cache_dir(None)
            .output(output),
    )
}

fn compile(source: &str, entries: &[&str]) {
    let ptx = compiler(OutputKind::Ptx)
        .compile_for(source, Arch::SM_90)
        .unwrap_or_else(|e| panic!("{} failed to compile: {e}\n{source}", entries[0]));
    let text = String::from_utf8_lossy(&ptx.image).into_owned();
    for entry in entries {
        assert!(text.contains(&format!(".entry {entry}(")), "{entry}");
    }
    compiler(OutputKind::Cubin)
        .compile_for(source, Arch::SM_75)
        .unwrap_or_else(|e| panic!("{} (sm_75) failed: {e}", entries[0]));
}

fn elementwise_variants(spec: &ElementwiseSpec) -> Vec<Variant> {
    let arrays = spec.args().iter().filter(|a| a.is_vector()).count();
    let mut v = vec![Variant::Contiguous, Variant::Ranged];
    if spec.vectorizable() {
        v.push(Variant::Vectorized);
    }
    v.push(Variant::Strided {
        ndim: 3,
        strided: vec![true; arrays],
    });
    v
}

fn compile_elementwise(spec: &ElementwiseSpec) -> usize {
    let mut n = 0;
    for variant in elementwise_variants(spec) {
        // Gathers and scatters index their sources other than as `x[i]`: no strided form.
        let Ok(k) = spec.render(&variant) else {
            assert!(matches!(variant, Variant::Strided { .. }), "{variant:?}");
            continue;
        };
        compile(&k.source, &[&k.entry]);
        n += 1;
    }
    n
}

fn record_types() -> Vec<DType> {
    vec![
        Float3::DTYPE,
        Float4::DTYPE,
        Double2::DTYPE,
        Double4::DTYPE,
        Char3::DTYPE,
        Short2::DTYPE,
        Int3::DTYPE,
        Long4::DTYPE,
        Particle::DTYPE,
        Outer::DTYPE,
    ]
}

#[test]
fn struct_definitions_follow_their_fields() {
    let DType::Record(r) = Outer::DTYPE else {
        panic!()
    };
    assert_eq!((r.size, r.align), (80, 16));
    let src = rucuda_array::codegen::prelude_for([Outer::DTYPE]);
    let p = src.find("struct alignas(16) rec_particle").expect(&src);
    let o = src.find("struct alignas(16) rec_outer").expect(&src);
    assert!(p < o, "{src}");
    assert!(src.contains("struct rucuda_half") && src.contains("rucuda_complex64"));
    assert!(
        src.contains("  rec_particle inner;\n  long long id;\n"),
        "{src}"
    );
    assert!(src.contains("  unsigned char flags[6];\n"), "{src}");
    // CUDA defines its vector types: nothing to declare.
    assert!(rucuda_array::codegen::prelude_for([Float3::DTYPE]).is_empty());
}

#[test]
fn fill_copy_and_take_of_struct_and_vector_elements_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    let mut n = 0;
    for dtype in record_types() {
        let mut keys = vec![
            OpKey::Fill { dtype },
            OpKey::Cast {
                from: dtype,
                to: dtype,
            },
        ];
        for index in [DType::I32, DType::I64] {
            keys.push(OpKey::Take {
                dtype,
                index,
                mode: IndexMode::Wrap,
                arrays: 2,
            });
            keys.push(OpKey::Put {
                dtype,
                index,
                mode: IndexMode::Clip,
                arrays: 1,
            });
        }
        for key in keys {
            let spec = key.spec().unwrap_or_else(|e| panic!("{key:?}: {e}"));
            n += compile_elementwise(&spec);
        }
        // Casts to other types and arithmetic are refused, not generated.
        assert!(OpKey::Cast {
            from: dtype,
            to: DType::F32
        }
        .spec()
        .is_err());
    }
    assert!(n >= 10 * 6 * 2, "{n}");
}

#[test]
fn user_elementwise_kernels_with_field_access_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    let spec = ElementwiseSpec::builder("move_particles")
        .scalar::<Float3>("dt_force")
        .scalar::<Outer>("template_value")
        .input::<Particle>("p")
        .output::<Float3>("pos")
        .output::<Outer>("o")
        .operation(
            "pos[i] = make_float3(p[i].pos.x + dt_force.x * p[i].mass, p[i].pos.y + dt_force.y, \
             p[i].pos.z + (float)p[i].charge); o[i] = template_value; o[i].inner.vel.y = i; \
             o[i].inner.flags[5] = p[i].flags[0]",
        )
        .build()
        .unwrap();
    assert!(compile_elementwise(&spec) >= 3);
    // The string form, with vector names known to the parser.
    let spec = ElementwiseSpec::parse(
        "const double2 *a, double2 s, double *out",
        "out[i] = a[i].x * s.x + a[i].y * s.y",
        "dot2",
    )
    .unwrap();
    assert!(spec.vectorizable());
    assert!(compile_elementwise(&spec) >= 4);
    let _ = parse_arguments("float3 *x").unwrap();
}

#[test]
fn reductions_over_vectors_and_structs_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    let float2_sum = ReductionSpec::builder("sum_float2")
        .output_dtype(Float2::DTYPE)
        .neutral("make_float2(0.0f, 0.0f)")
        .reduce("make_float2(a.x + b.x, a.y + b.y)")
        .map("x[i]")
        .arg(rucuda_array::codegen::ArgSpec::const_vector(
            "x",
            Float2::DTYPE,
        ))
        .build()
        .unwrap();
    let float3_sum = ReductionSpec::builder("sum_float3")
        .output_dtype(Float3::DTYPE)
        .neutral("make_float3(0.0f, 0.0f, 0.0f)")
        .reduce("a + b")
        .map("x[i]")
        .preamble(
            "__device__ __forceinline__ float3 operator+(float3 a, float3 b) \
             { return make_float3(a.x + b.x, a.y + b.y, a.z + b.z); }",
        )
        .arg(rucuda_array::codegen::ArgSpec::const_vector(
            "x",
            Float3::DTYPE,
        ))
        .build()
        .unwrap();
    let particle_sum = ReductionSpec::builder("sum_particles")
        .output_dtype(Particle::DTYPE)
        .neutral("rec_particle()")
        .reduce("a + b")
        .map("p[i]")
        .preamble(
            "__device__ __forceinline__ rec_particle operator+(rec_particle a, rec_particle b) \
             { a.pos.x += b.pos.x; a.pos.y += b.pos.y; a.pos.z += b.pos.z; a.mass += b.mass; \
             a.vel.x += b.vel.x; a.vel.y += b.vel.y; return a; }",
        )
        .arg(rucuda_array::codegen::ArgSpec::const_vector(
            "p",
            Particle::DTYPE,
        ))
        .build()
        .unwrap();
    for spec in [float2_sum, float3_sum, particle_sum] {
        let arrays = spec.args().iter().filter(|a| a.is_vector()).count();
        let mut variants = vec![
            ReductionVariant::Contiguous,
            ReductionVariant::Strided {
                ndim: 2,
                strided: vec![true; arrays],
            },
        ];
        if spec.render(&ReductionVariant::Vectorized).is_ok() {
            variants.push(ReductionVariant::Vectorized);
        }
        for v in variants {
            let k = spec.render(&v).unwrap();
            compile(&k.source, &[&k.stage1, &k.stage2]);
        }
    }
}

#[test]
fn struct_reductions_with_aggregate_initialisers_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Stats {
        count: i64,
        sum: f64,
        max_id: u32,
        min_id: u32,
    }
    rucuda_array::struct_element!(Stats as "nv_stats" { count: i64, sum: f64, max_id: u32, min_id: u32 });
    let spec = ReductionSpec::builder("particle_stats")
        .output_dtype(Stats::DTYPE)
        .neutral("nv_stats{0, 0.0, 0u, 0xffffffffu}")
        .reduce("a + b")
        .map("nv_stats{1, (double)p[i].mass * p[i].vel.x, (unsigned int)p[i].flags[0], 0u}")
        .preamble(
            "__device__ __forceinline__ nv_stats operator+(nv_stats a, nv_stats b) {\n\
             \x20 return nv_stats{a.count + b.count, a.sum + b.sum,\n\
             \x20   a.max_id > b.max_id ? a.max_id : b.max_id,\n\
             \x20   a.min_id < b.min_id ? a.min_id : b.min_id};\n}",
        )
        .input::<Particle>("p")
        .build()
        .unwrap();
    let mut variants = vec![
        ReductionVariant::Contiguous,
        ReductionVariant::Strided {
            ndim: 1,
            strided: vec![true],
        },
    ];
    if spec.render(&ReductionVariant::Vectorized).is_ok() {
        variants.push(ReductionVariant::Vectorized);
    }
    assert_eq!(variants.len(), 3, "Particle is 64 bytes: tiled");
    for v in variants {
        let k = spec.render(&v).unwrap();
        compile(&k.source, &[&k.stage1, &k.stage2]);
    }
}
