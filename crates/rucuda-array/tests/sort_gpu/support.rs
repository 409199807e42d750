//! Host references: stable sorts of each row, axis moves of C-ordered data, comparisons.

use crate::keys::{cmp_order, TestKey};

/// The stable sort of each row of `row_len` keys: the keys and their positions.
pub fn reference<T: TestKey>(data: &[T], row_len: usize, descending: bool) -> (Vec<T>, Vec<i64>) {
    let mut keys = Vec::with_capacity(data.len());
    let mut pos = Vec::with_capacity(data.len());
    if row_len == 0 {
        return (keys, pos);
    }
    for row in data.chunks(row_len) {
        let mut idx: Vec<usize> = (0..row.len()).collect();
        idx.sort_by(|&a, &b| cmp_order(&row[a], &row[b], descending));
        keys.extend(idx.iter().map(|&i| row[i]));
        pos.extend(idx.iter().map(|&i| i as i64));
    }
    (keys, pos)
}

/// Asserts that `got` holds `want`'s keys (NaNs alike, -0.0 and +0.0 told apart).
pub fn assert_keys<T: TestKey>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(i) = (0..got.len()).find(|&i| !got[i].same(&want[i])) {
        let lo = i.saturating_sub(3);
        let hi = (i + 4).min(got.len());
        panic!(
            "{what}: first difference at {i}: got {:?}, want {:?}",
            &got[lo..hi],
            &want[lo..hi]
        );
    }
}

/// Asserts exact equality of positions.
pub fn assert_positions(got: &[i64], want: &[i64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        let lo = i.saturating_sub(3);
        let hi = (i + 4).min(got.len());
        panic!(
            "{what}: first position difference at {i}: got {:?}, want {:?}",
            &got[lo..hi],
            &want[lo..hi]
        );
    }
}

/// Row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * shape[k + 1];
    }
    s
}

/// C-ordered `data` of `shape` with axis `ax` moved last (the other axes in order), and
/// the new shape.
pub fn axis_to_last<T: Copy>(data: &[T], shape: &[usize], ax: usize) -> (Vec<T>, Vec<usize>) {
    let mut perm: Vec<usize> = (0..shape.len()).filter(|&k| k != ax).collect();
    perm.push(ax);
    let new_shape: Vec<usize> = perm.iter().map(|&k| shape[k]).collect();
    let old = strides(shape);
    let mut out = Vec::with_capacity(data.len());
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..data.len() {
        let off: usize = idx.iter().zip(&perm).map(|(&i, &k)| i * old[k]).sum();
        out.push(data[off]);
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < new_shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    (out, new_shape)
}

/// The inverse of [`axis_to_last`]: data of `moved_shape` (axis `ax` of `shape` last) back
/// in `shape`'s C order.
pub fn last_to_axis<T: Copy + Default>(data: &[T], shape: &[usize], ax: usize) -> Vec<T> {
    let mut perm: Vec<usize> = (0..shape.len()).filter(|&k| k != ax).collect();
    perm.push(ax);
    let new_shape: Vec<usize> = perm.iter().map(|&k| shape[k]).collect();
    let old = strides(shape);
    let mut out = vec![T::default(); data.len()];
    let mut idx = vec![0usize; shape.len()];
    for v in data {
        let off: usize = idx.iter().zip(&perm).map(|(&i, &k)| i * old[k]).sum();
        out[off] = *v;
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < new_shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}
