//! cuRAND-compatible random numbers for rucuda: what `pycuda.curandom` gives Python, as our
//! own CUDA kernels (no libcurand).
//!
//! Generators: [`philox`] (Philox4x32-10), [`xorwow`] (XORWOW), [`mrg32k3a`]
//! (MRG32k3a) and [`sobol`] (Sobol32, scrambled Sobol32, Sobol64, scrambled Sobol64).
//! Each thread's stream is bit for bit what cuRAND's device API gives for the same
//! `curand_init(seed, subsequence, offset)`; each generator has a CPU reference
//! ([`reference::CurandState`]) that reproduces those streams on the host.
//!
//! ```
//! use rucuda_rand::{reference::CurandState, philox::reference::Philox4x32_10State};
//! // The stream of thread 3 of a cuRAND kernel that ran curand_init(1234, 3, 0, &s):
//! let mut s = Philox4x32_10State::new(1234, 3, 0);
//! let x: u32 = s.curand();
//! let u: f32 = s.uniform();
//! assert!(u > 0.0 && u <= 1.0);
//! # let _ = x;
//! ```

mod convenience;
pub mod distributions;
mod error;
pub mod generator;
pub mod kernels;
pub mod math;
pub mod mrg32k3a;
pub mod philox;
mod pseudo;
mod pseudo_macros;
pub mod reference;
pub mod seed;
pub mod sobol;
pub mod xorwow;

pub use convenience::rand;
pub use distributions::Distribution;
pub use error::{Error, Result};
pub use generator::{default_state_count, ElementKind, RandElement, RandOutput, RandomGenerator};
pub use mrg32k3a::Mrg32k3a;
pub use philox::Philox4x32_10;
pub use pseudo::GeneratorOptions;
pub use seed::Seeds;
pub use sobol::{ScrambledSobol32, ScrambledSobol64, Sobol32, Sobol64};
pub use xorwow::Xorwow;
