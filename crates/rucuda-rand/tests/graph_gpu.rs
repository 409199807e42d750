//! GPU tests of random fills captured into a graph (`rucuda_array::graph`): the stateful
//! generators (XORWOW, MRG32k3a) keep their states in device memory, so each replay
//! advances them and gives the numbers the next eager fill would, bit for bit.

mod common;

use rucuda_array::{graph, ArrayError, GpuArray};
use rucuda_driver::{Stream, StreamFlags};
use rucuda_rand::{Mrg32k3a, RandomGenerator, Xorwow};

const N: usize = 1 << 16;
const SEED: u64 = 0x5eed_1234;

fn replays_continue_the_eager_sequence<G: RandomGenerator>(make: impl Fn() -> G) {
    let ctx = common::ctx();
    let s = Stream::new(&ctx, StreamFlags::NON_BLOCKING).unwrap();
    let mut eager = make();
    let mut e_out = GpuArray::<f32>::empty(&s, &[N]).unwrap();
    let mut fills = Vec::new();
    for _ in 0..3 {
        eager.fill_uniform(&mut e_out, &s).unwrap();
        fills.push(e_out.to_vec().unwrap());
    }
    let mut g = make();
    let mut out = GpuArray::<f32>::empty(&s, &[N]).unwrap();
    let step = graph::capture(&s, |s| {
        g.fill_uniform(&mut out, s)
            .map_err(|e| ArrayError::InvalidArgument(e.to_string()))
    })
    .unwrap();
    for (i, want) in fills.iter().enumerate() {
        step.replay(&s).unwrap();
        let got = out.to_vec().unwrap();
        let differ = got
            .iter()
            .zip(want)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        assert_eq!(
            differ, 0,
            "replay {i}: {differ} values differ from eager fill {i}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn captured_xorwow_fills_continue_the_eager_sequence() {
    let ctx = common::ctx();
    replays_continue_the_eager_sequence(|| Xorwow::new(&ctx, SEED).unwrap());
}

#[test]
#[ignore = "needs a CUDA device"]
fn captured_mrg32k3a_fills_continue_the_eager_sequence() {
    let ctx = common::ctx();
    replays_continue_the_eager_sequence(|| Mrg32k3a::new(&ctx, SEED).unwrap());
}
