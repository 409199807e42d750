//! Every built-in kernel template of the operations, cumath and fusion compiled for real
//! with NVRTC (no GPU needed), for each element type it serves: casts between all 225
//! pairs, `+` over all 225 pairs, every other binary operation per type and on mixed
//! pairs, scalars on either side, in place, every unary operation and cumath function
//! per type, where/if_positive, ldexp/frexp/modf, take/put per element and index type,
//! and fused expressions. Kernels are compiled in batches (each in its own namespace) to
//! PTX for sm_90; one batch also to a cubin for sm_75. Needs NVRTC
//! (`pip install nvidia-cuda-nvrtc==13.0.*`, which `.ci/run` does).

use rucuda_array::elementwise::{ElementwiseSpec, Variant};
use rucuda_array::fusion::Expr;
use rucuda_array::ops::{kernel_helpers, BinaryOp, IndexMode, MathFn, MathSpecial, OpKey, UnaryOp};
use rucuda_array::{DType, JitCompiler};
use rucuda_jit::{Arch, CompileOptions, OutputKind};

/// Renders the variants the engine can pick for each key (contiguous, vectorized where
/// the spec allows it, strided with every array strided) and compiles them in one
/// program: the helpers and the full prelude once, then each kernel's definition (its
/// source from `extern "C"` on). Every `SAMPLE`-th key is also compiled as its complete
/// source (prelude blocks and helpers as generated for it), in its own namespace.
/// Keys refused by type rules are skipped; returns how many compiled.
fn compile_batch(keys: &[OpKey], arch: Arch, output: OutputKind) -> usize {
    let specs: Vec<ElementwiseSpec> = keys.iter().filter_map(|k| k.spec().ok()).collect();
    compile_specs(&specs, arch, output)
}

fn compile_specs(specs: &[ElementwiseSpec], arch: Arch, output: OutputKind) -> usize {
    const SAMPLE: usize = 23;
    let mut src = kernel_helpers();
    let mut seen = std::collections::HashSet::new();
    let mut compiled = 0;
    for (k, spec) in specs.iter().enumerate() {
        compiled += 1;
        let arrays = spec.args().iter().filter(|a| a.is_vector()).count();
        // The strided variant shares the operation text with the others: compile it
        // for every fourth key (the skeleton itself is tested by the elementwise tests).
        let mut variants = vec![Variant::Contiguous];
        if k % 4 == 0 {
            variants.push(Variant::Strided {
                ndim: 2,
                strided: vec![true; arrays],
            });
        }
        if spec.vectorizable() {
            variants.push(Variant::Vectorized);
        }
        for v in variants {
            // Gather/scatter arrays cannot be strided: the engine never asks for that.
            let Ok(r) = spec.render(&v) else { continue };
            if !seen.insert(r.entry.clone()) {
                continue;
            }
            let body = r
                .source
                .find("extern \"C\"")
                .map_or("", |at| &r.source[at..]);
            assert!(!body.is_empty(), "{}", r.source);
            if k % SAMPLE == 0 {
                src.push_str(&format!(
                    "namespace full_{} {{\n{}\n}}\n",
                    r.entry,
                    r.source.replacen(
                        &format!("void {}(", r.entry),
                        &format!("void {}_full(", r.entry),
                        1,
                    )
                ));
            }
            src.push_str(body);
            src.push('\n');
        }
    }
    let c = JitCompiler::with_options(
        CompileOptions::new()
            .no_extern_c(true)
            .cache_dir(None)
            .output(output),
    );
    if let Err(e) = c.compile_for(&src, arch) {
        panic!("batch of {} kernels failed: {e}", specs.len());
    }
    compiled
}

fn ptx(keys: &[OpKey]) -> usize {
    compile_batch(keys, Arch::SM_90, OutputKind::Ptx)
}

const ALL: [DType; 15] = DType::ALL;

/// Representative pairs across kinds (same type and mixed).
const PAIRS: &[(DType, DType)] = &[
    (DType::Bool, DType::Bool),
    (DType::I8, DType::U8),
    (DType::I16, DType::I16),
    (DType::I32, DType::U32),
    (DType::I64, DType::I64),
    (DType::U64, DType::U64),
    (DType::U16, DType::F16),
    (DType::BF16, DType::I8),
    (DType::F16, DType::BF16),
    (DType::F32, DType::I64),
    (DType::F64, DType::F32),
    (DType::C64, DType::F32),
    (DType::C128, DType::C64),
];

