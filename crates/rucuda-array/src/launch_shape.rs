//! Launch shapes of the built-in element-wise kernels (`ops/engine.rs`) and the
//! reductions' first stage, with environment knobs so that shapes for small inputs
//! (64 KiB to 4 MiB, where launches are latency-bound) can be swept on a GPU without
//! rebuilding. Read once per process; values that do not parse are ignored.
//!
//! - `RUCUDA_EW_BLOCK`: threads per block of the built-in element-wise kernels (a multiple
//!   of 32 up to 1024; 256).
//! - `RUCUDA_EW_ITEMS`: work items (16-byte vectors or elements) per thread before the grid
//!   grows (1): more makes fewer blocks, each thread looping (grid-stride).
//! - `RUCUDA_EW_SMALL_BLOCK`: threads per block when a launch would otherwise fill fewer
//!   blocks than the device has multiprocessors (unset: the same as `RUCUDA_EW_BLOCK`):
//!   smaller blocks spread a small input over more multiprocessors.
//! - `RUCUDA_REDUCE_WORK_PER_THREAD`: items each thread of a reduction's first stage folds
//!   before the grid grows (4); a grid of one block needs no second stage.

use std::sync::OnceLock;

use rucuda_driver::LaunchConfig;

/// Threads per block of the built-in element-wise kernels by default.
pub(crate) const DEFAULT_BLOCK: u32 = 256;

/// Items per thread of a reduction's first stage by default.
pub(crate) const DEFAULT_REDUCE_WORK: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Knobs {
    block: u32,
    items: usize,
    small_block: Option<u32>,
    reduce_work: usize,
}

fn block_size(v: &str) -> Option<u32> {
    v.trim()
        .parse::<u32>()
        .ok()
        .filter(|&b| (32..=1024).contains(&b) && b % 32 == 0)
}

fn read(var: impl Fn(&str) -> Option<String>) -> Knobs {
    let count = |name: &str| {
        var(name)
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n >= 1)
    };
    Knobs {
        block: var("RUCUDA_EW_BLOCK")
            .and_then(|v| block_size(&v))
            .unwrap_or(DEFAULT_BLOCK),
        items: count("RUCUDA_EW_ITEMS").unwrap_or(1),
        small_block: var("RUCUDA_EW_SMALL_BLOCK").and_then(|v| block_size(&v)),
        reduce_work: count("RUCUDA_REDUCE_WORK_PER_THREAD").unwrap_or(DEFAULT_REDUCE_WORK),
    }
}

fn knobs() -> Knobs {
    static K: OnceLock<Knobs> = OnceLock::new();
    *K.get_or_init(|| read(|name| std::env::var(name).ok()))
}

/// The grid of a grid-stride element-wise launch over `work` items on a device with
/// `sms` multiprocessors, at most `blocks_per_sm` blocks each.
pub(crate) fn elementwise(work: usize, sms: u32, blocks_per_sm: u32) -> LaunchConfig {
    shape(knobs(), work, sms, blocks_per_sm)
}

fn shape(k: Knobs, work: usize, sms: u32, blocks_per_sm: u32) -> LaunchConfig {
    let per_block = |block: u32| block as usize * k.items;
    let max_blocks = sms.max(1).saturating_mul(blocks_per_sm.max(1)) as usize;
    let mut block = k.block;
    if let Some(small) = k.small_block {
        if work.div_ceil(per_block(block)) < sms as usize {
            block = small;
        }
    }
    let blocks = work.div_ceil(per_block(block)).clamp(1, max_blocks) as u32;
    LaunchConfig::linear(blocks, block)
}

/// Items each thread of a reduction's first stage folds before the grid grows.
pub(crate) fn reduce_work_per_thread() -> usize {
    knobs().reduce_work
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(c: LaunchConfig) -> (u32, u32) {
        (c.grid.0, c.block.0)
    }

    #[test]
    fn defaults_keep_one_item_per_thread_and_knobs_change_it() {
        let d = read(|_| None);
        assert_eq!(
            d,
            Knobs {
                block: 256,
                items: 1,
                small_block: None,
                reduce_work: 4
            }
        );
        assert_eq!(grid(shape(d, 4096, 132, 16)), (16, 256));
        assert_eq!(grid(shape(d, 1, 132, 16)), (1, 256));
        assert_eq!(grid(shape(d, 1 << 30, 132, 16)), (132 * 16, 256));
        let k = read(|n| match n {
            "RUCUDA_EW_BLOCK" => Some("128".into()),
            "RUCUDA_EW_ITEMS" => Some("4".into()),
            "RUCUDA_EW_SMALL_BLOCK" => Some("64".into()),
            "RUCUDA_REDUCE_WORK_PER_THREAD" => Some("16".into()),
            _ => None,
        });
        assert_eq!(
            (k.block, k.items, k.small_block, k.reduce_work),
            (128, 4, Some(64), 16)
        );
        // 4096 items: 8 blocks of 128 x 4 is under 132 multiprocessors: 64-thread blocks.
        assert_eq!(grid(shape(k, 4096, 132, 16)), (16, 64));
        assert_eq!(grid(shape(k, 1 << 20, 132, 16)), (2048, 128));
        let bad = read(|n| (n == "RUCUDA_EW_BLOCK").then(|| "100".into()));
        assert_eq!(bad.block, 256);
    }
}
