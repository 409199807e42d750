//! A CPU model of the operations' semantics for the GPU tests: values of every element
//! type as exact integers, f64 floats or f64 pairs; NumPy's casts and promotion as the
//! kernels implement them; arithmetic done in the kernels' precision (f32 for f32, f16
//! and bf16; f64 for f64), so most results are expected bit-exact and compared with a
//! tolerance of about one unit in the last place of the result type.
#![allow(dead_code)]

pub mod gpu;

use half::{bf16, f16};
use rucuda_array::ops::BinaryOp;
use rucuda_array::{DType, DTypeKind, Element};

/// One value of any element type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Val {
    B(bool),
    I(i128),
    F(f64),
    C(f64, f64),
}

/// Decodes an element from its stored bytes.
pub fn val<T: Element>(v: T) -> Val {
    let s = v.to_storage();
    let b = bytemuck::bytes_of(&s);
    decode(T::DTYPE, b)
}

pub fn decode(d: DType, b: &[u8]) -> Val {
    let u = |n: usize| {
        let mut w = [0u8; 16];
        w[..n].copy_from_slice(&b[..n]);
        u128::from_le_bytes(w)
    };
    match d {
        DType::Bool => Val::B(b[0] != 0),
        DType::I8 => Val::I(i8::from_ne_bytes([b[0]]) as i128),
        DType::I16 => Val::I(i16::from_ne_bytes([b[0], b[1]]) as i128),
        DType::I32 => Val::I(i32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as i128),
        DType::I64 => Val::I(u(8) as u64 as i64 as i128),
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => Val::I(u(d.size_bytes()) as i128),
        DType::F16 => Val::F(f16::from_bits(u(2) as u16).to_f64()),
        DType::BF16 => Val::F(bf16::from_bits(u(2) as u16).to_f64()),
        DType::F32 => Val::F(f32::from_bits(u(4) as u32) as f64),
        DType::F64 => Val::F(f64::from_bits(u(8) as u64)),
        DType::C64 => Val::C(
            f32::from_bits(u(4) as u32) as f64,
            f32::from_bits((u(8) >> 32) as u32) as f64,
        ),
        DType::C128 => Val::C(
            f64::from_bits(u(8) as u64),
            f64::from_bits((u(16) >> 64) as u64),
        ),
        DType::Record(_) => unreachable!("the operations tests use number types"),
    }
}

/// Wraps an integer to the range of an integer type (two's complement).
pub fn wrap(i: i128, d: DType) -> i128 {
    let bits = 8 * d.size_bytes() as u32;
    let m = i.rem_euclid(1i128 << bits);
    match d.kind() {
        DTypeKind::SignedInt if m >= 1i128 << (bits - 1) => m - (1i128 << bits),
        _ => m,
    }
}

/// Rounds an f64 to a float type (f16/bf16 from f64 directly, as the kernels do).
pub fn round(x: f64, d: DType) -> f64 {
    match d {
        DType::F16 => f16::from_f64(x).to_f64(),
        DType::BF16 => bf16::from_f64(x).to_f64(),
        DType::F32 | DType::C64 => x as f32 as f64,
        _ => x,
    }
}

/// Truncation toward zero, saturating to `lo..=hi` (NaN gives 0), as CUDA's `cvt.rzi`.
fn trunc_sat(x: f64, lo: i128, hi: i128) -> i128 {
    (x as i128).clamp(lo, hi)
}

/// NumPy's cast, as the kernels implement it (float to integer: truncation through a
/// saturating 32- or 64-bit conversion, then wrapping; see `ops::device_code`).
pub fn cast(v: Val, to: DType) -> Val {
    match (v, to.kind()) {
        (Val::C(re, im), DTypeKind::Bool) => Val::B(re != 0.0 || im != 0.0),
        (Val::C(re, im), DTypeKind::Complex) => {
            Val::C(round(re, to.real_type()), round(im, to.real_type()))
        }
        (Val::C(re, _), _) => cast(Val::F(re), to),
        (_, DTypeKind::Complex) => match cast(v, to.real_type()) {
            Val::F(x) => Val::C(x, 0.0),
            other => panic!("{other:?}"),
        },
        (Val::B(b), DTypeKind::Bool) => Val::B(b),
        (Val::I(i), DTypeKind::Bool) => Val::B(i != 0),
        (Val::F(x), DTypeKind::Bool) => Val::B(x != 0.0),
        (Val::B(b), DTypeKind::Float) => Val::F(if b { 1.0 } else { 0.0 }),
        (Val::I(i), DTypeKind::Float) => Val::F(round(i as f64, to)),
        (Val::F(x), DTypeKind::Float) => Val::F(round(x, to)),
        (Val::B(b), _) => Val::I(b as i128),
        (Val::I(i), _) => Val::I(wrap(i, to)),
        (Val::F(x), _) => {
            let i = match to {
                DType::I8 | DType::I16 | DType::I32 | DType::U8 | DType::U16 => {
                    trunc_sat(x, i32::MIN as i128, i32::MAX as i128)
                }
                DType::U32 | DType::I64 => trunc_sat(x, i64::MIN as i128, i64::MAX as i128),
                _ if x < 0.0 => trunc_sat(x, i64::MIN as i128, i64::MAX as i128),
                _ => trunc_sat(x, 0, u64::MAX as i128),
            };
            Val::I(wrap(i, to))
        }
    }
}

