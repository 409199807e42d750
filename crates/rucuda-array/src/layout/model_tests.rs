//! Property-style checks of every layout operation against a plain CPU model: many random
//! shapes and views, each compared element by element with multi-index arithmetic
//! written independently of the implementation.

use super::*;
use rucuda_testkit::TestRng;

/// Random cases per property; fewer under Miri (every case is interpreted there), so
/// `cargo miri test` of the layout logic fits in CI.
const CASES: usize = if cfg!(miri) { 40 } else { 3000 };

/// Every multi-index of `shape` in row-major order.
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &d in shape {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..d).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    out
}

/// The buffer element of `index` computed from scratch.
fn at(l: &Layout, index: &[usize]) -> isize {
    l.offset() as isize
        + index
            .iter()
            .zip(l.strides())
            .map(|(&i, &s)| i as isize * s)
            .sum::<isize>()
}

/// The buffer elements of `l` in row-major order, from scratch.
fn elements(l: &Layout) -> Vec<isize> {
    indices(l.shape()).iter().map(|ix| at(l, ix)).collect()
}

/// Python's `range(len)[start:stop:step]`, by walking.
fn naive_slice(len: usize, start: Option<isize>, stop: Option<isize>, step: isize) -> Vec<usize> {
    let n = len as isize;
    let norm = |v: isize| if v < 0 { v + n } else { v };
    let mut out = vec![];
    if step > 0 {
        let mut i = start.map_or(0, norm).clamp(0, n);
        let e = stop.map_or(n, norm).clamp(0, n);
        while i < e {
            out.push(i as usize);
            i += step;
        }
    } else {
        let mut i = start.map_or(n - 1, norm).clamp(-1, n - 1);
        let e = stop.map_or(-1, norm).clamp(-1, n - 1);
        while i > e {
            out.push(i as usize);
            i += step;
        }
    }
    out
}

fn random_shape(rng: &mut TestRng) -> Vec<usize> {
    let ndim = rng.range(0, 4) as usize;
    (0..ndim)
        .map(|_| {
            if rng.chance(0.04) {
                0
            } else {
                rng.range(1, 5) as usize
            }
        })
        .collect()
}

fn random_range(rng: &mut TestRng) -> (Option<isize>, Option<isize>, isize) {
    let bound = |rng: &mut TestRng| {
        if rng.chance(0.3) {
            None
        } else {
            Some(rng.range(-7, 7) as isize)
        }
    };
    let step = loop {
        let s = rng.range(-3, 3) as isize;
        if s != 0 {
            break s;
        }
    };
    (bound(rng), bound(rng), step)
}

/// A random view of a C-contiguous base: slices, a permutation, maybe new axes.
/// Returns the view and the base buffer length.
fn random_view(rng: &mut TestRng) -> (Layout, usize) {
    let base = Layout::c_contiguous(&random_shape(rng)).unwrap();
    let buffer_len = base.len();
    let mut l = base;
    if rng.chance(0.7) {
        let args: Vec<SliceArg> = (0..l.ndim())
            .map(|_| {
                let (a, b, s) = random_range(rng);
                SliceArg::stepped(a, b, s)
            })
            .collect();
        l = l.slice(&args).unwrap();
    }
    if rng.chance(0.5) && l.ndim() > 1 {
        let mut axes: Vec<usize> = (0..l.ndim()).collect();
        for k in (1..axes.len()).rev() {
            let j = rng.range(0, k as i64) as usize;
            axes.swap(k, j);
        }
        l = l.permute(&axes).unwrap();
    }
    if rng.chance(0.2) {
        let at = rng.range(0, l.ndim() as i64) as isize;
        l = l.insert_axis(at).unwrap();
    }
    (l, buffer_len)
}

