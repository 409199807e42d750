//! The shape of an axis reduction, normalized for the kernels (pure host code):
//!
//! - [`resolve_axes`]: NumPy's axis list (negative axes count from the end, duplicates
//!   and out-of-range axes refused) as a mask.
//! - [`normalize`]: kept axes in output (C) order and reduced axes, with length-1 axes
//!   dropped and neighbours merged where the input's strides allow (kept axes in their
//!   order; reduced axes first sorted by decreasing stride, unless the operation depends
//!   on the elements' order). A C-contiguous `(a, b)` reduced over axis 1 becomes one
//!   kept axis of stride `b` and one reduced axis of stride 1; over axis 0, one reduced
//!   axis of stride `b` and one kept axis of stride 1.
//! - [`schedule`]: which kernel (a warp per output over a contiguous reduced axis, or a
//!   thread per output with adjacent threads on adjacent outputs) and how many chunks to
//!   split the reduced elements into so that the device is full, from its size.

use crate::error::{ArrayError, Result};

/// Most kept and most reduced axes the kernels take after merging (`RUCUDA_MAXD`).
pub(crate) const MAXD: usize = 8;

/// Threads per block of every axis kernel.
pub(crate) const BLOCK: u32 = 256;

/// An axis: (length, stride in elements).
pub(crate) type Axis = (usize, isize);

/// A normalized reduction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Kept axes, output order (empty: one output).
    pub kept: Vec<Axis>,
    /// Reduced axes, iteration order (never empty: a single `(1, 0)` when nothing is
    /// reduced).
    pub reduced: Vec<Axis>,
    /// Number of outputs.
    pub nout: usize,
    /// Elements reduced into each output.
    pub len: usize,
    /// The result's shape.
    pub out_shape: Vec<usize>,
}

/// The mask of reduced axes of an `ndim`-dimensional array.
pub(crate) fn resolve_axes(axes: &[isize], ndim: usize) -> Result<Vec<bool>> {
    let mut mask = vec![false; ndim];
    for &a in axes {
        let k = crate::layout::resolve_axis(a, ndim)?;
        if mask[k] {
            return Err(ArrayError::InvalidArgument(format!(
                "axis {a} is given twice in {axes:?} (NumPy: duplicate value in 'axis')"
            )));
        }
        mask[k] = true;
    }
    Ok(mask)
}

/// Merges neighbours `(n0, s0), (n1, s1)` into `(n0 * n1, s1)` where `s0 == n1 * s1`.
fn merge(axes: Vec<Axis>) -> Vec<Axis> {
    let mut out: Vec<Axis> = Vec::with_capacity(axes.len());
    for (n, s) in axes {
        match out.last_mut() {
            Some(last) if last.1 == s * n as isize => *last = (last.0 * n, s),
            _ => out.push((n, s)),
        }
    }
    out
}

/// Normalizes the reduction of an array of `shape` and `strides` over the axes of
/// `mask`; `ordered`: the reduced axes keep their order (argmax/argmin).
pub(crate) fn normalize(
    shape: &[usize],
    strides: &[isize],
    mask: &[bool],
    keepdims: bool,
    ordered: bool,
) -> Plan {
    let out_shape: Vec<usize> = shape
        .iter()
        .zip(mask)
        .filter_map(|(&n, &r)| match (r, keepdims) {
            (false, _) => Some(n),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    let pick = |reduced: bool| -> Vec<Axis> {
        shape
            .iter()
            .zip(strides)
            .zip(mask)
            .filter(|&((&n, _), &r)| r == reduced && n != 1)
            .map(|((&n, &s), _)| (n, s))
            .collect()
    };
    let kept = pick(false);
    let mut reduced = pick(true);
    let nout = kept.iter().map(|a| a.0).product();
    let len = reduced.iter().map(|a| a.0).product();
    let kept = merge(kept);
    if !ordered {
        // Stable: equal strides (broadcast axes) keep their order.
        reduced.sort_by_key(|a| std::cmp::Reverse(a.1.unsigned_abs()));
    }
    let mut reduced = merge(reduced);
    if reduced.is_empty() {
        reduced.push((1, 0));
    }
    Plan {
        kept,
        reduced,
        nout,
        len,
        out_shape,
    }
}

impl Plan {
    /// True when the kernels take it (at most [`MAXD`] axes of each kind after merging).
    pub(crate) fn fits(&self) -> bool {
        self.kept.len() <= MAXD && self.reduced.len() <= MAXD
    }

    /// The kernels' `rucuda_geometry`: kept shape and strides, reduced shape and strides
    /// (each `MAXD` long), then kn, rn, nout, len, chunk, splits.
    pub(crate) fn geometry(&self, s: &Schedule) -> Result<[i64; 4 * MAXD + 6]> {
        let mut g = [0i64; 4 * MAXD + 6];
        let big = |v: usize| {
            i64::try_from(v).map_err(|_| {
                ArrayError::InvalidArgument(format!("axis reduction: {v} does not fit in 64 bits"))
            })
        };
        for (d, &(n, st)) in self.kept.iter().enumerate() {
            g[d] = big(n)?;
            g[MAXD + d] = st as i64;
        }
        for (d, &(n, st)) in self.reduced.iter().enumerate() {
            g[2 * MAXD + d] = big(n)?;
            g[3 * MAXD + d] = st as i64;
        }
        let tail = 4 * MAXD;
        g[tail] = self.kept.len() as i64;
        g[tail + 1] = self.reduced.len() as i64;
        g[tail + 2] = big(self.nout)?;
        g[tail + 3] = big(self.len)?;
        g[tail + 4] = big(s.chunk)?;
        g[tail + 5] = big(s.splits)?;
        Ok(g)
    }
}

/// Which kernel runs a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A warp per (output, chunk).
    Rows,
    /// A thread per (output, chunk).
    Cols,
}

/// The launch of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Schedule {
    pub kind: Kind,
    /// Chunks the reduced elements of each output are split into (1: no merge pass).
    pub splits: usize,
    /// Reduced elements per chunk.
    pub chunk: usize,
    /// Blocks of [`BLOCK`] threads (a grid-stride loop covers the rest).
    pub grid: u32,
}

