//! Unit tests of the scan source text: entries, tile sizes, status words, variants.

use super::render::{ScanTuning, Variant, BLOCK_SIZE, VECTORS_PER_THREAD};
use super::{ScanKind, ScanSpec};
use crate::dtype::DType;

fn spec(d: DType, kind: ScanKind) -> ScanSpec {
    ScanSpec::builder(d)
        .scan("a + b")
        .neutral("0")
        .kind(kind)
        .build()
        .unwrap()
}

#[test]
fn tiles_are_16_kib_and_status_words_cover_the_value() {
    for d in DType::ALL {
        let k = spec(d, ScanKind::Inclusive)
            .render(Variant::ALL[0])
            .unwrap();
        assert_eq!(
            k.tile_elements * d.size_bytes(),
            BLOCK_SIZE as usize * VECTORS_PER_THREAD * 16,
            "{d}"
        );
        assert_eq!(k.status_words, d.size_bytes().div_ceil(4), "{d}");
    }
}

#[test]
fn variants_differ_in_loads_and_restrict() {
    let s = spec(DType::F32, ScanKind::Exclusive);
    let names: Vec<String> = Variant::ALL
        .iter()
        .map(|v| s.render(*v).unwrap().entry)
        .collect();
    assert_eq!(
        names,
        [
            "scan_excl_vo",
            "scan_excl_vi",
            "scan_excl_so",
            "scan_excl_si"
        ]
    );
    let out_of_place = s.render(Variant::ALL[0]).unwrap().source;
    assert!(out_of_place.contains("const rucuda_t *__restrict__ rucuda_in"));
    assert!(out_of_place.contains("x[c].raw = __ldcs(rucuda_src"));
    assert!(out_of_place.contains("const bool full = true &&"));
    assert!(out_of_place.contains("x[c].e[0] = p;"));
    let in_place = s.render(Variant::ALL[1]).unwrap().source;
    assert!(in_place.contains("const rucuda_t *rucuda_in"));
    assert!(!in_place.contains("__ldg(") && !in_place.contains("__restrict__"));
    let scalar = s.render(Variant::ALL[2]).unwrap().source;
    assert!(scalar.contains("const bool full = false &&"));
    let incl = spec(DType::F32, ScanKind::Inclusive)
        .render(Variant::ALL[0])
        .unwrap()
        .source;
    assert!(!incl.contains("x[c].e[0] = p;"));
}

#[test]
fn the_kernel_uses_shuffles_and_relaxed_status_words_only() {
    let s = spec(DType::F64, ScanKind::Inclusive)
        .render(Variant::ALL[0])
        .unwrap()
        .source;
    assert!(s.contains("__shfl_up_sync") && s.contains("__ballot_sync"));
    // volatile appears only in the status-word accessors.
    for (k, line) in s.lines().enumerate() {
        if line.contains("volatile") && !line.contains("asm volatile") {
            assert!(line.contains("unsigned long long *p"), "line {k}: {line}");
        }
    }
    assert!(s.contains("atomicAdd(reinterpret_cast<unsigned int *>(rucuda_scratch), 1u)"));
    // Tiles come from the counter; blockIdx only aims the L2 prefetch.
    assert_eq!(
        s.matches("const long long tile = rucuda_ticket;").count(),
        1
    );
    assert!(!s.contains("tile = blockIdx") && !s.contains("tile = (long long)blockIdx"));
}

#[test]
fn four_and_eight_byte_types_use_128_threads_of_8_vectors() {
    for d in DType::ALL {
        let k = spec(d, ScanKind::Inclusive)
            .render(Variant::ALL[0])
            .unwrap();
        let (threads, vectors) = super::render::block_shape(d.size_bytes());
        let want = if matches!(d.size_bytes(), 4 | 8) {
            (128, 8)
        } else {
            (256, 4)
        };
        assert_eq!((threads, vectors), want, "{d}");
        assert_eq!(k.block_size, threads, "{d}");
        assert!(vectors * threads as usize / 32 <= 32, "{d}");
        assert!(
            k.source
                .contains(&format!("#define RUCUDA_BLOCK {threads}\n"))
                && k.source.contains(&format!("#define RUCUDA_V {vectors}\n")),
            "{d}"
        );
    }
}