#[test]
fn element_offsets_match_the_model_and_stay_in_bounds() {
    let mut rng = TestRng::new(1);
    for _ in 0..CASES {
        let (l, buffer_len) = random_view(&mut rng);
        let model = elements(&l);
        let got: Vec<isize> = l.element_offsets().map(|o| o as isize).collect();
        assert_eq!(got, model, "{l:?}");
        assert_eq!(got.len(), l.len());
        l.check_within(buffer_len).unwrap();
        if let Some((lo, hi)) = l.span() {
            assert_eq!(lo as isize, *model.iter().min().unwrap());
            assert_eq!(hi as isize, *model.iter().max().unwrap());
        }
        for (ix, &want) in indices(l.shape()).iter().zip(&model) {
            assert_eq!(l.offset_of(ix), Some(want as usize));
        }
    }
}

#[test]
fn slicing_matches_naive_index_lists() {
    let mut rng = TestRng::new(2);
    for _ in 0..CASES {
        let (l, _) = random_view(&mut rng);
        let mut args = vec![];
        let mut per_axis: Vec<Vec<usize>> = vec![];
        let mut keep: Vec<bool> = vec![];
        for k in 0..l.ndim() {
            let len = l.shape()[k];
            if len > 0 && rng.chance(0.25) {
                let i = rng.range(-(len as i64), len as i64 - 1) as isize;
                args.push(SliceArg::index(i));
                let r = if i < 0 { i + len as isize } else { i };
                per_axis.push(vec![r as usize]);
                keep.push(false);
            } else {
                let (a, b, s) = random_range(&mut rng);
                args.push(SliceArg::stepped(a, b, s));
                per_axis.push(naive_slice(len, a, b, s));
                keep.push(true);
            }
        }
        let v = l.slice(&args).unwrap();
        let want_shape: Vec<usize> = per_axis
            .iter()
            .zip(&keep)
            .filter(|(_, &k)| k)
            .map(|(p, _)| p.len())
            .collect();
        assert_eq!(v.shape(), want_shape.as_slice(), "{l:?} {args:?}");
        let selected: Vec<Vec<usize>> = indices(&per_axis.iter().map(Vec::len).collect::<Vec<_>>());
        let want: Vec<isize> = selected
            .iter()
            .map(|ix| {
                let orig: Vec<usize> = ix
                    .iter()
                    .enumerate()
                    .map(|(k, &j)| per_axis[k][j])
                    .collect();
                at(&l, &orig)
            })
            .collect();
        assert_eq!(elements(&v), want, "{l:?} {args:?}");
    }
}

#[test]
fn permutations_and_transposes_move_indices() {
    let mut rng = TestRng::new(3);
    for _ in 0..CASES {
        let (l, _) = random_view(&mut rng);
        let t = l.transpose();
        for ix in indices(l.shape()) {
            let rev: Vec<usize> = ix.iter().rev().copied().collect();
            assert_eq!(at(&t, &rev), at(&l, &ix));
        }
        let mut axes: Vec<usize> = (0..l.ndim()).collect();
        axes.rotate_left(l.ndim().min(1));
        let p = l.permute(&axes).unwrap();
        for ix in indices(p.shape()) {
            let mut orig = vec![0; l.ndim()];
            for (k, &a) in axes.iter().enumerate() {
                orig[a] = ix[k];
            }
            assert_eq!(at(&p, &ix), at(&l, &orig));
        }
    }
}

#[test]
fn reshape_keeps_row_major_order_or_asks_for_a_copy() {
    let mut rng = TestRng::new(4);
    let mut views = 0;
    let mut copies = 0;
    for _ in 0..CASES {
        let (l, _) = random_view(&mut rng);
        // A random factorisation of the element count, with length-1 axes sprinkled in.
        let mut rest = l.len();
        let mut shape = vec![];
        if rest == 0 {
            shape = vec![0, rng.range(1, 3) as usize];
        } else {
            while rest > 1 {
                let divisors: Vec<usize> = (2..=rest).filter(|d| rest % d == 0).collect();
                let d = divisors[rng.range(0, divisors.len() as i64 - 1) as usize];
                shape.push(d);
                rest /= d;
                if rng.chance(0.2) {
                    shape.push(1);
                }
            }
        }
        let requested: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
        match l.reshape(&requested) {
            Ok(r) => {
                views += 1;
                assert_eq!(r.shape(), shape.as_slice());
                assert_eq!(elements(&r), elements(&l), "{l:?} -> {shape:?}");
            }
            Err(LayoutError::NeedsCopy { .. }) => {
                copies += 1;
                assert!(!l.is_c_contiguous(), "{l:?}");
            }
            Err(e) => panic!("{l:?} -> {shape:?}: {e}"),
        }
        let flat = l.ravel();
        if l.is_c_contiguous() {
            assert_eq!(elements(&flat.unwrap()), elements(&l));
        }
    }
    assert!(
        views > CASES / 3 && copies * 300 > CASES,
        "views {views}, copies {copies}"
    );
}