/// The device's size, as the schedule needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DeviceFill {
    /// Multiprocessors.
    pub sms: u32,
    /// Resident blocks of [`BLOCK`] threads per multiprocessor, per kernel kind.
    pub rows_per_sm: u32,
    /// As `rows_per_sm` for the thread-per-output kernel.
    pub cols_per_sm: u32,
}

/// Shortest reduced axis a warp per output is used for.
const MIN_ROW: usize = 64;
/// Shortest chunk of a split (elements) per kernel kind: partials stay a few percent of
/// the traffic at most.
const MIN_CHUNK_ROWS: usize = 2048;
const MIN_CHUNK_COLS: usize = 128;
/// The share of the resident work units (warps for rows, threads for cols) a split aims
/// to keep busy over the whole run: the grid-stride loop runs `ceil(units / resident)`
/// rounds, and a last round with few units leaves the rest of the device idle.
const BALANCE: f64 = 0.95;
/// Rounds past which the last round's imbalance no longer matters.
const ENOUGH_ROUNDS: usize = 32;
/// Most chunks tried.
const MAX_SPLITS: usize = 1 << 16;

/// The fewest chunks (and their length, a multiple of `round_to`) that keep at least
/// [`BALANCE`] of `resident` units busy, or the best balance found.
fn split(
    nout: usize,
    len: usize,
    resident: usize,
    min_chunk: usize,
    round_to: usize,
) -> (usize, usize) {
    let resident = resident.max(1);
    let chunk_of = |s: usize| len.div_ceil(s).max(1).div_ceil(round_to) * round_to;
    let most = (len / min_chunk).clamp(1, MAX_SPLITS);
    let mut best = (0.0f64, 1usize, chunk_of(1));
    for s in 1..=most {
        let chunk = chunk_of(s);
        let splits = len.div_ceil(chunk).max(1);
        let units = nout.saturating_mul(splits);
        let rounds = units.div_ceil(resident);
        let busy = units as f64 / (rounds as f64 * resident as f64);
        if busy >= BALANCE || rounds >= ENOUGH_ROUNDS {
            return (splits, chunk);
        }
        if busy > best.0 {
            best = (busy, splits, chunk);
        }
    }
    (best.1, best.2)
}

