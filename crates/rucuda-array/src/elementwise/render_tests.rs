//! Checks of the generated source text and parameter layouts of every variant.

use super::*;
use crate::codegen::ArgSpec;
use crate::dtype::DType;

fn saxpy() -> ElementwiseSpec {
    ElementwiseSpec::parse(
        "float a, const float *x, const float *y, float *z",
        "z[i] = a * x[i] + y[i]",
        "saxpy",
    )
    .unwrap()
}

fn sizes(k: &RenderedKernel) -> Vec<(String, usize)> {
    k.params.iter().map(|p| (p.name.clone(), p.size)).collect()
}

#[test]
fn contiguous_skeleton() {
    let k = saxpy().render(&Variant::Contiguous).unwrap();
    assert_eq!(k.entry, "saxpy");
    assert!(k.source.contains(
        "extern \"C\" __global__ void saxpy(float a, const float *x, const float *y, float *z, long long n)"
    ));
    assert!(k
        .source
        .contains("const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;"));
    assert!(k
        .source
        .contains("const long long total_threads = (long long)gridDim.x * blockDim.x;"));
    assert!(k
        .source
        .contains("for (i = tid; i < n; i += total_threads)\n  {\n    z[i] = a * x[i] + y[i];"));
    assert!(
        !k.source.contains("rucuda_half"),
        "no prelude for float kernels"
    );
    assert_eq!(
        sizes(&k),
        vec![
            ("a".into(), 4),
            ("x".into(), 8),
            ("y".into(), 8),
            ("z".into(), 8),
            ("n".into(), 8)
        ]
    );
    assert_eq!(k.elements_per_thread, 1);
}

#[test]
fn snippets_go_in_their_slots() {
    let spec = ElementwiseSpec::builder("acc")
        .input::<f64>("x")
        .output::<f64>("y")
        .operation("s += x[i]; y[i] = s")
        .preamble("#define SQ(v) ((v)*(v))")
        .loop_prep("double s = 0")
        .after_loop("(void)s")
        .build()
        .unwrap();
    let src = spec.render(&Variant::Contiguous).unwrap().source;
    let pre = src.find("#define SQ").unwrap();
    let sig = src.find("__global__").unwrap();
    let prep = src.find("double s = 0").unwrap();
    let lp = src.find("for (i = tid").unwrap();
    let after = src.find("(void)s").unwrap();
    assert!(pre < sig && sig < prep && prep < lp && lp < after, "{src}");
}

#[test]
fn vectorized_tiles_and_tail() {
    let spec = saxpy();
    assert!(spec.vectorizable());
    let k = spec.render(&Variant::Vectorized).unwrap();
    assert_eq!(k.entry, "saxpy_vec");
    assert_eq!(k.elements_per_thread, 4);
    let s = &k.source;
    assert!(s.contains("const float *__restrict__ x"), "{s}");
    assert!(s.contains("float *__restrict__ z"), "{s}");
    assert!(
        s.contains("union { uint4 v[1]; float e[4]; } rucuda_tile_x;"),
        "{s}"
    );
    // x and y are loaded, z is only stored.
    assert!(s.contains(
        "rucuda_tile_x.v[rucuda_c] = reinterpret_cast<const uint4 *>(x + rucuda_base)[rucuda_c]"
    ));
    assert!(
        s.contains("rucuda_tile_y.v[rucuda_c] = reinterpret_cast<const uint4 *>(y + rucuda_base)")
    );
    assert!(
        !s.contains("rucuda_tile_z.v[rucuda_c] = reinterpret_cast"),
        "{s}"
    );
    assert!(s.contains(
        "reinterpret_cast<uint4 *>(z + rucuda_base)[rucuda_c] = rucuda_tile_z.v[rucuda_c]"
    ));
    assert!(s.contains(
        "rucuda_tile_z.e[rucuda_k] = a * rucuda_tile_x.e[rucuda_k] + rucuda_tile_y.e[rucuda_k];"
    ));
    assert!(s.contains("for (i = rucuda_tiles * 4 + tid; i < n; i += total_threads)\n  {\n    z[i] = a * x[i] + y[i];"));
    assert_eq!(
        sizes(&k),
        sizes(&spec.render(&Variant::Contiguous).unwrap())
    );
}

#[test]
fn vectorized_tile_width_follows_the_smallest_type() {
    let spec = ElementwiseSpec::parse(
        "const double *x, unsigned char *m",
        "m[i] = x[i] > 0",
        "pos",
    )
    .unwrap();
    let k = spec.render(&Variant::Vectorized).unwrap();
    assert_eq!(k.elements_per_thread, 16);
    assert!(k
        .source
        .contains("union { uint4 v[8]; double e[16]; } rucuda_tile_x;"));
    assert!(k
        .source
        .contains("union { uint4 v[1]; unsigned char e[16]; } rucuda_tile_m;"));
}

#[test]
fn conditional_writes_load_the_tile_first() {
    let spec = ElementwiseSpec::parse(
        "const float *x, float *z",
        "if (x[i] > 0) z[i] = x[i]",
        "relu_in_place",
    )
    .unwrap();
    let s = spec.render(&Variant::Vectorized).unwrap().source;
    assert!(
        s.contains("rucuda_tile_z.v[rucuda_c] = reinterpret_cast<const uint4 *>(z + rucuda_base)"),
        "{s}"
    );
}