#[test]
fn reshape_views_of_strided_layouts() {
    // Every other row of a 6x4 matrix: rows can be split, the 4 columns merged with rows
    // only when contiguous.
    let l = Layout::c_contiguous(&[6, 4]).unwrap();
    let v = l.slice(&[SliceArg::stepped(None, None, 2)]).unwrap();
    let r = v.reshape(&[3, 2, 2]).unwrap();
    assert_eq!(r.strides(), &[8, 2, 1]);
    assert!(matches!(
        v.reshape(&[12]),
        Err(LayoutError::NeedsCopy { .. })
    ));
    let col = l.slice(&[SliceArg::All, SliceArg::index(1)]).unwrap();
    assert_eq!(col.reshape(&[2, 3]).unwrap().strides(), &[12, 4]);
    assert_eq!(col.reshape(&[1, 6, 1]).unwrap().shape(), &[1, 6, 1]);
    let e = l.reshape(&[5, -1]).unwrap_err();
    assert!(e.to_string().contains("24 elements"), "{e}");
    assert!(l.reshape(&[-1, -1]).is_err());
    assert!(l.reshape(&[-2, 12]).is_err());
}

#[test]
fn broadcasting_matches_the_model() {
    let mut rng = TestRng::new(5);
    for _ in 0..CASES {
        let (l, _) = random_view(&mut rng);
        // Target: maybe extra leading axes; each length-1 axis may stretch.
        let lead = rng.range(0, 2) as usize;
        let mut target: Vec<usize> = (0..lead).map(|_| rng.range(1, 3) as usize).collect();
        for &d in l.shape() {
            target.push(if d == 1 { rng.range(1, 4) as usize } else { d });
        }
        let b = l.broadcast_to(&target).unwrap();
        assert_eq!(
            broadcast_shapes(l.shape(), &target).unwrap(),
            target,
            "{l:?}"
        );
        for ix in indices(&target) {
            let orig: Vec<usize> = ix[lead..]
                .iter()
                .zip(l.shape())
                .map(|(&i, &d)| if d == 1 { 0 } else { i })
                .collect();
            assert_eq!(at(&b, &ix), at(&l, &orig));
        }
        // Stretching a non-1 axis fails, naming both shapes.
        if let Some(k) = l.shape().iter().position(|&d| d > 1) {
            let mut bad = l.shape().to_vec();
            bad[k] += 1;
            assert!(l.broadcast_to(&bad).is_err());
            let e = broadcast_shapes(l.shape(), &bad).unwrap_err();
            assert!(e.to_string().contains(&format!("{:?}", l.shape())));
        }
    }
}

#[test]
fn broadcast_shape_rules() {
    assert_eq!(broadcast_shapes(&[], &[3]).unwrap(), vec![3]);
    assert_eq!(broadcast_shapes(&[0], &[1]).unwrap(), vec![0]);
    assert!(broadcast_shapes(&[0], &[2]).is_err());
    assert_eq!(
        broadcast_shapes(&[5, 1, 4], &[3, 1]).unwrap(),
        vec![5, 3, 4]
    );
    match broadcast_shapes(&[2, 3], &[4, 3]).unwrap_err() {
        LayoutError::Broadcast {
            axis, len_a, len_b, ..
        } => assert_eq!((axis, len_a, len_b), (-2, 2, 4)),
        e => panic!("{e}"),
    }
    assert_eq!(broadcast_shapes_many(&[]).unwrap(), Vec::<usize>::new());
}

