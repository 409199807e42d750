//! GPU tests of sorting and its family against std sorting on the host: every key type,
//! many sizes (one element, odd sizes, tile boundaries, both the one-block and the
//! onesweep paths), distributions (uniform, all equal, sorted, reversed, few distinct,
//! NaNs, infinities and signed zeros), rows of 2-D arrays, other axes and strided views,
//! stability checked through positions and pairs, descending order; more than 2^31
//! elements with `RUCUDA_TEST_SORT_HUGE=1`. Fresh random inputs per run (replay with
//! `RUCUDA_TEST_SEED`).

#[path = "../common/mod.rs"]
mod common;

mod family;
mod keys;
mod select;
mod sorting;
mod support;
mod topk;
