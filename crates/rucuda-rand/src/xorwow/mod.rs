//! XORWOW: Marsaglia's xorshift with a Weyl sequence, cuRAND's default generator
//! (`CURAND_RNG_PSEUDO_XORWOW`, `curandStateXORWOW_t`).

pub mod jump;
pub mod kernel;
pub mod reference;

pub use kernel::Xorwow;