#[test]
fn contiguity_agrees_with_element_order() {
    let mut rng = TestRng::new(6);
    for _ in 0..CASES {
        let (l, _) = random_view(&mut rng);
        if l.is_empty() {
            assert!(l.is_c_contiguous() && l.is_f_contiguous());
            continue;
        }
        let el = elements(&l);
        let consecutive = el.windows(2).all(|w| w[1] == w[0] + 1);
        assert_eq!(l.is_c_contiguous(), consecutive, "{l:?}");
        let tel = elements(&l.transpose());
        let f_consecutive = tel.windows(2).all(|w| w[1] == w[0] + 1);
        assert_eq!(l.is_f_contiguous(), f_consecutive, "{l:?}");
    }
}

#[test]
fn coalesce_keeps_element_order() {
    let mut rng = TestRng::new(7);
    for _ in 0..CASES {
        let (a, _) = random_view(&mut rng);
        if a.is_empty() {
            continue;
        }
        let b = Layout::c_contiguous(a.shape()).unwrap();
        let (shape, strides) = Layout::coalesce(&[&a, &b]);
        assert!(shape.len() <= a.ndim());
        for (k, l) in [&a, &b].iter().enumerate() {
            let merged =
                Layout::from_parts(shape.clone(), strides[k].clone(), l.offset(), usize::MAX)
                    .unwrap();
            assert_eq!(elements(&merged), elements(l), "{a:?}");
        }
        if a.is_c_contiguous() {
            assert!(shape.len() <= 1, "{a:?} -> {shape:?}");
        }
    }
}

#[test]
fn squeeze_insert_flip_swap() {
    let l = Layout::c_contiguous(&[1, 3, 1, 2]).unwrap();
    assert_eq!(l.squeeze().shape(), &[3, 2]);
    assert_eq!(l.squeeze_axis(-2).unwrap().shape(), &[1, 3, 2]);
    assert!(matches!(
        l.squeeze_axis(1),
        Err(LayoutError::SqueezeNotOne { axis: 1, len: 3 })
    ));
    assert!(l.squeeze_axis(4).is_err());
    assert_eq!(l.insert_axis(4).unwrap().shape(), &[1, 3, 1, 2, 1]);
    assert!(l.insert_axis(6).is_err());
    let f = l.flip(1).unwrap();
    assert_eq!(elements(&f), vec![4, 5, 2, 3, 0, 1]);
    let s = l.swap_axes(1, 3).unwrap();
    assert_eq!(s.shape(), &[1, 2, 1, 3]);
    let scalar = Layout::c_contiguous(&[]).unwrap();
    assert_eq!(scalar.len(), 1);
    assert_eq!(scalar.element_offsets().collect::<Vec<_>>(), vec![0]);
    assert!(scalar.is_c_contiguous());
    assert!(matches!(
        Layout::c_contiguous(&[2])
            .unwrap()
            .slice(&[SliceArg::Ellipsis, SliceArg::Ellipsis]),
        Err(LayoutError::MultipleEllipses)
    ));
    assert!(matches!(
        Layout::c_contiguous(&[2])
            .unwrap()
            .slice(&[SliceArg::All, SliceArg::All]),
        Err(LayoutError::TooManyIndices { given: 2, ndim: 1 })
    ));
    assert!(matches!(
        Layout::c_contiguous(&[2])
            .unwrap()
            .slice(&[SliceArg::stepped(None, None, 0)]),
        Err(LayoutError::ZeroStep { axis: 0 })
    ));
    assert!(matches!(
        Layout::from_parts(vec![2], vec![1, 1], 0, 2),
        Err(LayoutError::RankMismatch { .. })
    ));
    assert!(Layout::c_contiguous(&[usize::MAX, 2]).is_err());
    let b = Layout::c_contiguous(&[3])
        .unwrap()
        .broadcast_to(&[2, 3])
        .unwrap();
    assert!(b.has_broadcast_axes());
    assert!(!l.has_broadcast_axes());
}
