//! GPU tests of the scatters with many repeated indices (`put`, `multi_put`, `put_axis`,
//! `multi_take_put_into`): thousands of threads write each of a few dozen elements at
//! once. The kernels store with relaxed gpu-scope stores of each element's aligned words,
//! so every aligned word of a result must be that word of one of the values written
//! there (of the initial value where no index names the element): for elements of one
//! word (up to 8 bytes, aligned to their size) the whole element is one of the values;
//! for `Complex<f64>` each 8-byte half is one of the candidates' halves; for `Float3`
//! each 4-byte word, for `Char3` each byte. Fresh random data (seed printed by the
//! testkit), every element type including `f16`, complex, vector and struct elements.

mod common;

use std::fmt::Debug;

use common::{stream, RandomElement, RandomVec, Rng};
use rucuda_array::ops::{self, IndexMode, TakeMode};
use rucuda_array::vec::{Char3, Double2, Float3, Short2};
use rucuda_array::{bf16, f16, Complex, Element, GpuArray};
use rucuda_driver::Stream;

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mixed {
    x: f32,
    tag: u16,
    k: [u8; 6],
}
rucuda_array::struct_element!(Mixed as "scatter_gpu_mixed" { x: f32, tag: u16, k: [u8; 6] });

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Wide {
    a: f64,
    b: [i32; 2],
}
rucuda_array::struct_element!(Wide as "scatter_gpu_wide" { a: f64, b: [i32; 2] });

/// Destination elements: few, so that each is named by many indices.
const DST: usize = 37;
/// Indices per scatter.
const MANY: usize = 1 << 16;

fn up<T: Element>(s: &Stream, shape: &[usize], data: &[T]) -> GpuArray<T> {
    GpuArray::from_shape_slice(s, shape, data).expect("upload")
}

/// The bytes of `v`.
fn bytes_of<T: Element>(v: &T) -> &[u8] {
    // SAFETY: `v` is a live reference to `size_of::<T>()` bytes, all initialized: every
    // element type here is plain data without padding (primitives, `Complex` of two
    // floats, CUDA vector types, and structs that `struct_element!` checks have none).
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
}

/// The bytes of the words a scatter stores a `T` as: the widest of 8, 4, 2, 1 that
/// divides both its size and its alignment (what `cuda/scatter_store.cuh` picks).
fn word_bytes<T: Element>() -> usize {
    let (size, align) = (T::DTYPE.size_bytes(), T::DTYPE.align_bytes());
    [8, 4, 2, 1]
        .into_iter()
        .find(|w| size % w == 0 && align % w == 0)
        .unwrap_or(1)
}

/// Checks every aligned word of `got[d]` against that word of the candidates `cands[d]`
/// (of `init[d]` when there are none), and that the test was a real contest (most
/// elements had several candidates).
fn check_words<T: Element + Copy + Debug>(what: &str, got: &[T], init: &[T], cands: &[Vec<T>]) {
    assert_eq!(got.len(), init.len(), "{what}: length");
    let w = word_bytes::<T>();
    let mut contested = 0;
    for (d, g) in got.iter().enumerate() {
        if cands[d].len() > 1 {
            contested += 1;
        }
        let pool: Vec<&T> = if cands[d].is_empty() {
            vec![&init[d]]
        } else {
            cands[d].iter().collect()
        };
        for (k, word) in bytes_of(g).chunks(w).enumerate() {
            let ok = pool
                .iter()
                .any(|c| &bytes_of(*c)[k * w..(k + 1) * w] == word);
            assert!(
                ok,
                "{what}: element {d} = {g:?}, its {w}-byte word {k} is none of the {} \
                 candidates' (first: {:?})",
                pool.len(),
                pool.first()
            );
        }
        if w == std::mem::size_of::<T>() {
            assert!(
                pool.iter().any(|c| bytes_of(*c) == bytes_of(g)),
                "{what}: element {d} = {g:?} is none of its candidates"
            );
        }
    }
    assert!(
        contested * 2 > got.len(),
        "{what}: only {contested} of {} elements were contested",
        got.len()
    );
}

/// Python's `v mod n`.
fn wrap(v: i64, n: usize) -> usize {
    v.rem_euclid(n as i64) as usize
}

/// `MANY` indices in `-DST..DST` (wrap mode names every element through both signs).
fn random_indices(rng: &mut Rng) -> Vec<i32> {
    (0..MANY)
        .map(|_| rng.range(-(DST as i64), DST as i64) as i32)
        .collect()
}