fn binary(op: BinaryOp, a: DType, b: DType, sa: bool, sb: bool, in_place: bool) -> OpKey {
    let out = if in_place {
        a
    } else {
        // The natural result type is what the kernel stores unless told otherwise.
        match op {
            BinaryOp::Div if a.promote(b).is_integer() || a.promote(b) == DType::Bool => DType::F64,
            BinaryOp::Equal
            | BinaryOp::NotEqual
            | BinaryOp::Less
            | BinaryOp::LessEqual
            | BinaryOp::Greater
            | BinaryOp::GreaterEqual
            | BinaryOp::LogicalAnd
            | BinaryOp::LogicalOr
            | BinaryOp::LogicalXor => DType::Bool,
            _ => a.promote(b),
        }
    };
    OpKey::Binary {
        op,
        a,
        b,
        a_scalar: sa,
        b_scalar: sb,
        out,
        in_place,
    }
}

const BINARY_OPS: [BinaryOp; 22] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::FloorDiv,
    BinaryOp::Remainder,
    BinaryOp::Pow,
    BinaryOp::Maximum,
    BinaryOp::Minimum,
    BinaryOp::Equal,
    BinaryOp::NotEqual,
    BinaryOp::Less,
    BinaryOp::LessEqual,
    BinaryOp::Greater,
    BinaryOp::GreaterEqual,
    BinaryOp::LogicalAnd,
    BinaryOp::LogicalOr,
    BinaryOp::LogicalXor,
    BinaryOp::BitAnd,
    BinaryOp::BitOr,
    BinaryOp::BitXor,
    BinaryOp::Fmod,
];

#[test]
fn casts_and_copies_between_every_pair_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    let mut keys = Vec::new();
    for from in ALL {
        for to in ALL {
            keys.push(OpKey::Cast { from, to });
        }
    }
    assert_eq!(ptx(&keys), 225);
}

#[test]
fn fill_for_every_type_and_math_specials_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    let mut keys: Vec<OpKey> = ALL.iter().map(|&d| OpKey::Fill { dtype: d }).collect();
    for d in [DType::F16, DType::BF16, DType::F32, DType::F64] {
        for f in [
            MathSpecial::Ldexp,
            MathSpecial::LdexpScalar,
            MathSpecial::Frexp,
            MathSpecial::Modf,
        ] {
            keys.push(OpKey::MathSpecial { f, dtype: d });
        }
    }
    assert_eq!(ptx(&keys), 15 + 16);
    // The same kernels for an older architecture, to a cubin.
    compile_batch(&keys, Arch::SM_75, OutputKind::Cubin);
}

#[test]
fn add_over_all_225_pairs_compiles() {
    rucuda_testkit::nvrtc_or_skip!();
    let mut keys = Vec::new();
    for a in ALL {
        for b in ALL {
            keys.push(binary(BinaryOp::Add, a, b, false, false, false));
        }
    }
    assert_eq!(ptx(&keys), 225);
}

#[test]
fn every_binary_op_per_type_compiles() {
    rucuda_testkit::nvrtc_or_skip!();
    let mut keys = Vec::new();
    for op in BINARY_OPS {
        for d in ALL {
            keys.push(binary(op, d, d, false, false, false));
        }
    }
    let n = ptx(&keys);
    // Refused by NumPy's rules: bool subtract/floor_divide/remainder/power, complex
    // floor_divide/remainder, bitwise on floats, fmod on non-floats.
    assert!(n > 250, "{n} compiled");
}

#[test]
fn binary_ops_on_mixed_pairs_scalars_and_in_place_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    let mut keys = Vec::new();
    for op in BINARY_OPS {
        for &(a, b) in PAIRS {
            keys.push(binary(op, a, b, false, false, false));
            keys.push(binary(op, a, b, false, true, false));
            keys.push(binary(op, a, b, true, false, false));
            keys.push(binary(op, a, b, false, false, true));
            keys.push(binary(op, a, b, false, true, true));
        }
    }
    let n = ptx(&keys);
    assert!(n > 700, "{n} compiled");
}

