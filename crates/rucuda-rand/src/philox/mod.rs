//! Philox4x32-10: a counter-based generator (Salmon, Moraes, Dror, Shaw, SC'11), cuRAND's
//! `CURAND_RNG_PSEUDO_PHILOX4_32_10` and `curandStatePhilox4_32_10_t`.

pub mod kernel;
pub mod reference;

pub use kernel::Philox4x32_10;
