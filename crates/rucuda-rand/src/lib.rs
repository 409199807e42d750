//! cuRAND-compatible random numbers for rucuda: what `pycuda.curandom` gives Python, as our
//! own CUDA kernels (no libcurand).
//!
//! **GPU generators** ([`RandomGenerator`]: PyCUDA's `fill_uniform`, `gen_uniform`,
//! `fill_normal`, `gen_normal`, `fill_log_normal`, `gen_log_normal`, `fill_poisson`,
//! `gen_poisson`, plus raw bits and normals with a mean and deviation, into a
//! [`rucuda_driver::DeviceBuffer`], a view, or a contiguous [`rucuda_array::GpuArray`], on a
//! stream): [`Philox4x32_10`], [`Xorwow`], [`Mrg32k3a`] (states seeded as
//! [`GeneratorOptions`] says: PyCUDA's `seed_getter_uniform` / `seed_getter_unique` are in
//! [`seed`]; skip-ahead by outputs, subsequences and sequences), and [`Sobol32`],
//! [`ScrambledSobol32`], [`Sobol64`], [`ScrambledSobol64`] (one state per dimension, Joe and
//! Kuo's direction vectors). [`rand`] is PyCUDA's `curandom.rand`.
//!
//! **Bit-exact with cuRAND's device API**: state `i` of a generator produces exactly what a
//! cuRAND kernel produces after `curand_init(seed_i, subsequence_i, offset_i, &state)` and
//! repeated `curand`, `curand_uniform`, `curand_uniform_double`, `curand_normal`,
//! `curand_normal_double`, `curand_log_normal[_double]` or `curand_poisson`; the state
//! stays on the device between calls, Box–Muller's cached second value included. Outputs
//! are laid out in 16-byte chunks per state ([`reference::Layout`]).
//!
//! **CPU references** ([`reference::CurandState`], one per generator in its `reference`
//! module) reproduce the same streams on the host: raw outputs and uniforms bit for bit,
//! transcendental transforms to a few ulps ([`distributions`]). [`kernels`] holds the CUDA
//! sources.
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
//!
//! ```no_run
//! use rucuda_rand::{Xorwow, RandomGenerator};
//! use rucuda_driver::{Device, Stream};
//! let ctx = Device::get(0)?.primary_context()?;
//! let stream = Stream::null(&ctx);
//! let mut g = Xorwow::new(&ctx, 42)?;
//! let x = g.gen_normal::<f32>(&[1 << 20], &stream)?;
//! let mut y = rucuda_array::GpuArray::<f64>::empty(&stream, &[1000, 1000])?;
//! g.fill_uniform(&mut y, &stream)?;
//! # let _ = x;
//! # Ok::<(), rucuda_rand::Error>(())
//! ```

mod convenience;
pub mod distributions;
mod error;
pub mod generator;
pub mod kernels;
mod launch;
pub mod math;
pub mod mrg32k3a;
pub mod philox;
mod pseudo;
mod pseudo_macros;
pub mod reference;
mod sampling;
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