#[test]
fn every_unary_op_and_cumath_function_per_type_compiles() {
    rucuda_testkit::nvrtc_or_skip!();
    let mut ops = vec![
        UnaryOp::Neg,
        UnaryOp::Abs,
        UnaryOp::LogicalNot,
        UnaryOp::BitNot,
        UnaryOp::Conj,
        UnaryOp::Real,
        UnaryOp::Imag,
    ];
    ops.extend(MathFn::ALL.iter().map(|&f| UnaryOp::Math(f)));
    let mut keys = Vec::new();
    for op in ops {
        for a in ALL {
            let out = match op {
                UnaryOp::Abs | UnaryOp::Real | UnaryOp::Imag => a.real_type(),
                UnaryOp::LogicalNot => DType::Bool,
                _ => a,
            };
            for in_place in [false, true] {
                if in_place && out != a {
                    continue;
                }
                keys.push(OpKey::Unary {
                    op,
                    a,
                    out,
                    in_place,
                });
            }
        }
    }
    let n = ptx(&keys);
    assert!(n > 200, "{n} compiled");
}

#[test]
fn where_and_if_positive_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    let mut keys = Vec::new();
    for cond in [DType::Bool, DType::I32, DType::F16, DType::F64, DType::C64] {
        for &(a, b) in PAIRS {
            for (sa, sb) in [(false, false), (false, true), (true, true)] {
                for positive in [false, true] {
                    keys.push(OpKey::Where {
                        cond,
                        a,
                        b,
                        a_scalar: sa,
                        b_scalar: sb,
                        out: a.promote(b),
                        positive,
                    });
                }
            }
        }
    }
    let n = ptx(&keys);
    assert!(n > 300, "{n} compiled");
}

#[test]
fn take_and_put_per_element_and_index_type_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    let mut keys = Vec::new();
    for dtype in ALL {
        for index in [DType::I32, DType::I64, DType::U8, DType::U64] {
            for mode in [IndexMode::Clip, IndexMode::Wrap] {
                keys.push(OpKey::Take {
                    dtype,
                    index,
                    mode,
                    arrays: 1,
                });
                keys.push(OpKey::Put {
                    dtype,
                    index,
                    mode,
                    arrays: 1,
                });
            }
        }
        keys.push(OpKey::Take {
            dtype,
            index: DType::I16,
            mode: IndexMode::Wrap,
            arrays: 8,
        });
        keys.push(OpKey::Put {
            dtype,
            index: DType::U32,
            mode: IndexMode::Clip,
            arrays: 3,
        });
    }
    assert_eq!(ptx(&keys), 15 * 18);
    // Scatters store through the relaxed gpu-scope helper, never with a plain `=` (indices
    // may repeat; `indexing_nvrtc` checks the PTX stores themselves).
    for key in keys.iter().filter(|k| matches!(k, OpKey::Put { .. })) {
        let src = key
            .spec()
            .unwrap()
            .render(&Variant::Contiguous)
            .unwrap()
            .source;
        assert!(
            src.contains("rucuda_scatter_store(&dst0[rucuda_j], v0[i])"),
            "{key:?}"
        );
        assert!(!src.contains("dst0[rucuda_j] ="), "{key:?}");
    }
    assert!(OpKey::Take {
        dtype: DType::F32,
        index: DType::F32,
        mode: IndexMode::Clip,
        arrays: 1
    }
    .spec()
    .is_err());
}

#[test]
fn fused_expressions_over_every_type_compile() {
    rucuda_testkit::nvrtc_or_skip!();
    let mut specs = Vec::new();
    for d in ALL {
        let x = || Expr::symbol(d);
        let exprs = vec![
            2.0 * x() + x(),
            x() * x() + 3i32,
            x().maximum(x() * 2.0).minimum(1u8),
            Expr::where_(x().greater(0), x(), x() - 1),
            x().cast::<f64>() / 3.0,
            x().abs(),
            x().logical_and(x().not_equal(1.5)),
            (x() + 1).pow(2),
            -x(),
            !x(),
            x().floor_div(x()),
            x().sqrt().exp() + x().sin(),
            Expr::if_positive(x().real(), x().conj(), x().imag()),
        ];
        for e in exprs {
            let out = e.dtype();
            // Type-refused expressions (e.g. `-bool`, `!float`) are errors at spec time.
            if let Ok(s) = e.spec(out) {
                specs.push(s);
            }
        }
    }
    let n = compile_specs(&specs, Arch::SM_90, OutputKind::Ptx);
    assert!(n > 120, "{n} compiled");
    // Scalars are arguments: two expressions differing only in a scalar's value have
    // the same kernel.
    let a = (Expr::symbol(DType::F32) * 2.0).spec(DType::F32).unwrap();
    let b = (Expr::symbol(DType::F32) * 7.5).spec(DType::F32).unwrap();
    assert_eq!(
        a.render(&Variant::Contiguous).unwrap().source,
        b.render(&Variant::Contiguous).unwrap().source
    );
}