/// The `(compute, output)` types of a binary operation, as `ops` documents them.
pub fn binary_types(
    op: BinaryOp,
    a: DType,
    b: DType,
    aw: bool,
    bw: bool,
) -> Option<(DType, DType)> {
    use BinaryOp::*;
    let p = match (aw, bw) {
        (true, false) => b.promote_weak(a),
        (false, true) => a.promote_weak(b),
        _ => a.promote(b),
    };
    let int_like = p.is_integer() || p == DType::Bool;
    Some(match op {
        Add | Mul | Maximum | Minimum => (p, p),
        Sub if p == DType::Bool => return None,
        Sub => (p, p),
        Div if int_like => (DType::F64, DType::F64),
        Div => (p, p),
        Pow if p == DType::Bool => return None,
        Pow => (p, p),
        FloorDiv | Remainder if p == DType::Bool || p.is_complex() => return None,
        FloorDiv | Remainder => (p, p),
        Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual => (p, DType::Bool),
        LogicalAnd | LogicalOr | LogicalXor => (DType::Bool, DType::Bool),
        BitAnd | BitOr | BitXor if int_like => (p, p),
        Fmod if p.is_float() => (p, p),
        _ => return None,
    })
}

fn fdivmod32(a: f32, b: f32) -> (f32, f32) {
    let m = a % b;
    if b == 0.0 {
        return (a / b, m);
    }
    let mut div = (a - m) / b;
    let mut m = m;
    if m != 0.0 {
        if (b < 0.0) != (m < 0.0) {
            m += b;
            div -= 1.0;
        }
    } else {
        m = 0f32.copysign(b);
    }
    let fd = if div != 0.0 {
        let mut fd = div.floor();
        if div - fd > 0.5 {
            fd += 1.0;
        }
        fd
    } else {
        0f32.copysign(a / b)
    };
    (fd, m)
}

fn fdivmod64(a: f64, b: f64) -> (f64, f64) {
    let m = a % b;
    if b == 0.0 {
        return (a / b, m);
    }
    let mut div = (a - m) / b;
    let mut m = m;
    if m != 0.0 {
        if (b < 0.0) != (m < 0.0) {
            m += b;
            div -= 1.0;
        }
    } else {
        m = 0f64.copysign(b);
    }
    let fd = if div != 0.0 {
        let mut fd = div.floor();
        if div - fd > 0.5 {
            fd += 1.0;
        }
        fd
    } else {
        0f64.copysign(a / b)
    };
    (fd, m)
}

fn fop(op: BinaryOp, x: f64, y: f64, d: DType) -> f64 {
    use BinaryOp::*;
    let wide = matches!(d, DType::F64 | DType::C128);
    let r = if wide {
        match op {
            Add => x + y,
            Sub => x - y,
            Mul => x * y,
            Div => x / y,
            FloorDiv => fdivmod64(x, y).0,
            Remainder => fdivmod64(x, y).1,
            Fmod => x % y,
            Pow => x.powf(y),
            _ => unreachable!(),
        }
    } else {
        let (a, b) = (x as f32, y as f32);
        (match op {
            Add => a + b,
            Sub => a - b,
            Mul => a * b,
            Div => a / b,
            FloorDiv => fdivmod32(a, b).0,
            Remainder => fdivmod32(a, b).1,
            Fmod => a % b,
            Pow => a.powf(b),
            _ => unreachable!(),
        }) as f64
    };
    round(r, d)
}

fn ipow(a: i128, b: i128, d: DType) -> i128 {
    if b < 0 {
        return match a {
            1 => 1,
            -1 if b & 1 == 1 => -1,
            -1 => 1,
            _ => 0,
        };
    }
    let mut r: i128 = 1;
    for _ in 0..b.min(200) {
        r = wrap(r.wrapping_mul(a), d);
    }
    r
}

