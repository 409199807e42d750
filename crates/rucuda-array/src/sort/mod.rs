//! Sorting and its family, generated at run time like every other kernel: LSD radix sort
//! with 8-bit digits in the style of CUB's onesweep `DeviceRadixSort`.
//!
//! - [`crate::GpuArray::sort`], [`crate::GpuArray::sort_axis`],
//!   [`crate::GpuArray::argsort`], [`crate::GpuArray::argsort_axis`],
//!   [`crate::GpuArray::sort_with_positions`], [`crate::GpuArray::sort_by_key`]: along any
//!   axis (the last by default: each row of a 2-D array is sorted on its own), ascending
//!   or descending ([`SortOrder`]), stable, for integers, `bool`, `f16`, `bf16`, `f32`,
//!   `f64` ([`KeyBits`]: NaNs last, `-0.0` before `+0.0`);
//!   [`crate::GpuArray::sort_by_key_expr`]: a user-defined order (a key expression);
//!   [`crate::GpuArray::sort_by_less`]: a stable merge sort by a comparison (orders no
//!   radix key expresses).
//! - [`crate::GpuArray::topk`], [`crate::GpuArray::topk_axis`]: radix select.
//! - [`crate::GpuArray::searchsorted`] ([`Side`]), [`crate::GpuArray::unique`],
//!   [`crate::GpuArray::unique_all`] ([`Unique`]), [`crate::GpuArray::run_length_encode`].
//! - [`crate::GpuArray::histogram`], [`crate::GpuArray::histogram_edges`],
//!   [`crate::GpuArray::bincount`]: counts privatized in shared memory.
//! - [`crate::GpuArray::select_flagged`], [`crate::GpuArray::select_if`],
//!   [`crate::GpuArray::partition_flagged`], [`crate::GpuArray::partition_if`]: one-pass
//!   compaction with decoupled look-back.
//!
//! How (`cuda/`):
//! - Rows of at most [`SortTuning::local_max`] elements (4096 by default): one block
//!   per row holds it in registers and sorts it digit by digit in shared memory.
//! - Longer rows and whole arrays: a histogram kernel counts every digit of every pass
//!   in one read (privatized in shared memory), a small kernel turns the counts into
//!   each row's digit offsets, then one kernel per 8-bit digit: each block takes a tile
//!   (by ticket, so it waits only for running blocks), ranks its keys by the digit with
//!   one ballot per digit bit in each warp and counters in shared memory, publishes its digit
//!   counts and looks back over the earlier tiles' (decoupled look-back, as
//!   [`crate::scan`]), and scatters keys and values through shared memory so that
//!   writes of one digit are contiguous. Rows past 2^30 elements go in chunks (the
//!   look-back counts are 30 bits).
//! - Tile shapes: [`SortTuning`] (environment variables `RUCUDA_SORT_*`).

mod api;
mod compact;
mod engine;
mod family;
mod histogram;
mod key_expr;
mod keys;
mod merge;
mod render;
mod topk;
mod tuning;

#[cfg(test)]
mod keys_tests;

pub use api::SortOrder;
pub use compact::compact_source;
pub use family::{Side, Unique};
pub use histogram::{histogram_source, set_histogram_variant, HistogramVariant};
pub use keys::{KeyBits, KeyKind};
pub use merge::merge_source;
pub use render::{RenderedSort, SortKernelSpec, SortModule};
pub use tuning::{set_tuning_overrides, PeerMatch, SortTuning, TuningOverrides};
