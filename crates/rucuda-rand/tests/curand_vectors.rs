//! Fixed vectors from cuRAND's device API, checked against our CPU references.
//!
//! Recorded from NVIDIA's `curand_kernel.h` (cuRAND 10.4.5, CUDA 13.0) compiled for the
//! host with g++ (its `NV_IS_HOST` code paths, which for raw outputs and uniforms perform the
//! same integer and exactly rounded arithmetic as the device paths), calling
//! `curand_init(seed, subsequence, offset, &state)` and then `curand`, `curand_uniform`,
//! `curand_uniform_double` and `curand_poisson(&state, 5.5)` nine times each. The Sobol
//! lines use libcurand's `CURAND_DIRECTION_VECTORS_{32,64}_JOEKUO6` dimension `d`, which our
//! Joe–Kuo construction reproduces. The GPU test `curand_device_api_gpu.rs`
//! (`recorded_streams_are_the_device_s`) checks the same streams against cuRAND on the device.

use rucuda_rand::mrg32k3a::reference::Mrg32k3aState;
use rucuda_rand::philox::reference::Philox4x32_10State;
use rucuda_rand::reference::CurandState;
use rucuda_rand::sobol::direction::{direction_vectors_32, direction_vectors_64};
use rucuda_rand::sobol::reference::{Sobol32State, Sobol64State};
use rucuda_rand::xorwow::reference::XorwowState;

mod recorded;
use recorded::VECTORS;

fn check<S: CurandState>(mut s: S, what: &str, want: &[u64], label: &str) {
    for (i, &w) in want.iter().enumerate() {
        let got: u64 = match what {
            "raw" => s.curand().into(),
            "uniform" => u64::from(s.uniform().to_bits()),
            "uniform_double" => s.uniform_double().to_bits(),
            "poisson5.5" => u64::from(s.poisson(5.5)),
            _ => panic!("unknown output {what}"),
        };
        assert_eq!(got, w, "{label} {what}: value {i}");
    }
}

#[test]
fn cpu_references_reproduce_recorded_curand_streams() {
    for &(generator, a, b, c, what, want) in VECTORS {
        let label = format!("{generator}({a:#x}, {b:#x}, {c:#x})");
        match generator {
            "philox" => check(Philox4x32_10State::new(a, b, c), what, want, &label),
            "xorwow" => check(XorwowState::new(a, b, c), what, want, &label),
            "mrg32k3a" => check(Mrg32k3aState::new(a, b, c), what, want, &label),
            // Sobol: (dimension, offset, scramble constant).
            "sobol32" => check(
                Sobol32State::new(direction_vectors_32(a as usize).unwrap(), b as u32),
                what,
                want,
                &label,
            ),
            "ssobol32" => check(
                Sobol32State::scrambled(
                    direction_vectors_32(a as usize).unwrap(),
                    c as u32,
                    b as u32,
                ),
                what,
                want,
                &label,
            ),
            "sobol64" => check(
                Sobol64State::new(direction_vectors_64(a as usize).unwrap(), b),
                what,
                want,
                &label,
            ),
            _ => panic!("unknown generator {generator}"),
        }
    }
}
