//! Sobol quasi-random sequences, 32- and 64-bit, plain and scrambled (cuRAND's
//! `CURAND_RNG_QUASI_SOBOL32`, `..._SCRAMBLED_SOBOL32`, `..._SOBOL64`,
//! `..._SCRAMBLED_SOBOL64`), with direction vectors from Joe and Kuo's table.

pub mod direction;
pub mod reference;
pub mod scramble;

pub mod kernel;
mod launch;

pub use kernel::{ScrambledSobol32, ScrambledSobol64, Sobol32, Sobol64};
pub use launch::{launch_shape, LaunchShape};