#[test]
fn tunings_shape_the_tile_and_choose_hints() {
    let s = spec(DType::I32, ScanKind::Inclusive);
    let wide = ScanTuning {
        threads: 256,
        vectors: 16,
        ..ScanTuning::for_size(4)
    };
    let k = s.render_tuned(Variant::ALL[0], wide).unwrap();
    assert_eq!((k.tile_elements, k.block_size), (256 * 16 * 4, 256));
    // 16 vectors x 8 warps = 128 warp totals: 4 per lane of warp 0.
    assert!(k.source.contains("#define RUCUDA_V 16\n"));
    assert!(k.source.contains("x[c].raw = __ldcs(rucuda_src") && k.source.contains("__stcs("));
    assert!(k.source.contains("long long ahead)") && k.source.contains("prefetch.global.L2"));
    let plain = ScanTuning {
        streaming: false,
        ..wide
    };
    let k = s.render_tuned(Variant::ALL[0], plain).unwrap();
    assert!(k.source.contains("x[c].raw = __ldg(rucuda_src") && !k.source.contains("__stcs("));
    let k = s.render_tuned(Variant::ALL[1], plain).unwrap();
    assert!(
        k.source.contains("x[c].raw = *(rucuda_src"),
        "in place: coherent loads"
    );
    // The look-back's poll pacing: 9 polls back to back, then 64 ns between, by default.
    let k = s.render_tuned(Variant::ALL[0], wide).unwrap();
    assert!(k
        .source
        .contains("if (spins >= 9u && 64u > 0u) __nanosleep(64u);"));
    let paced = ScanTuning {
        poll_spins: 1,
        poll_sleep_ns: 500,
        ..wide
    };
    let k = s.render_tuned(Variant::ALL[0], paced).unwrap();
    assert!(k
        .source
        .contains("if (spins >= 1u && 500u > 0u) __nanosleep(500u);"));
    for bad in [
        ScanTuning {
            poll_sleep_ns: 2_000_000,
            ..wide
        },
        ScanTuning { threads: 0, ..wide },
        ScanTuning {
            threads: 97,
            ..wide
        },
        ScanTuning {
            threads: 2048,
            ..wide
        },
        ScanTuning { vectors: 0, ..wide },
        ScanTuning {
            vectors: 33,
            ..wide
        },
    ] {
        assert!(bad.check().is_err(), "{bad:?}");
    }
}

#[test]
fn inclusive_scans_without_a_neutral_carry_flags() {
    let free = ScanSpec::builder(DType::F32)
        .scan("fmaxf(a, b)")
        .build()
        .unwrap();
    let k = free.render(Variant::ALL[0]).unwrap();
    assert!(k.source.contains("#define RUCUDA_HAS_NEUTRAL 0"));
    assert!(k
        .source
        .contains("return (rucuda_t)(rucuda_placeholder());"));
    assert!(k.source.contains("rucuda_join(p, p_has, x[c].e[j])"));
    // With a neutral element the flags fold away: same operator calls as before.
    let with = spec(DType::F32, ScanKind::Inclusive)
        .render(Variant::ALL[0])
        .unwrap();
    assert!(with.source.contains("#define RUCUDA_HAS_NEUTRAL 1"));
    assert!(with.source.contains("return (rucuda_t)(0);"));
    // Exclusive scans still need one.
    assert!(ScanSpec::builder(DType::F32)
        .scan("a + b")
        .exclusive()
        .build()
        .is_err());
}

#[test]
fn a_look_back_warp_is_added_only_where_asked_and_possible() {
    let t = ScanTuning {
        early_look_back: true,
        ..ScanTuning::for_size(4)
    };
    let s = spec(DType::I32, ScanKind::Exclusive);
    let early = s.render_tuned(Variant::ALL[0], t).unwrap();
    assert_eq!(early.block_size, t.threads + 32);
    assert_eq!(early.tile_elements, t.threads as usize * t.vectors * 4);
    assert!(early.source.contains("#define RUCUDA_EARLY 1"));
    assert!(early.source.contains("void rucuda_scan_tile_early("));
    let plain = s.render(Variant::ALL[0]).unwrap();
    assert_eq!(plain.block_size, t.threads);
    assert!(plain.source.contains("#define RUCUDA_EARLY 0"));
    assert!(!plain.source.contains("void rucuda_scan_tile_early("));
    // Without a neutral element the warp is not added.
    let max = ScanSpec::builder(DType::I32)
        .scan("a > b ? a : b")
        .build()
        .unwrap()
        .render_tuned(Variant::ALL[0], t)
        .unwrap();
    assert_eq!(max.block_size, t.threads);
    assert!(!max.source.contains("void rucuda_scan_tile_early("));
    assert!(ScanTuning { threads: 1024, ..t }.check().is_err());
}
