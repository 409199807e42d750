//! The mask, nonzero, axis-indexing, multi_take_put and mul_add kernels
//! ([`IndexingKey`]) compiled for real with NVRTC (no GPU needed), for every element type
//! and every index type and mode, in the variants the engine can pick; and the
//! neutral-free inclusive scan. Needs NVRTC (`pip install nvidia-cuda-nvrtc==13.0.*`,
//! which `.ci/run` does).

use rucuda_array::elementwise::{ElementwiseSpec, Variant};
use rucuda_array::ops::{IndexingKey, TakeMode};
use rucuda_array::scan::{ScanSpec, ScanVariant};
use rucuda_array::{DType, JitCompiler};
use rucuda_jit::{Arch, CompileOptions, OutputKind};

const INDEX_TYPES: [DType; 8] = [
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
];
const MODES: [TakeMode; 3] = [TakeMode::Raise, TakeMode::Wrap, TakeMode::Clip];

/// Compiles every variant of every spec, each complete source in its own namespace.
fn compile(specs: &[ElementwiseSpec]) {
    let mut src = String::new();
    let mut seen = std::collections::HashSet::new();
    for spec in specs {
        // Arrays read only as x[i] may be strided; gathered and scattered ones never are.
        let mask: Vec<bool> = spec
            .args()
            .iter()
            .filter(|a| a.is_vector())
            .map(|a| {
                rucuda_array::codegen::OperationAnalysis::new(spec.operation(), &[a.name()])
                    .usage(a.name())
                    .is_some_and(|u| u.only_at_i())
            })
            .collect();
        let mut variants = vec![
            Variant::Contiguous,
            Variant::Strided {
                ndim: 3,
                strided: mask,
            },
        ];
        if spec.vectorizable() {
            variants.push(Variant::Vectorized);
        }
        for v in variants {
            let r = spec
                .render(&v)
                .unwrap_or_else(|e| panic!("{}: {e}", spec.name()));
            if !seen.insert(r.entry.clone()) {
                continue;
            }
            src.push_str(&in_namespace(&r.entry, &r.source));
        }
    }
    let c = JitCompiler::with_options(
        CompileOptions::new()
            .no_extern_c(true)
            .cache_dir(None)
            .output(OutputKind::Ptx),
    );
    if let Err(e) = c.compile_for(&src, Arch::SM_90) {
        panic!("batch of {} kernels failed: {e}", specs.len());
    }
}

/// `source` in a namespace of its own, its `extern "C"` entry renamed (C names ignore
/// namespaces).
fn in_namespace(entry: &str, source: &str) -> String {
    format!(
        "namespace n_{entry} {{\n{}\n}}\n",
        source.replacen(&format!("void {entry}("), &format!("void {entry}_n("), 1)
    )
}

fn specs(keys: impl IntoIterator<Item = IndexingKey>) -> Vec<ElementwiseSpec> {
    keys.into_iter().map(|k| k.spec().unwrap()).collect()
}

#[test]
fn mask_and_nonzero_kernels_compile_for_every_type() {
    let mut keys = Vec::new();
    for d in DType::ALL {
        keys.push(IndexingKey::Flags { dtype: d });
        keys.push(IndexingKey::Compact {
            dtype: d,
            mask: DType::Bool,
        });
        keys.push(IndexingKey::NonzeroCoords { dtype: d, ndim: 3 });
    }
    for m in DType::ALL {
        keys.push(IndexingKey::Compact {
            dtype: DType::F32,
            mask: m,
        });
    }
    keys.push(IndexingKey::NonzeroCoords {
        dtype: DType::U8,
        ndim: 1,
    });
    compile(&specs(keys));
}

#[test]
fn axis_kernels_compile_for_every_type_index_and_mode() {
    let mut keys = Vec::new();
    for mode in MODES {
        for index in INDEX_TYPES {
            keys.push(IndexingKey::TakeAxis {
                dtype: DType::F32,
                index,
                mode,
            });
            keys.push(IndexingKey::PutAxis {
                dtype: DType::F64,
                index,
                mode,
            });
            keys.push(IndexingKey::TakePut {
                dtype: DType::I16,
                index,
                mode,
                arrays: 3,
            });
        }
        for d in DType::ALL {
            keys.push(IndexingKey::TakeAxis {
                dtype: d,
                index: DType::I64,
                mode,
            });
            keys.push(IndexingKey::PutAxis {
                dtype: d,
                index: DType::I32,
                mode,
            });
        }
    }
    compile(&specs(keys));
}

#[test]
fn mul_add_compiles_for_every_numeric_type() {
    let keys = DType::ALL
        .into_iter()
        .filter(|&d| d != DType::Bool)
        .map(|dtype| IndexingKey::MulAdd { dtype });
    compile(&specs(keys));
}

#[test]
fn neutral_free_inclusive_scans_compile() {
    for (d, expr) in [
        (DType::F32, "fmaxf(a, b)"),
        (DType::F64, "a > b ? a : b"),
        (DType::I8, "a + b"),
        (DType::C64, "a + b"),
        (DType::F16, "a + b"),
        (DType::U64, "a ^ b"),
    ] {
        let free = ScanSpec::builder(d).scan(expr).name("nn").build().unwrap();
        // The scans with a neutral element go through the same (flag-folding) text.
        let with = ScanSpec::builder(d).scan("a + b").neutral("0").name("nw");
        for (s, v) in ScanVariant::ALL
            .into_iter()
            .map(|v| (free.clone(), v))
            .chain([
                (with.clone().build().unwrap(), ScanVariant::ALL[0]),
                (
                    with.clone().exclusive().build().unwrap(),
                    ScanVariant::ALL[3],
                ),
            ])
        {
            let r = s.render(v).unwrap();
            let c = JitCompiler::with_options(
                CompileOptions::new()
                    .no_extern_c(true)
                    .cache_dir(None)
                    .output(OutputKind::Ptx),
            );
            if let Err(e) = c.compile_for(&r.source, Arch::SM_90) {
                panic!("neutral-free scan of {d} ({v:?}) failed: {e}");
            }
        }
    }
}