fn ordered(op: BinaryOp, a: Val, b: Val) -> bool {
    use BinaryOp::*;
    let lex = |(xr, xi): (f64, f64), (yr, yi): (f64, f64), strict: bool, less: bool| {
        let (xr, xi, yr, yi) = if less {
            (xr, xi, yr, yi)
        } else {
            (yr, yi, xr, xi)
        };
        (xr < yr && !xi.is_nan() && !yi.is_nan())
            || (xr == yr && if strict { xi < yi } else { xi <= yi })
    };
    match (a, b) {
        (Val::C(xr, xi), Val::C(yr, yi)) => match op {
            Equal => xr == yr && xi == yi,
            NotEqual => !(xr == yr && xi == yi),
            Less => lex((xr, xi), (yr, yi), true, true),
            LessEqual => lex((xr, xi), (yr, yi), false, true),
            Greater => lex((xr, xi), (yr, yi), true, false),
            GreaterEqual => lex((xr, xi), (yr, yi), false, false),
            _ => unreachable!(),
        },
        _ => {
            let (x, y) = (num(a), num(b));
            match op {
                Equal => x == y,
                NotEqual => x != y,
                Less => x < y,
                LessEqual => x <= y,
                Greater => x > y,
                GreaterEqual => x >= y,
                _ => unreachable!(),
            }
        }
    }
}

/// A real value as f64 (integers exactly up to 2^53; comparisons of larger integers use
/// the integer path below).
fn num(v: Val) -> f64 {
    match v {
        Val::B(b) => b as i32 as f64,
        Val::I(i) => i as f64,
        Val::F(x) => x,
        Val::C(re, _) => re,
    }
}

fn truthy(v: Val) -> bool {
    match v {
        Val::B(b) => b,
        Val::I(i) => i != 0,
        Val::F(x) => x != 0.0,
        Val::C(re, im) => re != 0.0 || im != 0.0,
    }
}

fn cmul(a: (f64, f64), b: (f64, f64), d: DType) -> (f64, f64) {
    let r = |x| round(x, d);
    (
        r(r(a.0 * b.0) - r(a.1 * b.1)),
        r(r(a.0 * b.1) + r(a.1 * b.0)),
    )
}

fn cdiv(a: (f64, f64), b: (f64, f64), d: DType) -> (f64, f64) {
    let r = |x| round(x, d);
    let (br, bi) = (b.0.abs(), b.1.abs());
    if br >= bi {
        if br == 0.0 && bi == 0.0 {
            return (r(a.0 / br), r(a.1 / bi));
        }
        let rat = r(b.1 / b.0);
        let scl = r(1.0 / r(b.0 + r(b.1 * rat)));
        (
            r(r(a.0 + r(a.1 * rat)) * scl),
            r(r(a.1 - r(a.0 * rat)) * scl),
        )
    } else {
        let rat = r(b.0 / b.1);
        let scl = r(1.0 / r(b.1 + r(b.0 * rat)));
        (
            r(r(r(a.0 * rat) + a.1) * scl),
            r(r(r(a.1 * rat) - a.0) * scl),
        )
    }
}

fn cpow(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    use num_complex::Complex;
    if b == (0.0, 0.0) {
        return (1.0, 0.0);
    }
    if a == (0.0, 0.0) {
        return if b.0 > 0.0 && b.1 == 0.0 {
            (0.0, 0.0)
        } else {
            (f64::NAN, f64::NAN)
        };
    }
    let z = Complex::new(a.0, a.1).powc(Complex::new(b.0, b.1));
    (z.re, z.im)
}

