//! Comparing a GPU result with a CPU reference, element by element, in `f64`.

use std::fmt;

/// Where two slices first disagree, and how many elements disagree in all.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// Index of the first element out of tolerance (or the shorter length, when the
    /// lengths differ).
    pub index: usize,
    /// The value computed, as `f64` (NaN when the index is past the end).
    pub got: f64,
    /// The value expected, as `f64` (NaN when the index is past the end).
    pub want: f64,
    /// How many elements are out of tolerance.
    pub count: usize,
    /// Lengths of the two slices: (got, want).
    pub lengths: (usize, usize),
    /// The relative tolerance the comparison used.
    pub rel_tol: f64,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (got_len, want_len) = self.lengths;
        if got_len != want_len {
            return write!(f, "lengths differ: got {got_len} elements, want {want_len}");
        }
        write!(
            f,
            "first mismatch at index {}: got {:e}, want {:e} (|diff| {:e} > tolerance {:e}); \
             {} of {} elements differ",
            self.index,
            self.got,
            self.want,
            (self.got - self.want).abs(),
            tolerance(self.want, self.rel_tol),
            self.count,
            want_len
        )
    }
}

impl std::error::Error for Mismatch {}

/// The allowed difference around `want`: relative above magnitude 1, absolute below it.
fn tolerance(want: f64, rel_tol: f64) -> f64 {
    rel_tol * want.abs().max(1.0)
}

fn close(got: f64, want: f64, rel_tol: f64) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if got.is_infinite() || want.is_infinite() {
        return got == want;
    }
    (got - want).abs() <= tolerance(want, rel_tol)
}

/// Compares `got` with `want` element by element in `f64`.
///
/// An element passes when `|got - want| <= rel_tol * max(|want|, 1)`: relative for
/// values above 1 in magnitude, absolute below (so zeros compare sensibly). NaN equals
/// NaN (a poisoned element against a finite reference fails); infinities must match.
/// Integers compare exactly with `rel_tol = 0.0` as long as they fit in 53 bits.
///
/// ```
/// use rucuda_testkit::check_close;
/// assert!(check_close(&[1.0f32, 2.0], &[1.0, 2.0000001], 1e-6).is_ok());
/// let err = check_close(&[1.0f32, 2.5], &[1.0, 2.0], 1e-6).unwrap_err();
/// assert_eq!(err.index, 1);
/// ```
pub fn check_close<T: Copy + Into<f64>>(
    got: &[T],
    want: &[T],
    rel_tol: f64,
) -> Result<(), Mismatch> {
    if got.len() != want.len() {
        return Err(Mismatch {
            index: got.len().min(want.len()),
            got: f64::NAN,
            want: f64::NAN,
            count: got.len().abs_diff(want.len()),
            lengths: (got.len(), want.len()),
            rel_tol,
        });
    }
    let mut first: Option<(usize, f64, f64)> = None;
    let mut count = 0;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let (g, w) = (g.into(), w.into());
        if !close(g, w, rel_tol) {
            count += 1;
            first.get_or_insert((i, g, w));
        }
    }
    match first {
        None => Ok(()),
        Some((index, got_value, want_value)) => Err(Mismatch {
            index,
            got: got_value,
            want: want_value,
            count,
            lengths: (got.len(), want.len()),
            rel_tol,
        }),
    }
}

/// Like [`check_close`], but panics with the [`Mismatch`] message (it is an assertion).
///
/// # Panics
/// When the lengths differ or any element is out of tolerance; the message names the
/// first bad index, both values and how many elements differ.
///
/// ```
/// rucuda_testkit::assert_close(&[1.0f64, -3.0], &[1.0, -3.0], 0.0);
/// ```
#[track_caller]
pub fn assert_close<T: Copy + Into<f64>>(got: &[T], want: &[T], rel_tol: f64) {
    if let Err(mismatch) = check_close(got, want, rel_tol) {
        panic!("assert_close failed: {mismatch}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerances_are_relative_above_one_absolute_below() {
        assert!(check_close(&[1000.0f64], &[1000.5], 1e-3).is_ok());
        assert!(check_close(&[1000.0f64], &[1002.0], 1e-3).is_err());
        assert!(check_close(&[0.0005f64], &[0.0], 1e-3).is_ok());
        assert!(check_close(&[0.002f64], &[0.0], 1e-3).is_err());
    }

    #[test]
    fn nan_and_infinity_rules() {
        assert!(check_close(&[f32::NAN], &[f32::NAN], 0.0).is_ok());
        assert!(check_close(&[f32::NAN], &[1.0], 0.5).is_err());
        assert!(check_close(&[f64::INFINITY], &[f64::INFINITY], 0.0).is_ok());
        assert!(check_close(&[f64::INFINITY], &[f64::NEG_INFINITY], 1.0).is_err());
    }

    #[test]
    fn mismatch_names_the_first_bad_index_and_counts() {
        let err = check_close(&[1i32, 5, 3, 9], &[1, 2, 3, 4], 0.0).unwrap_err();
        assert_eq!((err.index, err.count), (1, 2));
        let msg = err.to_string();
        assert!(msg.contains("index 1") && msg.contains("2 of 4"), "{msg}");
        let err = check_close(&[1.0f32], &[1.0, 2.0], 0.0).unwrap_err();
        assert!(err.to_string().contains("lengths differ"), "{err}");
    }

    #[test]
    #[should_panic(expected = "first mismatch at index 0")]
    fn assert_close_panics_with_the_message() {
        assert_close(&[2.0f32], &[1.0], 1e-6);
    }
}
