//! Ranged and sliced calls: Python's `range` and `slice.indices` semantics.

use super::{range_count, resolve_slice};

#[test]
fn range_counts_follow_python() {
    assert_eq!(range_count(0, 10, 1), 10);
    assert_eq!(range_count(0, 10, 3), 4);
    assert_eq!(range_count(7, -1, -1), 8);
    assert_eq!(range_count(7, 0, -3), 3);
    assert_eq!(range_count(5, 3, 1), 0);
    assert_eq!(range_count(1000, -1, 1), 0);
}

#[test]
fn slices_resolve_as_python_slice_indices() {
    // slice(-3, None, 1).indices(6) == (3, 6, 1): indices 3, 4, 5.
    assert_eq!(resolve_slice(Some(-3), None, 1, 6).unwrap(), (3, 3, 1));
    // slice(None, None, -1).indices(5): 4, 3, 2, 1, 0.
    assert_eq!(resolve_slice(None, None, -1, 5).unwrap(), (4, 5, -1));
    // slice(1000, -1, 1).indices(10): start clamped to 10, stop 9: empty.
    assert_eq!(resolve_slice(Some(1000), Some(-1), 1, 10).unwrap().1, 0);
    // slice(0, -1, 1).indices(10): 0..9.
    assert_eq!(resolve_slice(Some(0), Some(-1), 1, 10).unwrap(), (0, 9, 1));
    // slice(-100, 100, 2).indices(7): 0, 2, 4, 6.
    assert_eq!(
        resolve_slice(Some(-100), Some(100), 2, 7).unwrap(),
        (0, 4, 2)
    );
    // slice(7, -1, -1).indices(8): -1 counts from the end, so 7..7: empty (Python's
    // gotcha; call_range(7, -1, -1) is the walk down to 0).
    assert_eq!(resolve_slice(Some(7), Some(-1), -1, 8).unwrap().1, 0);
    assert_eq!(resolve_slice(None, None, 1, 0).unwrap().1, 0);
    assert!(resolve_slice(None, None, 0, 3).is_err());
}