/// `op(a, b)` with `a` of type `at` and `b` of `bt` (weak flags for scalars): the result
/// and its type, or `None` where the operation is refused.
pub fn binary(
    op: BinaryOp,
    a: Val,
    at: DType,
    aw: bool,
    b: Val,
    bt: DType,
    bw: bool,
) -> Option<(Val, DType)> {
    use BinaryOp::*;
    let (ct, out) = binary_types(op, at, bt, aw, bw)?;
    if matches!(op, LogicalAnd | LogicalOr | LogicalXor) {
        let (x, y) = (truthy(a), truthy(b));
        let r = match op {
            LogicalAnd => x && y,
            LogicalOr => x || y,
            _ => x != y,
        };
        return Some((Val::B(r), out));
    }
    let (x, y) = (cast(a, ct), cast(b, ct));
    let r = match op {
        Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual => match (x, y) {
            (Val::I(i), Val::I(j)) => Val::B(match op {
                Equal => i == j,
                NotEqual => i != j,
                Less => i < j,
                LessEqual => i <= j,
                Greater => i > j,
                _ => i >= j,
            }),
            _ => Val::B(ordered(op, x, y)),
        },
        Maximum | Minimum => {
            let max = op == Maximum;
            let pick_a = match (x, y) {
                (Val::C(xr, xi), Val::C(_, _)) => {
                    let ge = ordered(if max { GreaterEqual } else { LessEqual }, x, y);
                    ge || xr.is_nan() || xi.is_nan()
                }
                (Val::F(p), Val::F(q)) => (if max { p >= q } else { p <= q }) || p.is_nan(),
                (Val::I(p), Val::I(q)) => {
                    if max {
                        p >= q
                    } else {
                        p <= q
                    }
                }
                (Val::B(p), Val::B(q)) => {
                    if max {
                        p >= q
                    } else {
                        p <= q
                    }
                }
                other => panic!("{other:?}"),
            };
            if pick_a {
                x
            } else {
                y
            }
        }
        BitAnd | BitOr | BitXor => match (x, y) {
            (Val::I(i), Val::I(j)) => Val::I(wrap(
                match op {
                    BitAnd => i & j,
                    BitOr => i | j,
                    _ => i ^ j,
                },
                ct,
            )),
            (Val::B(i), Val::B(j)) => Val::B(match op {
                BitAnd => i & j,
                BitOr => i | j,
                _ => i ^ j,
            }),
            other => panic!("{other:?}"),
        },
        _ => match (x, y) {
            (Val::B(i), Val::B(j)) => Val::B(match op {
                Add => i || j,
                Mul => i && j,
                _ => return None,
            }),
            (Val::I(i), Val::I(j)) => Val::I(wrap(
                match op {
                    Add => i + j,
                    Sub => i - j,
                    Mul => i.wrapping_mul(j),
                    FloorDiv | Remainder => {
                        if j == 0 {
                            0
                        } else {
                            let q = if (i % j != 0) && ((i < 0) != (j < 0)) {
                                i / j - 1
                            } else {
                                i / j
                            };
                            if op == FloorDiv {
                                q
                            } else {
                                i - q * j
                            }
                        }
                    }
                    Pow => ipow(i, j, ct),
                    _ => return None,
                },
                ct,
            )),
            (Val::F(p), Val::F(q)) => Val::F(fop(op, p, q, ct)),
            (Val::C(pr, pi), Val::C(qr, qi)) => {
                let d = ct.real_type();
                let (re, im) = match op {
                    Add => (round(pr + qr, d), round(pi + qi, d)),
                    Sub => (round(pr - qr, d), round(pi - qi, d)),
                    Mul => cmul((pr, pi), (qr, qi), d),
                    Div => cdiv((pr, pi), (qr, qi), d),
                    Pow => {
                        let (re, im) = cpow((pr, pi), (qr, qi));
                        (round(re, d), round(im, d))
                    }
                    _ => return None,
                };
                Val::C(re, im)
            }
            other => panic!("{other:?}"),
        },
    };
    Some((cast(r, out), out))
}

/// Relative tolerance of a result type for exactly-modelled operations.
pub fn tol(d: DType) -> f64 {
    match d.real_type() {
        DType::F16 => 1e-3,
        DType::BF16 => 8e-3,
        DType::F32 => 3e-7,
        DType::F64 => 1e-15,
        _ => 0.0,
    }
}

/// True when `got` equals `want` within a relative tolerance (NaN equals NaN; infinities
/// must match; integers and booleans exactly).
pub fn close(got: Val, want: Val, rel: f64) -> bool {
    let f = |g: f64, w: f64| {
        (g.is_nan() && w.is_nan())
            || g == w
            || (g.is_finite()
                && w.is_finite()
                && (g - w).abs() <= rel * w.abs().max(1e-30).max(rel))
    };
    match (got, want) {
        (Val::F(g), Val::F(w)) => f(g, w),
        (Val::C(gr, gi), Val::C(wr, wi)) => {
            let scale = wr.abs().max(wi.abs());
            let g2 = |g: f64, w: f64| {
                (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= rel * scale.max(1e-30)
            };
            g2(gr, wr) && g2(gi, wi)
        }
        (g, w) => g == w,
    }
}

/// Asserts a device result against the model elementwise, naming the first mismatch.
pub fn assert_vals(what: &str, got: &[Val], want: &[Val], rel: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            close(*g, *w, rel),
            "{what}: element {k}: got {g:?}, want {w:?} (rel {rel})"
        );
    }
}

/// Row-major broadcasting of `shape_from` into `shape_to`: the source index of each
/// destination element.
pub fn broadcast_index(from: &[usize], to: &[usize]) -> Vec<usize> {
    let n: usize = to.iter().product();
    let lead = to.len() - from.len();
    (0..n)
        .map(|mut flat| {
            let mut idx = vec![0usize; to.len()];
            for a in (0..to.len()).rev() {
                idx[a] = flat % to[a];
                flat /= to[a];
            }
            let mut src = 0usize;
            for (a, &d) in from.iter().enumerate() {
                let i = if d == 1 { 0 } else { idx[a + lead] };
                src = src * d + i;
            }
            src
        })
        .collect()
}
