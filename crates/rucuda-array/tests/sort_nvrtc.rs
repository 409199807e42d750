//! Every sort kernel instantiation compiled for real with NVRTC (no GPU needed): each key
//! type, both orders, keys only and with values of every size, both modules, the default
//! tile shapes and the block sort's row sizes; checked for the entries, and in the common
//! u32/f32 cases for ptxas's registers and spills. Needs NVRTC (`cargo xtask test` installs
//! NVIDIA's wheel).

use rucuda_array::sort::{PeerMatch, SortKernelSpec, SortModule, SortTuning};
use rucuda_array::{DType, JitCompiler};
use rucuda_jit::{Arch, Backend, CompileOptions, OutputKind};

fn compile(spec: SortKernelSpec) -> String {
    let r = spec.render().unwrap();
    let c = JitCompiler::with_options(
        CompileOptions::new()
            .no_extern_c(true)
            .cache_dir(None)
            .output(OutputKind::Ptx),
    );
    let ptx = c
        .compile_for(&r.source, Arch::SM_90)
        .unwrap_or_else(|e| panic!("{} failed to compile: {e}\n{}", spec.name(), r.source));
    let text = String::from_utf8_lossy(&ptx.image).into_owned();
    for e in &r.entries {
        assert!(text.contains(&format!(".entry {e}(")), "{e}");
    }
    text
}

const KEYS: [DType; 12] = [
    DType::Bool,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F16,
    DType::BF16,
    DType::F32,
];

fn all_keys() -> impl Iterator<Item = DType> {
    KEYS.into_iter().chain([DType::F64])
}

#[test]
fn onesweep_kernels_compile_nvrtc() {
    for key in all_keys() {
        for value_size in [0usize, 1, 2, 4, 8] {
            for descending in [false, true] {
                if descending && value_size % 4 != 0 {
                    continue;
                }
                let t = SortTuning::for_sizes(key.size_bytes(), value_size);
                compile(SortKernelSpec {
                    key,
                    descending,
                    value_size,
                    threads: t.threads,
                    items: t.items,
                    module: SortModule::Onesweep,
                    // Both ways of finding a digit's lanes compile (half the cases each),
                    // and the register bound of `SortTuning::min_blocks`.
                    peer_match: if descending {
                        PeerMatch::Ballots
                    } else {
                        PeerMatch::MatchAny
                    },
                    min_blocks: if descending { 4 } else { 0 },
                });
            }
        }
    }
}

#[test]
fn block_kernels_compile_nvrtc() {
    for key in all_keys() {
        for value_size in [0usize, 4, 8] {
            let t = SortTuning::for_sizes(key.size_bytes(), value_size);
            let mut items = 1;
            while items <= t.local_items(t.local_max) {
                compile(SortKernelSpec {
                    key,
                    descending: key == DType::F32,
                    value_size,
                    threads: t.local_threads,
                    items,
                    module: SortModule::Block,
                    peer_match: if items == 4 {
                        PeerMatch::Ballots
                    } else {
                        PeerMatch::MatchAny
                    },
                    min_blocks: 0,
                });
                items *= 4;
            }
        }
    }
}

#[test]
fn select_kernels_compile_nvrtc() {
    for key in all_keys() {
        for value_size in [4usize, 8] {
            for descending in [false, true] {
                let t = SortTuning::for_sizes(key.size_bytes(), value_size);
                compile(SortKernelSpec {
                    key,
                    descending,
                    value_size,
                    threads: t.threads,
                    items: t.items,
                    module: SortModule::Select,
                    peer_match: t.peer_match,
                    min_blocks: t.min_blocks,
                });
            }
        }
    }
}

#[test]
fn family_and_histogram_kernels_compile_nvrtc() {
    for key in all_keys() {
        compile(SortKernelSpec {
            key,
            descending: false,
            value_size: 0,
            threads: 256,
            items: 1,
            module: SortModule::Family,
            peer_match: PeerMatch::MatchAny,
            min_blocks: 0,
        });
    }
    let c = JitCompiler::with_options(
        CompileOptions::new()
            .no_extern_c(true)
            .cache_dir(None)
            .output(OutputKind::Ptx),
    );
    for dtype in all_keys() {
        let src = rucuda_array::sort::histogram_source(dtype).unwrap();
        let ptx = c
            .compile_for(&src, Arch::SM_90)
            .unwrap_or_else(|e| panic!("histogram {dtype}: {e}\n{src}"));
        // The classic kernel and the lanes kernels of the four modes.
        let text = String::from_utf8_lossy(&ptx.image);
        assert!(text.contains("_histogram("), "{dtype}");
        for m in 0..4 {
            assert!(
                text.contains(&format!("_histogram_lanes_m{m}(")),
                "{dtype}: lanes kernel of mode {m}"
            );
        }
    }
    for (dtype, less) in [
        (DType::F32, "a < b"),
        (DType::F16, "(float)a < (float)b"),
        (DType::C64, "a.re < b.re || (a.re == b.re && a.im < b.im)"),
        (DType::C128, "abs(a) < abs(b)"),
        (DType::I64, "(a & 0xff) < (b & 0xff)"),
    ] {
        let src = rucuda_array::sort::merge_source(dtype, less).unwrap();
        c.compile_for(&src, Arch::SM_90)
            .unwrap_or_else(|e| panic!("merge {dtype}: {e}\n{src}"));
    }
}

