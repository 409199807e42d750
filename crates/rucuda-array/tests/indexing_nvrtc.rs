//! The mask, nonzero, axis-indexing, multi_take_put and mul_add kernels
//! ([`IndexingKey`]) compiled for real with NVRTC (no GPU needed), for every element type
//! and every index type and mode, in the variants the engine can pick; the
//! neutral-free inclusive scan; and the scatters' stores (`put`, `put_axis`,
//! `multi_take_put`), which must all be relaxed gpu-scope stores of the element's aligned
//! words, for every element type, CUDA vector type and struct. Needs NVRTC (`pip install nvidia-cuda-nvrtc==13.0.*`,
//! which `.ci/run` does).

use rucuda_array::elementwise::{ElementwiseSpec, Variant};
use rucuda_array::ops::{IndexMode, IndexingKey, OpKey, TakeMode};
use rucuda_array::scan::{ScanSpec, ScanVariant};
use rucuda_array::vec::{Char3, Double2, Double4, Float3, Float4, Long4, Short2};
use rucuda_array::{DType, Element, JitCompiler};
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
            keys.push(IndexingKey::TakeAlong {
                dtype: DType::C64,
                index,
                mode,
            });
            keys.push(IndexingKey::PutAlong {
                dtype: DType::U8,
                index,
                mode,
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
            keys.push(IndexingKey::TakePut {
                dtype: d,
                index: DType::U32,
                mode,
                arrays: 2,
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

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mixed {
    x: f32,
    tag: u16,
    k: [u8; 6],
}
rucuda_array::struct_element!(Mixed as "scatter_mixed" { x: f32, tag: u16, k: [u8; 6] });

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Wide {
    a: f64,
    b: [i32; 2],
}
rucuda_array::struct_element!(Wide as "scatter_wide" { a: f64, b: [i32; 2] });

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bytes5 {
    k: [u8; 5],
}
rucuda_array::struct_element!(Bytes5 as "scatter_bytes5" { k: [u8; 5] });

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Halves {
    a: u16,
    b: [i8; 4],
}
rucuda_array::struct_element!(Halves as "scatter_halves" { a: u16, b: [i8; 4] });

/// The bits of the words a scatter stores an element of `d` as: the widest of 8, 4, 2 or
/// 1 bytes that divides both its size and its alignment.
fn word_bits(d: DType) -> usize {
    let (size, align) = (d.size_bytes(), d.align_bytes());
    8 * [8, 4, 2, 1]
        .into_iter()
        .find(|w| size % w == 0 && align % w == 0)
        .unwrap_or(1)
}

/// The PTX text of entry `entry` (up to the next entry).
fn entry_body<'a>(ptx: &'a str, entry: &str) -> &'a str {
    let at = ptx
        .find(&format!(".entry {entry}("))
        .unwrap_or_else(|| panic!("no entry {entry}"));
    let rest = &ptx[at + 1..];
    let end = rest.find(".entry ").unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn scatter_stores_are_relaxed_gpu_scope_words_for_every_element() {
    let mut types: Vec<DType> = DType::ALL.to_vec();
    types.extend([
        Float3::DTYPE,
        Float4::DTYPE,
        Double2::DTYPE,
        Double4::DTYPE,
        Char3::DTYPE,
        Short2::DTYPE,
        Long4::DTYPE,
        Mixed::DTYPE,
        Wide::DTYPE,
        Bytes5::DTYPE,
        Halves::DTYPE,
    ]);
    // Clip and Wrap only: Raise kernels also store the first bad index (one thread, after
    // winning a CAS), which is a plain store.
    let mut scatters = Vec::new();
    for &dtype in &types {
        let keys = [
            OpKey::Put {
                dtype,
                index: DType::I32,
                mode: IndexMode::Clip,
                arrays: 1,
            },
            OpKey::Put {
                dtype,
                index: DType::U64,
                mode: IndexMode::Wrap,
                arrays: 3,
            },
            OpKey::Indexing(IndexingKey::PutAxis {
                dtype,
                index: DType::I64,
                mode: TakeMode::Wrap,
            }),
            OpKey::Indexing(IndexingKey::TakePut {
                dtype,
                index: DType::I16,
                mode: TakeMode::Clip,
                arrays: 2,
            }),
        ];
        for key in keys {
            let spec = key.spec().unwrap_or_else(|e| panic!("{key:?}: {e}"));
            scatters.push((dtype, spec));
        }
    }
    let mut src = String::new();
    let mut entries = Vec::new();
    for (dtype, spec) in &scatters {
        let r = spec.render(&Variant::Contiguous).unwrap();
        src.push_str(&in_namespace(&r.entry, &r.source));
        entries.push((*dtype, format!("{}_n", r.entry)));
    }
    let c = |output| {
        JitCompiler::with_options(
            CompileOptions::new()
                .no_extern_c(true)
                .cache_dir(None)
                .output(output),
        )
    };
    let ptx = c(OutputKind::Ptx)
        .compile_for(&src, Arch::SM_90)
        .unwrap_or_else(|e| panic!("scatter kernels failed: {e}"));
    let ptx = String::from_utf8_lossy(&ptx.image).into_owned();
    for (dtype, entry) in &entries {
        let body = entry_body(&ptx, entry);
        let want = format!("st.relaxed.gpu.b{}", word_bits(*dtype));
        let stores: Vec<&str> = body
            .lines()
            .map(|l| l.trim_start())
            // Predicated instructions start with `@%p1 `.
            .map(|l| match l.strip_prefix('@') {
                Some(p) => p.split_once(' ').map_or(p, |(_, rest)| rest.trim_start()),
                None => l,
            })
            .filter(|l| l.starts_with("st."))
            .collect();
        assert!(
            !stores.is_empty(),
            "{entry} ({dtype}) stores nothing:\n{body}"
        );
        for st in &stores {
            assert!(
                st.starts_with(&format!("{want} ")),
                "{entry} ({dtype}): `{st}` is not a `{want}` store:\n{body}"
            );
        }
        // Every word of every destination element: at least size / word stores.
        let words = dtype.size_bytes() * 8 / word_bits(*dtype);
        assert!(stores.len() >= words, "{entry} ({dtype}): {stores:?}");
    }
    // And through ptxas for the oldest architecture CUDA 13 supports.
    c(OutputKind::Cubin)
        .compile_for(&src, Arch::SM_75)
        .unwrap_or_else(|e| panic!("scatter kernels (sm_75 cubin) failed: {e}"));
}