/// `dst.put(idx, values)` with `MANY` random repeated indices into `DST` elements, on a
/// contiguous destination and on a transposed one (flat row-major indices of the view).
fn put_case<T: Element + Copy + Debug>(rng: &mut Rng, mut gen: impl FnMut(&mut Rng) -> T) {
    let s = stream();
    let what = T::DTYPE.name();
    let idx = random_indices(rng);
    let values: Vec<T> = (0..MANY).map(|_| gen(rng)).collect();
    let mut cands: Vec<Vec<T>> = vec![Vec::new(); DST];
    for (j, &i) in idx.iter().enumerate() {
        cands[wrap(i.into(), DST)].push(values[j]);
    }
    let init: Vec<T> = (0..DST).map(|_| gen(rng)).collect();
    let dst = up(&s, &[DST], &init);
    let (gi, gv) = (up(&s, &[MANY], &idx), up(&s, &[MANY], &values));
    dst.put(&gi, &gv, IndexMode::Wrap).unwrap();
    check_words(what, &dst.to_vec().unwrap(), &init, &cands);
    // A transposed 4 x 9 destination (36 elements): its row-major order is the view's.
    let n = 36;
    let base_init: Vec<T> = (0..n).map(|_| gen(rng)).collect();
    let t = up(&s, &[4, 9], &base_init).transpose();
    let view_init = t.to_vec().unwrap();
    let mut cands: Vec<Vec<T>> = vec![Vec::new(); n];
    for (j, &i) in idx.iter().enumerate() {
        cands[wrap(i.into(), n)].push(values[j]);
    }
    t.put(&gi, &gv, IndexMode::Wrap).unwrap();
    check_words(
        &format!("{what} (transposed)"),
        &t.to_vec().unwrap(),
        &view_init,
        &cands,
    );
}

fn random<T: RandomElement>(rng: &mut Rng) -> T {
    T::random(rng)
}

fn float3(rng: &mut Rng) -> Float3 {
    let mut f = || (rng.unit() * 100.0) as f32;
    Float3::new(f(), f(), f())
}

fn double2(rng: &mut Rng) -> Double2 {
    Double2::new(rng.unit() * 100.0, rng.unit() * 100.0)
}

fn char3(rng: &mut Rng) -> Char3 {
    let mut c = || rng.next_u64() as i8;
    Char3::new(c(), c(), c())
}

fn short2(rng: &mut Rng) -> Short2 {
    Short2::new(rng.next_u64() as i16, rng.next_u64() as i16)
}

fn mixed(rng: &mut Rng) -> Mixed {
    let b = rng.next_u64().to_le_bytes();
    Mixed {
        x: (rng.unit() * 100.0) as f32,
        tag: rng.next_u64() as u16,
        k: [b[0], b[1], b[2], b[3], b[4], b[5]],
    }
}

