//! Unit tests of the reduction source text: entry names, parameter layouts, the
//! vectorized plan, the rewrite of `x[i]`, and refusals.

use super::render::{tile_plan, Variant};
use super::{ReductionSpec, ReductionType};
use crate::codegen::{ArgSpec, CodegenError};
use crate::dtype::DType;
use crate::error::ArrayError;

fn sum(d: DType) -> ReductionSpec {
    ReductionSpec::builder("s")
        .output_dtype(d)
        .neutral("0")
        .reduce("a + b")
        .arg(ArgSpec::const_vector("x", d))
        .build()
        .unwrap()
}

#[test]
fn vector_plans_follow_the_element_sizes() {
    let plan = |s: &ReductionSpec| {
        let p = tile_plan(s).unwrap();
        (p.k, p.u)
    };
    assert_eq!(plan(&sum(DType::F32)), (4, 8));
    assert_eq!(plan(&sum(DType::F64)), (2, 8));
    assert_eq!(plan(&sum(DType::U8)), (16, 8));
    assert_eq!(plan(&sum(DType::C128)), (1, 8));
    // A byte array beside a 16-byte one: groups of 4, one 64-byte tile for the wide one.
    let mixed = ReductionSpec::builder("m")
        .output::<f64>()
        .neutral("0")
        .reduce("a + b")
        .map("x[i] + y[i].re")
        .input::<u8>("x")
        .arg(ArgSpec::const_vector("y", DType::C128))
        .build()
        .unwrap();
    assert_eq!(plan(&mixed), (4, 1));
    // An array used only through another (`x[subset[i]]`) is not tiled.
    let subset = ReductionSpec::builder("ss")
        .output::<f32>()
        .neutral("0")
        .reduce("a + b")
        .map("x[subset[i]]")
        .input::<i64>("subset")
        .input::<f32>("x")
        .build()
        .unwrap();
    let p = tile_plan(&subset).unwrap();
    assert_eq!(
        (p.k, p.u, p.tiled.clone()),
        (2, 8, vec!["subset".to_string()])
    );
    let gather = ReductionSpec::builder("g")
        .output::<f32>()
        .neutral("0")
        .reduce("a + b")
        .map("x[n - 1 - i]")
        .input::<f32>("x")
        .build()
        .unwrap();
    assert!(tile_plan(&gather).is_none());
    assert!(gather.render(&Variant::Vectorized).is_err());
}

#[test]
fn entries_and_parameters() {
    let s = ReductionSpec::parse(
        DType::F32,
        "0",
        "a+b",
        "a*x[i]*y[i]",
        "float a, const float *x, const float *y",
        "wdot",
    )
    .unwrap();
    let k = s.render(&Variant::Contiguous).unwrap();
    assert_eq!(k.stage1, "wdot_r1c");
    assert_eq!(k.stage2, "wdot_r2");
    let names: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["a", "x", "y", "rucuda_partials", "rucuda_out", "n"]);
    assert_eq!(
        k.params.iter().map(|p| p.size).collect::<Vec<_>>(),
        [4, 8, 8, 8, 8, 8]
    );
    assert!(k
        .source
        .contains("extern \"C\" __global__ void __launch_bounds__(256) wdot_r1c("));
    assert!(k
        .source
        .contains("extern \"C\" __global__ void __launch_bounds__(256) wdot_r2("));
    assert!(k.source.contains("const float *__restrict__ x"));
    let k = s
        .render(&Variant::Strided {
            ndim: 2,
            strided: vec![false, true],
        })
        .unwrap();
    assert_eq!(k.stage1, "wdot_r1s2_01");
    let names: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        &names[6..],
        [
            "rucuda_shape_0",
            "rucuda_shape_1",
            "rucuda_stride_y_0",
            "rucuda_stride_y_1"
        ]
    );
    assert!(k.source.contains("a*x[i]*y[rucuda_off_y]"));
}

