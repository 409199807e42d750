//! The key transform on the host: exhaustive for 8- and 16-bit types, sampled for the
//! wider ones, against the order of the values themselves (NaNs last, -0.0 before +0.0);
//! the inverse; rendered sources per module.

use super::keys::KeyBits;
use super::render::{SortKernelSpec, SortModule};
use super::tuning::PeerMatch;
use crate::{bf16, f16, DType};
use std::cmp::Ordering;

fn float_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.total_cmp(&b),
    }
}

/// Checks that twiddled keys order `values` (bits, value as f64) as `float_order` does,
/// in both directions, NaNs last in both, and that untwiddle inverts non-NaN keys.
fn check(dtype: DType, values: &[(u64, f64)]) {
    let k = KeyBits::of(dtype).unwrap();
    for descending in [false, true] {
        let mut v: Vec<(u64, f64)> = values.to_vec();
        v.sort_by_key(|&(b, _)| k.twiddle(b, descending));
        for w in v.windows(2) {
            let (a, b) = (w[0].1, w[1].1);
            let o = float_order(a, b);
            let ok = match (a.is_nan(), b.is_nan(), descending) {
                (_, true, _) => true,
                (true, false, _) => false,
                (false, false, false) => o != Ordering::Greater,
                (false, false, true) => o != Ordering::Less,
            };
            assert!(ok, "{dtype} desc {descending}: {a} before {b}");
        }
        for &(b, x) in values {
            if !x.is_nan() {
                assert_eq!(
                    k.untwiddle(k.twiddle(b, descending), descending),
                    b,
                    "{dtype} {x}"
                );
            }
        }
    }
}

#[test]
fn eight_and_sixteen_bit_keys_exhaustively() {
    let u8s: Vec<(u64, f64)> = (0..=255u64).map(|b| (b, b as f64)).collect();
    check(DType::U8, &u8s);
    let i8s: Vec<(u64, f64)> = (0..=255u64).map(|b| (b, b as u8 as i8 as f64)).collect();
    check(DType::I8, &i8s);
    let u16s: Vec<(u64, f64)> = (0..=0xffffu64).map(|b| (b, b as f64)).collect();
    check(DType::U16, &u16s);
    let i16s: Vec<(u64, f64)> = (0..=0xffffu64)
        .map(|b| (b, b as u16 as i16 as f64))
        .collect();
    check(DType::I16, &i16s);
    let f16s: Vec<(u64, f64)> = (0..=0xffffu64)
        .map(|b| (b, f16::from_bits(b as u16).to_f64()))
        .collect();
    check(DType::F16, &f16s);
    let bf16s: Vec<(u64, f64)> = (0..=0xffffu64)
        .map(|b| (b, bf16::from_bits(b as u16).to_f64()))
        .collect();
    check(DType::BF16, &bf16s);
}

#[test]
fn wide_keys_sampled() {
    let mut s = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut f32s: Vec<(u64, f64)> = (0..20_000)
        .map(|_| next() as u32 as u64)
        .map(|b| (b, f32::from_bits(b as u32) as f64))
        .collect();
    for x in [
        0.0f32,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        1.0,
        -1.0,
    ] {
        f32s.push((x.to_bits() as u64, x as f64));
    }
    check(DType::F32, &f32s);
    let mut f64s: Vec<(u64, f64)> = (0..20_000)
        .map(|_| next())
        .map(|b| (b, f64::from_bits(b)))
        .collect();
    for x in [
        0.0f64,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        5e-324,
        -5e-324,
    ] {
        f64s.push((x.to_bits(), x));
    }
    check(DType::F64, &f64s);
    let i32s: Vec<(u64, f64)> = (0..20_000)
        .map(|_| next() as u32 as u64)
        .map(|b| (b, b as u32 as i32 as f64))
        .collect();
    check(DType::I32, &i32s);
    let i64s: Vec<(u64, f64)> = (0..20_000)
        .map(|_| next() >> 12)
        .map(|b| (b, b as i64 as f64))
        .collect();
    check(DType::I64, &i64s);
    let neg: Vec<(u64, f64)> = (0..20_000)
        .map(|_| (next() >> 12) as i64)
        .map(|v| ((-v) as u64, (-v) as f64))
        .collect();
    check(DType::I64, &neg);
    let u64s: Vec<(u64, f64)> = (0..20_000)
        .map(|_| next() >> 12)
        .map(|b| (b, b as f64))
        .collect();
    check(DType::U64, &u64s);
    let bools = [(0u64, 0.0), (1, 1.0)];
    check(DType::Bool, &bools);
}

#[test]
fn complex_keys_are_refused() {
    assert!(KeyBits::of(DType::C64).is_err());
    assert!(KeyBits::of(DType::C128).is_err());
}

#[test]
fn every_module_renders_with_its_entries() {
    for module in [
        SortModule::Onesweep,
        SortModule::Block,
        SortModule::Select,
        SortModule::Family,
    ] {
        for (key, peer_match) in [
            (DType::U8, PeerMatch::MatchAny),
            (DType::I16, PeerMatch::Ballots),
            (DType::F32, PeerMatch::MatchAny),
            (DType::F64, PeerMatch::Ballots),
            (DType::BF16, PeerMatch::MatchAny),
        ] {
            let spec = SortKernelSpec {
                key,
                descending: true,
                value_size: 4,
                threads: 256,
                items: 4,
                module,
                peer_match,
                min_blocks: 0,
            };
            let r = spec.render().unwrap();
            for e in &r.entries {
                assert!(r.source.contains(&format!("{e}(")), "{e}");
            }
            assert!(!r.source.contains("$"), "an unfilled slot in {:?}", module);
        }
    }
    let bad = SortKernelSpec {
        key: DType::F32,
        descending: false,
        value_size: 16,
        threads: 256,
        items: 4,
        module: SortModule::Onesweep,
        peer_match: PeerMatch::MatchAny,
        min_blocks: 0,
    };
    assert!(bad.render().is_err());
}