/// Picks the kernel and the split of `plan` on a device of `fill`.
pub(crate) fn schedule(plan: &Plan, fill: DeviceFill) -> Schedule {
    let inner_reduced = plan.reduced.last().map_or(0, |a| a.1.unsigned_abs());
    let inner_kept = plan.kept.last().map_or(usize::MAX, |a| a.1.unsigned_abs());
    let kind = if plan.len >= MIN_ROW && (inner_reduced == 1 || inner_reduced < inner_kept) {
        Kind::Rows
    } else {
        Kind::Cols
    };
    let sms = fill.sms.max(1) as usize;
    let (blocks_cap, per_block, min_chunk, round_to) = match kind {
        // Chunks of whole 16-byte vectors (128 elements covers every element size).
        Kind::Rows => (
            sms * fill.rows_per_sm.max(1) as usize,
            BLOCK as usize / 32,
            MIN_CHUNK_ROWS,
            128,
        ),
        Kind::Cols => (
            sms * fill.cols_per_sm.max(1) as usize,
            BLOCK as usize,
            MIN_CHUNK_COLS,
            1,
        ),
    };
    let nout = plan.nout.max(1);
    let (splits, chunk) = split(nout, plan.len, blocks_cap * per_block, min_chunk, round_to);
    let units = nout.saturating_mul(splits);
    let grid = units
        .div_ceil(per_block)
        .clamp(1, blocks_cap.min(u32::MAX as usize)) as u32;
    Schedule {
        kind,
        splits,
        chunk,
        grid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c_strides(shape: &[usize]) -> Vec<isize> {
        let mut s = vec![0isize; shape.len()];
        let mut acc = 1isize;
        for d in (0..shape.len()).rev() {
            s[d] = acc;
            acc *= shape[d] as isize;
        }
        s
    }

    const H100: DeviceFill = DeviceFill {
        sms: 132,
        rows_per_sm: 8,
        cols_per_sm: 8,
    };

    #[test]
    fn axes_resolve_as_numpy() {
        assert_eq!(resolve_axes(&[-1], 3).unwrap(), vec![false, false, true]);
        assert_eq!(resolve_axes(&[0, -1], 2).unwrap(), vec![true, true]);
        assert_eq!(resolve_axes(&[], 2).unwrap(), vec![false, false]);
        assert!(resolve_axes(&[2], 2).is_err());
        assert!(resolve_axes(&[-3], 2).is_err());
        assert!(resolve_axes(&[1, -1], 2).is_err());
        assert!(resolve_axes(&[0], 0).is_err());
    }

    #[test]
    fn c_order_rows_and_columns() {
        let shape = [16384, 16384];
        let p = normalize(&shape, &c_strides(&shape), &[false, true], false, false);
        assert_eq!(p.kept, vec![(16384, 16384)]);
        assert_eq!(p.reduced, vec![(16384, 1)]);
        assert_eq!(p.out_shape, vec![16384]);
        let s = schedule(&p, H100);
        assert_eq!(s.kind, Kind::Rows);
        assert!(s.splits * s.chunk >= 16384 && s.chunk % 128 == 0);
        // 16384 rows on 8448 resident warps are 1.94 rounds: split until at least 95%
        // of the warps are busy over all rounds.
        let units = 16384 * s.splits;
        let rounds = units.div_ceil(8448);
        assert!(units * 100 >= rounds * 8448 * 95, "{s:?}");
        let p = normalize(&shape, &c_strides(&shape), &[true, false], true, false);
        assert_eq!(p.kept, vec![(16384, 1)]);
        assert_eq!(p.reduced, vec![(16384, 16384)]);
        assert_eq!(p.out_shape, vec![1, 16384]);
        let s = schedule(&p, H100);
        assert_eq!(s.kind, Kind::Cols);
        // One round of the resident threads, at least 95% of them busy.
        let resident = 132 * 8 * 256;
        assert!(
            p.nout * s.splits <= resident && p.nout * s.splits * 100 >= resident * 95,
            "{s:?}"
        );
        assert!(s.splits * s.chunk >= 16384 && (s.splits - 1) * s.chunk < 16384);
    }

    #[test]
    fn merging_and_dropping() {
        // (2, 3, 4, 5) C order over axes 1 and 2: one reduced axis of 12, stride 5.
        let shape = [2, 3, 4, 5];
        let p = normalize(
            &shape,
            &c_strides(&shape),
            &[false, true, true, false],
            false,
            false,
        );
        assert_eq!(p.kept, vec![(2, 60), (5, 1)]);
        assert_eq!(p.reduced, vec![(12, 5)]);
        assert_eq!((p.nout, p.len), (10, 12));
        assert_eq!(p.out_shape, vec![2, 5]);
        // Over axes 0 and 2: kept 3 and 5 (stride 20 and 1) do not merge.
        let p = normalize(
            &shape,
            &c_strides(&shape),
            &[true, false, true, false],
            true,
            false,
        );
        assert_eq!(p.kept, vec![(3, 20), (5, 1)]);
        assert_eq!(p.reduced, vec![(2, 60), (4, 5)]);
        assert_eq!(p.out_shape, vec![1, 3, 1, 5]);
        // Length-1 axes vanish; nothing reduced leaves a (1, 0) axis.
        let p = normalize(&[1, 7, 1], &[7, 1, 1], &[true, false, false], false, false);
        assert_eq!(p.kept, vec![(7, 1)]);
        assert_eq!(p.reduced, vec![(1, 0)]);
        assert_eq!((p.nout, p.len), (7, 1));
        // Everything reduced: no kept axis, one output.
        let p = normalize(&shape, &c_strides(&shape), &[true; 4], false, false);
        assert!(p.kept.is_empty());
        assert_eq!(p.reduced, vec![(120, 1)]);
        assert_eq!((p.nout, p.out_shape.len()), (1, 0));
    }

    #[test]
    fn f_order_is_a_transpose() {
        // (6, 7) F order: strides (1, 6). Axis 0 is the contiguous one.
        let p = normalize(&[6, 70], &[1, 6], &[true, false], false, false);
        assert_eq!(p.reduced, vec![(6, 1)]);
        assert_eq!(p.kept, vec![(70, 6)]);
        assert_eq!(
            schedule(&p, H100).kind,
            Kind::Cols,
            "6 elements: thread per output"
        );
        let p = normalize(&[600, 70], &[1, 600], &[true, false], false, false);
        assert_eq!(schedule(&p, H100).kind, Kind::Rows);
        let p = normalize(&[600, 70], &[1, 600], &[false, true], false, false);
        assert_eq!(p.kept, vec![(600, 1)]);
        assert_eq!(schedule(&p, H100).kind, Kind::Cols);
        // Reduced axes sorted by stride, then merged: F order over both axes is one axis.
        let p = normalize(&[6, 7], &[1, 6], &[true, true], false, false);
        assert_eq!(p.reduced, vec![(42, 1)]);
        // ... unless the order matters.
        let p = normalize(&[6, 7], &[1, 6], &[true, true], false, true);
        assert_eq!(p.reduced, vec![(6, 1), (7, 6)]);
    }

    #[test]
    fn empty_and_reversed() {
        let p = normalize(&[0, 5], &[5, 1], &[true, false], false, false);
        assert_eq!((p.nout, p.len), (5, 0));
        let s = schedule(&p, H100);
        assert_eq!((s.splits, s.chunk), (1, 1));
        let p = normalize(&[4, 5], &[-5, 1], &[true, false], false, true);
        assert_eq!(p.reduced, vec![(4, -5)]);
        let p = normalize(&[3, 0], &[1, 1], &[true, false], false, false);
        assert_eq!(p.nout, 0);
    }

    #[test]
    fn splits_balance_the_rounds() {
        // Many outputs: no split.
        assert_eq!(split(1 << 24, 100, 1000, 64, 1), (1, 100));
        // An empty reduction: one chunk of one.
        assert_eq!(split(10, 0, 1000, 64, 1), (1, 1));
        // 3 outputs of 10^6 on 1000 units: about 333 chunks each.
        let (s, c) = split(3, 1_000_000, 1000, 64, 1);
        assert!(
            3 * s <= 1000 && 3 * s >= 950 && s * c >= 1_000_000,
            "{s} {c}"
        );
        // Too short to split further: the best balance within the minimum chunk.
        let (s, c) = split(3, 640, 1000, 64, 1);
        assert_eq!((s, c), (10, 64));
    }

    #[test]
    fn geometry_layout() {
        let shape = [3, 4];
        let p = normalize(&shape, &c_strides(&shape), &[false, true], false, false);
        let s = schedule(&p, H100);
        let g = p.geometry(&s).unwrap();
        assert_eq!(g[0], 3);
        assert_eq!(g[MAXD], 4);
        assert_eq!(g[2 * MAXD], 4);
        assert_eq!(g[3 * MAXD], 1);
        assert_eq!(
            &g[4 * MAXD..],
            &[1, 1, 3, 4, s.chunk as i64, s.splits as i64]
        );
    }

    #[test]
    fn small_outputs_split_long_reductions() {
        let p = normalize(&[4, 1 << 24], &[1 << 24, 1], &[false, true], false, false);
        let s = schedule(&p, H100);
        assert_eq!(s.kind, Kind::Rows);
        assert!(s.splits > 100, "{s:?}");
        assert!(s.grid as usize <= 132 * 8);
        let p = normalize(&[1000, 3], &[3, 1], &[false, true], false, false);
        let s = schedule(&p, H100);
        assert_eq!((s.kind, s.splits), (Kind::Cols, 1));
    }
}