#[test]
fn vectorized_source_tiles_the_arrays() {
    let s = ReductionSpec::parse(
        DType::F32,
        "0",
        "a+b",
        "x[i]*y[i]",
        "const float *x, const float *y",
        "dot",
    )
    .unwrap();
    let k = s.render(&Variant::Vectorized).unwrap();
    assert_eq!(k.stage1, "dot_r1v");
    assert!(k
        .source
        .contains("rucuda_tile_x[rucuda_s].e[rucuda_k]*rucuda_tile_y[rucuda_s].e[rucuda_k]"));
    assert!(k
        .source
        .contains("union { uint4 v[1]; float e[4]; } rucuda_tile_x[4];"));
    assert!(k
        .source
        .contains("union { uint4 v[1]; float e[4]; } rucuda_tile_y[1];"));
    // The scalar tail keeps the user's expression.
    assert!(k.source.contains("(rucuda_acc_t)(x[i]*y[i])"));
    // No volatile warp-synchronous code (the grid-dependency wait's `asm volatile` aside).
    assert!(
        !k.source
            .lines()
            .any(|l| l.contains("volatile") && !l.contains("asm volatile(\"griddepcontrol.")),
        "no volatile warp-synchronous code"
    );
    assert!(k.source.contains("__shfl_down_sync"));
}

#[test]
fn struct_and_accumulator_types_are_typedefs() {
    let s = ReductionSpec::builder("mm")
        .preamble("struct mm_t { float lo, hi; };")
        .output_type(ReductionType::structure("mm_t", 8, 4))
        .neutral("mm_t()")
        .reduce("f(a, b)")
        .map("g(x[i])")
        .input::<f32>("x")
        .build()
        .unwrap();
    let k = s.render(&Variant::Contiguous).unwrap();
    assert!(k
        .source
        .contains("typedef mm_t rucuda_acc_t;\ntypedef mm_t rucuda_out_t;"));
    assert!(k.source.find("struct mm_t").unwrap() < k.source.find("typedef mm_t").unwrap());
    let h = ReductionSpec::builder("h")
        .output_dtype(DType::F16)
        .accumulator(ReductionType::DType(DType::F32))
        .neutral("0")
        .reduce("a + b")
        .map("(float)x[i]")
        .input::<half::f16>("x")
        .build()
        .unwrap();
    let k = h.render(&Variant::Vectorized).unwrap();
    assert!(k
        .source
        .contains("typedef float rucuda_acc_t;\ntypedef rucuda_half rucuda_out_t;"));
    assert!(k.source.contains("struct rucuda_half"));
    assert_eq!(k.group_elements, 8);
}

#[test]
fn strided_variants_are_checked() {
    let s = sum(DType::I32);
    let too_deep = s.render(&Variant::Strided {
        ndim: super::MAX_STRIDED_DIMS + 1,
        strided: vec![true],
    });
    assert!(matches!(
        too_deep,
        Err(ArrayError::Codegen(CodegenError::TooManyDimensions { .. }))
    ));
    let wrong_count = s.render(&Variant::Strided {
        ndim: 1,
        strided: vec![true, false],
    });
    assert!(wrong_count.is_err());
    let gather = ReductionSpec::builder("g")
        .output::<f32>()
        .neutral("0")
        .reduce("a + b")
        .map("x[subset[i]]")
        .input::<i32>("subset")
        .input::<f32>("x")
        .build()
        .unwrap();
    let refused = gather.render(&Variant::Strided {
        ndim: 1,
        strided: vec![false, true],
    });
    assert!(matches!(
        refused,
        Err(ArrayError::Codegen(CodegenError::StridedUnsupported { .. }))
    ));
    assert!(gather
        .render(&Variant::Strided {
            ndim: 1,
            strided: vec![true, false],
        })
        .is_ok());
}

/// Both stages launch as programmatic dependent launches, which is sound only because
/// each begins with the grid-dependency wait.
#[test]
fn every_variant_waits_for_its_predecessor_first() {
    let s = sum(DType::F32);
    let variants = [
        Variant::Contiguous,
        Variant::Vectorized,
        Variant::Strided {
            ndim: 2,
            strided: vec![true],
        },
    ];
    for variant in &variants {
        let k = s.render(variant).unwrap();
        assert_eq!(
            crate::codegen::grid_dependency::every_kernel_waits_first(&k.source),
            Ok(2),
            "{variant:?}"
        );
    }
}