/// Every compaction instantiation compiles; those of 1- to 16-byte elements by bool flags
/// (select and partition) take at most 64 registers and spill nothing, so that
/// eight 128-thread blocks share a multiprocessor (the 16 KiB tiles in flight are what
/// the kernel's speed rests on).
#[test]
fn compact_kernels_compile_nvrtc() {
    let c = JitCompiler::with_options(CompileOptions::new().no_extern_c(true).cache_dir(None));
    for dtype in all_keys().chain([DType::C64, DType::C128]) {
        for flags in [DType::Bool, DType::F16, DType::I64, DType::F32] {
            for partition in [false, true] {
                let src = rucuda_array::sort::compact_source(dtype, flags, partition).unwrap();
                c.compile_for(&src, Arch::SM_90).unwrap_or_else(|e| {
                    panic!("compact {dtype} by {flags} (partition {partition}): {e}\n{src}")
                });
            }
        }
    }
    for dtype in [DType::U8, DType::F16, DType::F32, DType::F64, DType::C128] {
        for partition in [false, true] {
            let src = rucuda_array::sort::compact_source(dtype, DType::Bool, partition).unwrap();
            for (name, regs, spill) in ptxas_log_usage(&src, &[]) {
                assert!(
                    regs <= 64 && spill == 0,
                    "{name}: {regs} registers, {spill} bytes spilled"
                );
            }
        }
    }
}

/// ptxas's account of each entry of `spec`'s module (cubin, `-Xptxas=-v`): the entry's
/// name, registers and spill-store bytes.
fn ptxas_usage(spec: SortKernelSpec) -> Vec<(String, u32, u32)> {
    let r = spec.render().unwrap();
    ptxas_log_usage(&r.source, &r.entries)
}

/// ptxas's account of each entry of `source` (at least one; each of `entries` named).
fn ptxas_log_usage(source: &str, entries: &[String]) -> Vec<(String, u32, u32)> {
    let c = JitCompiler::with_options(
        CompileOptions::new()
            .no_extern_c(true)
            .cache_dir(None)
            .output(OutputKind::Cubin)
            .option("-Xptxas=-v"),
    );
    let out = c
        .compile_for(source, Arch::SM_90)
        .unwrap_or_else(|e| panic!("failed to compile: {e}\n{source}"));
    // "Function properties for NAME", then "N bytes stack frame, S bytes spill stores,
    // ...", then "Used R registers, ...".
    let number_before = |line: &str, what: &str| -> Option<u32> {
        let at = line.find(what)?;
        line[..at].split_whitespace().last()?.parse().ok()
    };
    let mut usage = Vec::new();
    let mut current: Option<(String, u32)> = None;
    for line in out.log.lines() {
        if let Some(at) = line.find("Function properties for ") {
            current = Some((line[at + 24..].trim().to_string(), 0));
        } else if let (Some((_, spill)), Some(s)) =
            (current.as_mut(), number_before(line, "bytes spill stores"))
        {
            *spill = s;
        } else if let Some(regs) = number_before(line, "registers") {
            if let Some((name, spill)) = current.take() {
                usage.push((name, regs, spill));
            }
        }
    }
    assert!(
        !usage.is_empty(),
        "no ptxas account from {} (NVRTC {:?} opened as {}) in:\n{}",
        match out.compiler {
            Backend::Nvrtc => "NVRTC",
            Backend::Nvcc => "nvcc",
        },
        rucuda_jit::nvrtc::Nvrtc::get().map(|n| n.version()).ok(),
        rucuda_jit::nvrtc::Nvrtc::get().map_or("?", |n| n.opened_as()),
        out.log
    );
    for e in entries {
        assert!(
            usage.iter().any(|(name, _, _)| name == e),
            "no ptxas account of {e} in:\n{}",
            out.log
        );
    }
    usage
}

/// The common sorts' kernels as ptxas builds them for sm_90: the onesweep digit pass of
/// the default tiles (512 threads, `min_blocks` 2) within 64 registers, so that two
/// blocks share a multiprocessor, spilling little (sm_90, NVRTC 13.0: 16 bytes for u32
/// keys at 512 × 24, 36 with u32 values at 512 × 19; these shapes beat the unspilled
/// 512 × 16 and 512 × 22 on an H200; pairs at 512 × 16, an H100's shape, too); the
/// one-block row sort at most one spilled word.
#[test]
fn common_sorts_fit_their_registers_nvrtc() {
    for (key, value_size) in [
        (DType::U32, 0),
        (DType::U32, 4),
        (DType::F32, 0),
        (DType::F32, 4),
    ] {
        let t = SortTuning::for_sizes(4, value_size);
        assert_eq!((t.threads, t.min_blocks), (512, 2));
        // Pairs on slower memory take 16 keys a thread (SortTuning::for_device).
        let slower_pairs = (value_size > 0).then_some(16);
        for (module, threads, items, min_blocks) in [
            (SortModule::Onesweep, t.threads, t.items, t.min_blocks),
            (
                SortModule::Onesweep,
                t.threads,
                slower_pairs.unwrap_or(t.items),
                t.min_blocks,
            ),
            (
                SortModule::Block,
                t.local_threads,
                t.local_items(t.local_max),
                0,
            ),
        ] {
            for peer_match in [PeerMatch::Ballots, PeerMatch::MatchAny] {
                let spec = SortKernelSpec {
                    key,
                    descending: false,
                    value_size,
                    threads,
                    items,
                    module,
                    peer_match,
                    min_blocks,
                };
                // No local arrays in the PTX either (the check this test began with).
                assert!(
                    !compile(spec).contains(".local"),
                    "{key} {value_size} {module:?} {peer_match:?} spills"
                );
                for (name, regs, spill) in ptxas_usage(spec) {
                    if name.ends_with("_onesweep") {
                        assert!(regs <= 64, "{name}: {regs} registers");
                        assert!(spill <= 48, "{name}: {spill} bytes of spill stores");
                    } else {
                        assert!(spill <= 4, "{name}: {spill} bytes of spill stores");
                    }
                }
            }
        }
    }
}