#[test]
fn neighbour_access_is_not_vectorized_nor_strided() {
    let spec = ElementwiseSpec::parse(
        "const float *x, float *z",
        "z[i] = x[i] - x[i > 0 ? i - 1 : 0]",
        "diff",
    )
    .unwrap();
    assert!(!spec.vectorizable());
    assert!(spec.render(&Variant::Vectorized).is_err());
    let e = spec
        .render(&Variant::Strided {
            ndim: 2,
            strided: vec![true, false],
        })
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("argument `x` of kernel `diff` is not contiguous"),
        "{e}"
    );
    // z alone may be strided: it is only used as z[i].
    assert!(spec
        .render(&Variant::Strided {
            ndim: 2,
            strided: vec![false, true],
        })
        .is_ok());
}

#[test]
fn ranged_loops_both_ways() {
    let k = saxpy().render(&Variant::Ranged).unwrap();
    assert_eq!(k.entry, "saxpy_range");
    assert!(k
        .source
        .contains("for (i = start + step * tid; i > stop; i += step * total_threads)"));
    assert!(k
        .source
        .contains("for (i = start + step * tid; i < stop; i += step * total_threads)"));
    let names: Vec<String> = k.params.iter().map(|p| p.name.clone()).collect();
    assert_eq!(names, ["a", "x", "y", "z", "n", "start", "stop", "step"]);
}

#[test]
fn strided_offsets_and_parameters() {
    let spec = saxpy();
    let k = spec
        .render(&Variant::Strided {
            ndim: 3,
            strided: vec![true, false, true],
        })
        .unwrap();
    assert_eq!(k.entry, "saxpy_s3_101");
    let names: Vec<String> = k.params.iter().map(|p| p.name.clone()).collect();
    assert_eq!(
        names,
        [
            "a",
            "x",
            "y",
            "z",
            "n",
            "rucuda_shape_0",
            "rucuda_shape_1",
            "rucuda_shape_2",
            "rucuda_stride_x_0",
            "rucuda_stride_x_1",
            "rucuda_stride_x_2",
            "rucuda_stride_z_0",
            "rucuda_stride_z_1",
            "rucuda_stride_z_2"
        ]
    );
    let s = &k.source;
    assert!(s.contains("rucuda_c = rucuda_rest % rucuda_shape_2;"));
    assert!(s.contains("rucuda_off_x += rucuda_c * rucuda_stride_x_1;"));
    assert!(s.contains("rucuda_off_z += rucuda_rest * rucuda_stride_z_0;"));
    assert!(
        s.contains("z[rucuda_off_z] = a * x[rucuda_off_x] + y[i];"),
        "{s}"
    );
    assert!(spec
        .render(&Variant::Strided {
            ndim: MAX_STRIDED_DIMS + 1,
            strided: vec![true; 3]
        })
        .is_err());
    assert!(spec
        .render(&Variant::Strided {
            ndim: 2,
            strided: vec![true]
        })
        .is_err());
}

#[test]
fn special_types_bring_their_prelude() {
    let spec = ElementwiseSpec::builder("mix")
        .arg(ArgSpec::const_vector("h", DType::F16))
        .arg(ArgSpec::const_vector("b", DType::BF16))
        .arg(ArgSpec::vector("c", DType::C128))
        .operation("c[i] = rucuda_complex128((float)h[i] * (float)b[i], 0.0)")
        .build()
        .unwrap();
    let s = spec.render(&Variant::Contiguous).unwrap().source;
    assert!(s.contains("struct rucuda_half") && s.contains("struct rucuda_bfloat16"));
    assert!(s.contains("typedef rucuda_complex<double> rucuda_complex128;"));
    assert!(s.find("struct rucuda_half").unwrap() < s.find("__global__").unwrap());
    let k = spec.render(&Variant::Vectorized).unwrap();
    assert_eq!(k.elements_per_thread, 8);
    assert!(k
        .source
        .contains("union { uint4 v[8]; rucuda_complex128 e[8]; } rucuda_tile_c;"));
}

#[test]
fn spec_validation() {
    assert!(ElementwiseSpec::parse("float a", "a", "k").is_err()); // no array
    assert!(ElementwiseSpec::parse("float *x", "x[i] = 0", "2k").is_err());
    assert!(ElementwiseSpec::parse("float *x", "x[i] = 0", "rucuda_k").is_err());
    assert!(ElementwiseSpec::parse("float *x, int *x", "x[i] = 0", "k").is_err());
    assert!(ElementwiseSpec::parse("float *tid", "tid[i] = 0", "k").is_err());
    let e = ElementwiseSpec::parse("float *x, flaot y", "x[i] = y", "k").unwrap_err();
    assert!(e.to_string().contains("column 11"), "{e}");
}

#[test]
fn range_counts_match_python() {
    use super::kernel::range_count;
    assert_eq!(range_count(0, 10, 3), 4);
    assert_eq!(range_count(7, 0, -3), 3);
    assert_eq!(range_count(0, 0, 1), 0);
    assert_eq!(range_count(5, 0, 1), 0);
    assert_eq!(range_count(0, 5, -1), 0);
    assert_eq!(range_count(i64::MIN, i64::MAX, i64::MAX), 3);
}

/// The ops engine and `ElementwiseKernel` launch these kernels as programmatic dependent
/// launches, which is sound only because every variant's body begins with the
/// grid-dependency wait.
#[test]
fn every_variant_waits_for_its_predecessor_first() {
    let variants = [
        Variant::Contiguous,
        Variant::Vectorized,
        Variant::Ranged,
        Variant::Strided {
            ndim: 2,
            strided: vec![false, true, true],
        },
    ];
    for variant in &variants {
        let k = saxpy().render(variant).unwrap();
        assert_eq!(
            crate::codegen::grid_dependency::every_kernel_waits_first(&k.source),
            Ok(1),
            "{variant:?}"
        );
    }
}