fn wide(rng: &mut Rng) -> Wide {
    Wide {
        a: rng.unit() * 100.0,
        b: [rng.next_u64() as i32, rng.next_u64() as i32],
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn put_with_repeated_indices_lands_one_value_per_word_for_every_scalar_type() {
    let mut rng = Rng::fresh();
    put_case::<bool>(&mut rng, random);
    put_case::<u8>(&mut rng, random);
    put_case::<i8>(&mut rng, random);
    put_case::<i16>(&mut rng, random);
    put_case::<u16>(&mut rng, random);
    put_case::<f16>(&mut rng, random);
    put_case::<bf16>(&mut rng, random);
    put_case::<i32>(&mut rng, random);
    put_case::<u32>(&mut rng, random);
    put_case::<f32>(&mut rng, random);
    put_case::<i64>(&mut rng, random);
    put_case::<u64>(&mut rng, random);
    put_case::<f64>(&mut rng, random);
}

#[test]
#[ignore = "needs a CUDA device"]
fn put_with_repeated_indices_lands_one_value_per_word_for_complex_vector_and_struct_types() {
    let mut rng = Rng::fresh();
    // Two 4-byte words (complex64 is aligned to 4), two 8-byte halves (complex128).
    put_case::<Complex<f32>>(&mut rng, random);
    put_case::<Complex<f64>>(&mut rng, random);
    put_case::<Float3>(&mut rng, float3);
    put_case::<Double2>(&mut rng, double2);
    put_case::<Char3>(&mut rng, char3);
    put_case::<Short2>(&mut rng, short2);
    put_case::<Mixed>(&mut rng, mixed);
    put_case::<Wide>(&mut rng, wide);
}

#[test]
#[ignore = "needs a CUDA device"]
fn multi_put_with_repeated_indices_lands_one_value_in_every_destination() {
    let mut rng = Rng::fresh();
    let s = stream();
    let idx = random_indices(&mut rng);
    let gi = up(&s, &[MANY], &idx);
    // Three arrays in one launch, f16 and complex128.
    multi_put_case::<f16>(&mut rng, &s, &idx, &gi);
    multi_put_case::<Complex<f64>>(&mut rng, &s, &idx, &gi);
}

/// `multi_put` of three random `T` arrays through the indices `idx` (on the device as
/// `gi`), each destination checked word by word against its candidates.
fn multi_put_case<T: RandomElement + Element + Copy + Debug>(
    rng: &mut Rng,
    s: &Stream,
    idx: &[i32],
    gi: &GpuArray<i32>,
) {
    let hv: Vec<Vec<T>> = (0..3).map(|_| rng.vec::<T>(MANY)).collect();
    let init: Vec<Vec<T>> = (0..3).map(|_| rng.vec::<T>(DST)).collect();
    let gv: Vec<GpuArray<T>> = hv.iter().map(|h| up(s, &[MANY], h)).collect();
    let outs: Vec<GpuArray<T>> = init.iter().map(|h| up(s, &[DST], h)).collect();
    ops::multi_put(
        &gv.iter().collect::<Vec<_>>(),
        gi,
        &outs.iter().collect::<Vec<_>>(),
        IndexMode::Wrap,
    )
    .unwrap();
    for k in 0..3 {
        let mut cands = vec![Vec::new(); DST];
        for (j, &i) in idx.iter().enumerate() {
            cands[wrap(i.into(), DST)].push(hv[k][j]);
        }
        check_words(
            &format!("multi_put {} array {k}", T::DTYPE.name()),
            &outs[k].to_vec().unwrap(),
            &init[k],
            &cands,
        );
    }
}

/// `dst.put_axis(idx, values, 1)` on a `[3, 5, 4]` destination with 4096 indices into
/// the 5 positions of axis 1.
fn put_axis_case<T: Element + Copy + Debug + RandomElement>(rng: &mut Rng) {
    let s = stream();
    let (pre, len, post, m) = (3, 5, 4, 4096);
    let idx: Vec<i64> = (0..m)
        .map(|_| rng.range(-(len as i64), len as i64))
        .collect();
    let values: Vec<T> = rng.vec(pre * m * post);
    let init: Vec<T> = rng.vec(pre * len * post);
    let dst = up(&s, &[pre, len, post], &init);
    dst.put_axis(
        &up(&s, &[m], &idx),
        &up(&s, &[pre, m, post], &values),
        1,
        TakeMode::Wrap,
    )
    .unwrap();
    let mut cands = vec![Vec::new(); pre * len * post];
    for p in 0..pre {
        for (q, &i) in idx.iter().enumerate() {
            for r in 0..post {
                cands[(p * len + wrap(i, len)) * post + r].push(values[(p * m + q) * post + r]);
            }
        }
    }
    check_words(
        &format!("put_axis {}", T::DTYPE.name()),
        &dst.to_vec().unwrap(),
        &init,
        &cands,
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn put_axis_with_repeated_indices_lands_one_value_per_word() {
    let mut rng = Rng::fresh();
    put_axis_case::<u8>(&mut rng);
    put_axis_case::<f16>(&mut rng);
    put_axis_case::<f32>(&mut rng);
    put_axis_case::<f64>(&mut rng);
    put_axis_case::<Complex<f32>>(&mut rng);
    put_axis_case::<Complex<f64>>(&mut rng);
}

/// `multi_take_put_into` of two arrays with 8192 destination indices into `DST`
/// elements (sources anywhere in 300 elements, wrapped).
fn take_put_case<T: Element + Copy + Debug + RandomElement>(rng: &mut Rng) {
    let s = stream();
    let (n, m) = (300, 8192);
    let hosts: Vec<Vec<T>> = (0..2).map(|_| rng.vec(n)).collect();
    let arrays: Vec<GpuArray<T>> = hosts.iter().map(|h| up(&s, &[n], h)).collect();
    let dest: Vec<i32> = (0..m)
        .map(|_| rng.range(-(DST as i64), DST as i64) as i32)
        .collect();
    let src: Vec<i32> = (0..m).map(|_| rng.range(0, n as i64 - 1) as i32).collect();
    let init: Vec<Vec<T>> = (0..2).map(|_| rng.vec(DST)).collect();
    let outs: Vec<GpuArray<T>> = init.iter().map(|h| up(&s, &[DST], h)).collect();
    ops::multi_take_put_into(
        &arrays.iter().collect::<Vec<_>>(),
        &up(&s, &[m], &dest),
        &up(&s, &[m], &src),
        &outs.iter().collect::<Vec<_>>(),
        None,
        TakeMode::Wrap,
    )
    .unwrap();
    for k in 0..2 {
        let mut cands = vec![Vec::new(); DST];
        for j in 0..m {
            cands[wrap(dest[j].into(), DST)].push(hosts[k][src[j] as usize]);
        }
        check_words(
            &format!("multi_take_put {} array {k}", T::DTYPE.name()),
            &outs[k].to_vec().unwrap(),
            &init[k],
            &cands,
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn multi_take_put_with_repeated_destinations_lands_one_value_per_word() {
    let mut rng = Rng::fresh();
    take_put_case::<bool>(&mut rng);
    take_put_case::<i16>(&mut rng);
    take_put_case::<bf16>(&mut rng);
    take_put_case::<u32>(&mut rng);
    take_put_case::<f64>(&mut rng);
    take_put_case::<Complex<f64>>(&mut rng);
}
