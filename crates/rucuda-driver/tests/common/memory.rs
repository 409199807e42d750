//! Helpers of the memory tests: the memory kernels (`tests/kernels/memory.cu`), random
//! bytes, comparisons that name the first difference, the affine map the kernels apply.

use super::Rng;
use rucuda_driver::*;

pub type TestResult = Result<(), Error>;

pub const BLOCK: u32 = 256;

pub fn memory_module(ctx: &Context) -> Module {
    super::module(ctx, include_str!("../kernels/memory.ptx"))
}

/// `n` random bytes, eight per generator step.
pub fn random_bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n + 8);
    while v.len() < n {
        v.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    v.truncate(n);
    v
}

/// Compares without printing megabytes: names the first differing index.
pub fn assert_same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: first difference at index {i} of {}: got {:?}, want {:?}",
            got.len(),
            got[i],
            want[i]
        );
    }
}

pub fn assert_same_bits(got: &[f32], want: &[f32], what: &str) {
    let g: Vec<u32> = got.iter().map(|x| x.to_bits()).collect();
    let w: Vec<u32> = want.iter().map(|x| x.to_bits()).collect();
    assert_same(&g, &w, what);
}

pub fn affine(x: u32, a: u32, b: u32) -> u32 {
    x.wrapping_mul(a).wrapping_add(b)
}
