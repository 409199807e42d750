//! MRG32k3a: L'Ecuyer's combined multiple recursive generator
//! (`CURAND_RNG_PSEUDO_MRG32K3A`, `curandStateMRG32k3a_t`).

pub mod jump;
pub mod kernel;
pub mod reference;

pub use kernel::Mrg32k3a;
