//! GPU tests of the array operations against a CPU model of their semantics
//! (`ops_support`: exact integers, f64 floats, arithmetic in the kernels' precision), one
//! file per topic. Fresh random data per run (seed printed), outputs poisoned (fresh
//! allocations come from a pool just filled with 0xA5 bytes; `out` arrays are filled with
//! 0xA5 bytes), sizes that are not a multiple of the block, non-contiguous and broadcast
//! operands.

#[path = "../common/mod.rs"]
mod common;
mod ops_support;

mod binary;
mod cast;
mod index;
mod operands;
mod sizes_streams;
