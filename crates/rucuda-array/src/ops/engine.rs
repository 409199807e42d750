//! The engine under every built-in operation and fused expression: a process-wide memo
//! of loaded kernels keyed by (context, [`OpKey`]), the choice of variant (vectorized,
//! contiguous, strided) from the operands' layouts, and a lean launch.
//!
//! The hot path of `&a + &b` on small contiguous arrays is: hash a small `Copy` key (no
//! strings), one read-locked map lookup, an `Arc` clone, a lock-free `OnceLock` read of
//! the loaded function, parameters packed on the stack, one `cuLaunchKernel`. Nothing is
//! formatted and no source text is hashed unless the kernel is missing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use rucuda_driver::{Access, ArgBuffer, Context, DeviceAttribute, Function, InUse, Stream};

use super::key::OpKey;
use super::key_hasher::KeyBuild;
use super::params::{ParamPack, PACK_CAPACITY};
use crate::compile::{default_compiler, load_kernels};
use crate::elementwise::{ElementwiseSpec, ScalarValue, Variant};
use crate::error::{ArrayError, Result};
use crate::layout::Layout;
use crate::memory::ArrayMemory;

/// Grid-stride launches are capped at this many blocks per multiprocessor.
const BLOCKS_PER_SM: u32 = 16;

/// One argument of a built-in kernel, in the order of its spec's arguments.
#[derive(Debug, Clone)]
pub(crate) enum Arg<'a> {
    /// An array read as `x[i]`; its layout broadcasts to the iteration shape.
    In {
        /// Its memory.
        mem: ArrayMemory<'a>,
        /// Its layout.
        layout: &'a Layout,
    },
    /// An array written as `x[i]`; its shape is the iteration shape.
    Out {
        /// Its memory.
        mem: ArrayMemory<'a>,
        /// Its layout.
        layout: &'a Layout,
    },
    /// A contiguous array the kernel indexes itself (gather and scatter sources, read).
    Whole {
        /// Its memory.
        mem: ArrayMemory<'a>,
    },
    /// A contiguous array the kernel indexes itself and writes (scatter targets).
    WholeOut {
        /// Its memory.
        mem: ArrayMemory<'a>,
    },
    /// A value.
    Scalar(ScalarValue),
}

impl Arg<'_> {
    fn layout(&self) -> Option<(&ArrayMemory<'_>, &Layout)> {
        match self {
            Arg::In { mem, layout } | Arg::Out { mem, layout } => Some((mem, layout)),
            _ => None,
        }
    }

    /// The use for a launch on `stream` (its address; keep it until the launch is
    /// queued), or `None` for a value.
    fn address_on<'s>(&'s self, stream: &Stream) -> Result<Option<InUse<'s>>> {
        Ok(match self {
            Arg::In { mem, .. } | Arg::Whole { mem } => Some(mem.use_on(stream, Access::Read)?),
            Arg::Out { mem, .. } | Arg::WholeOut { mem } => {
                Some(mem.use_on(stream, Access::Write)?)
            }
            Arg::Scalar(_) => None,
        })
    }
}

/// Which array operands of a strided launch are strided, exactly: bits for up to 64
/// operands (the common case, no allocation), the whole list beyond.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum StridedMask {
    /// Bit k: operand k is strided; the count tells masks of different lengths apart.
    Bits { bits: u64, len: u8 },
    /// More than 64 array operands.
    Long(Box<[bool]>),
}

impl StridedMask {
    fn of(mask: &[bool]) -> StridedMask {
        if mask.len() <= 64 {
            let bits = mask
                .iter()
                .enumerate()
                .fold(0u64, |acc, (k, &s)| acc | (u64::from(s) << k));
            StridedMask::Bits {
                bits,
                len: mask.len() as u8,
            }
        } else {
            StridedMask::Long(mask.into())
        }
    }
}

/// The loaded variants of one kernel in one context.
struct Entry {
    spec: ElementwiseSpec,
    vectorizable: bool,
    /// The operation uses `i` only as `x[i]`: operands that all lie densely in one memory
    /// order (all F-ordered, say) may take the contiguous loop over memory.
    any_dense_order: bool,
    max_blocks: u32,
    contiguous: OnceLock<Function>,
    vectorized: OnceLock<(Function, usize)>,
    /// Strided variants by (merged rank, which operands are strided): the whole mask is
    /// the key, so no two masks can share a kernel (one built for another mask would
    /// read its operands with the wrong strides).
    strided: Mutex<HashMap<(usize, StridedMask), Function, KeyBuild>>,
}

impl Entry {
    fn load(&self, ctx: &Context, variant: &Variant) -> Result<(Function, usize)> {
        let rendered = self.spec.render(variant)?;
        let compiler = default_compiler();
        let [function] = load_kernels(&*compiler, ctx, &rendered.source, [&*rendered.entry])?;
        Ok((function, rendered.elements_per_thread))
    }

    fn contiguous(&self, ctx: &Context) -> Result<&Function> {
        if let Some(f) = self.contiguous.get() {
            return Ok(f);
        }
        let (f, _) = self.load(ctx, &Variant::Contiguous)?;
        Ok(self.contiguous.get_or_init(|| f))
    }

    fn vectorized(&self, ctx: &Context) -> Result<&(Function, usize)> {
        if let Some(f) = self.vectorized.get() {
            return Ok(f);
        }
        let loaded = self.load(ctx, &Variant::Vectorized)?;
        Ok(self.vectorized.get_or_init(|| loaded))
    }

    fn strided(&self, ctx: &Context, ndim: usize, mask: &[bool]) -> Result<Function> {
        let key = (ndim, StridedMask::of(mask));
        {
            let map = self.strided.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(f) = map.get(&key) {
                return Ok(f.clone());
            }
        }
        let variant = Variant::Strided {
            ndim,
            strided: mask.to_vec(),
        };
        let (f, _) = self.load(ctx, &variant)?;
        let mut map = self.strided.lock().unwrap_or_else(|p| p.into_inner());
        Ok(map.entry(key).or_insert(f).clone())
    }
}

type Memo = RwLock<HashMap<(u64, OpKey), Arc<Entry>, KeyBuild>>;

fn memo() -> &'static Memo {
    static MEMO: OnceLock<Memo> = OnceLock::new();
    MEMO.get_or_init(|| RwLock::new(HashMap::with_hasher(KeyBuild::default())))
}

/// The memo entry of `key` in `ctx`, made on first use (the spec is built then; variants
/// compile when first launched).
fn entry(ctx: &Context, key: OpKey) -> Result<Arc<Entry>> {
    let k = (ctx.id(), key);
    {
        let map = memo().read().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = map.get(&k) {
            return Ok(Arc::clone(e));
        }
    }
    let spec = key.spec()?;
    let sms = ctx
        .device()
        .attribute(DeviceAttribute::MultiprocessorCount)?
        .max(1) as u32;
    let e = Arc::new(Entry {
        vectorizable: spec.vectorizable(),
        any_dense_order: spec.index_only_in_subscripts(),
        spec,
        max_blocks: sms.saturating_mul(BLOCKS_PER_SM),
        contiguous: OnceLock::new(),
        vectorized: OnceLock::new(),
        strided: Mutex::new(HashMap::with_hasher(KeyBuild::default())),
    });
    let mut map = memo().write().unwrap_or_else(|p| p.into_inner());
    Ok(Arc::clone(map.entry(k).or_insert(e)))
}

/// Forgets every memoized built-in and fused kernel of `ctx` (all contexts for `None`).
/// The memo holds the loaded modules, which keep their contexts alive; call this before
/// dropping a created context whose kernels you no longer need.
///
/// ```no_run
/// let ctx = rucuda_driver::Device::get(0)?.primary_context()?;
/// rucuda_array::ops::clear_kernel_memo(Some(&ctx));
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn clear_kernel_memo(ctx: Option<&Context>) {
    let mut map = memo().write().unwrap_or_else(|p| p.into_inner());
    match ctx {
        Some(c) => map.retain(|(id, _), _| *id != c.id()),
        None => map.clear(),
    }
}

/// Number of memoized kernels (all contexts), for tests and diagnostics.
pub fn memoized_kernel_count() -> usize {
    memo().read().map(|m| m.len()).unwrap_or(0)
}

impl OpKey {
    /// Compiles and loads this kernel's contiguous and vectorized variants in `ctx` now,
    /// so that the first operation that needs it does not wait for the compiler.
    ///
    /// ```no_run
    /// use rucuda_array::{ops::{BinaryOp, OpKey}, DType};
    /// let ctx = rucuda_driver::Device::get(0)?.primary_context()?;
    /// OpKey::Binary { op: BinaryOp::Add, a: DType::F32, b: DType::F32, a_scalar: false,
    ///                 b_scalar: false, out: DType::F32, in_place: false }.precompile(&ctx)?;
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn precompile(&self, ctx: &Context) -> Result<()> {
        let e = entry(ctx, *self)?;
        e.contiguous(ctx)?;
        if e.vectorizable {
            e.vectorized(ctx)?;
        }
        Ok(())
    }
}

/// Runs kernel `key` over the iteration shape `shape` on `stream`.
///
/// Preconditions (the callers' checks): every `In` layout broadcasts to `shape`, every
/// `Out` layout has exactly `shape` and no broadcast axis, every layout was checked
/// against its buffer, and `Whole` arrays hold every index the kernel computes.
pub(crate) fn run(stream: &Stream, key: OpKey, shape: &[usize], args: &[Arg<'_>]) -> Result<()> {
    let n: usize = shape.iter().product();
    if n == 0 {
        return Ok(());
    }
    let ctx = stream.context();
    let e = entry(ctx, key)?;
    let Some(aligned) = contiguous_plan(n, args, e.any_dense_order) else {
        return run_strided(stream, &e, shape, n, args);
    };
    let (function, tile) = if e.vectorizable && aligned {
        let (f, t) = e.vectorized(ctx)?;
        (f, *t)
    } else {
        (e.contiguous(ctx)?, 1)
    };
    let work = n.div_ceil(tile.max(1));
    let cfg = crate::launch_shape::elementwise(work, e.max_blocks / BLOCKS_PER_SM, BLOCKS_PER_SM);
    let mut pack = ParamPack::new();
    let mut uses: [Option<InUse<'_>>; PACK_CAPACITY] = Default::default();
    let mut fits = args.len() < PACK_CAPACITY;
    for (a, used) in args.iter().zip(uses.iter_mut()) {
        fits &= match (a.address_on(stream)?, a) {
            (Some(u), _) => pack.push_u64(used.insert(u).ptr()),
            (None, Arg::Scalar(s)) => pack.push_bytes(s.bytes()),
            (None, _) => false,
        };
    }
    fits &= pack.push_u64(n as u64);
    if fits {
        // SAFETY: the kernel was generated from this key's spec, whose parameters are
        // the arguments in order (types fixed by the key) followed by `n`. The contiguous
        // and vectorized variants visit indices 0..n of each `In`/`Out` array, which
        // holds n elements from its pointer (checked above); `Whole` arrays are indexed
        // within their length by the generated code (the callers' contract). Every
        // rendered elementwise kernel waits for its predecessor first (the template's
        // first statement; `every_variant_waits_for_its_predecessor_first` checks it), so
        // it may launch as a programmatic dependent launch.
        unsafe { function.launch_programmatic(cfg, stream, &pack)? };
        return Ok(());
    }
    let mut buf = ArgBuffer::new();
    push_args(&mut buf, stream, args)?;
    buf.push(n as i64);
    // SAFETY: as above, with the same parameters in a heap-built list.
    unsafe { function.launch_args_programmatic(cfg, stream, &buf)? };
    Ok(())
}

fn push_args<'s>(buf: &mut ArgBuffer<'s>, stream: &Stream, args: &'s [Arg<'_>]) -> Result<()> {
    for a in args {
        match (a.address_on(stream)?, a) {
            (Some(used), _) => {
                buf.push_use(used);
            }
            (None, Arg::Scalar(s)) => s.push_to(buf),
            (None, _) => {}
        }
    }
    Ok(())
}

/// `Some(aligned)` when every `In`/`Out` array has `n` elements and either all are
/// row-major contiguous, or (with `any_dense_order`, for operations that use `i` only as
/// `x[i]`) all lie densely from element 0 up in one and the same memory order (all
/// F-ordered, say): then element `k` in memory of each array is the same iteration
/// element (broadcasting can only have added axes of length 1). `aligned` tells whether
/// all their addresses are 16-byte aligned; `None` when the strided kernel is needed.
fn contiguous_plan(n: usize, args: &[Arg<'_>], any_dense_order: bool) -> Option<bool> {
    // Arrays the kernel indexes itself are laid out row-major: with one of them, the
    // iteration order must stay row-major too.
    let any_dense_order = any_dense_order
        && !args
            .iter()
            .any(|a| matches!(a, Arg::Whole { .. } | Arg::WholeOut { .. }));
    let mut aligned = true;
    let mut all_c = true;
    let mut first: Option<&Layout> = None;
    for a in args {
        if let Some((mem, layout)) = a.layout() {
            if layout.len() != n {
                return None;
            }
            all_c &= layout.is_c_contiguous();
            if !all_c {
                let same = first.is_none_or(|f| f.same_memory_order(layout));
                if !any_dense_order || !layout.is_dense_forward() || !same {
                    return None;
                }
            }
            first.get_or_insert(layout);
            aligned &= mem.is_aligned(16);
        }
    }
    Some(aligned)
}

/// The launch of a strided variant: merged shape, which array arguments are strided (one
/// flag per array argument, `Whole` ones never), and the merged strides of each strided
/// one in argument order.
#[derive(Debug, PartialEq)]
struct StridedPlan {
    shape: Vec<usize>,
    mask: Vec<bool>,
    strides: Vec<Vec<isize>>,
}

fn strided_plan(shape: &[usize], args: &[Arg<'_>]) -> Result<StridedPlan> {
    let mut layouts: Vec<Layout> = Vec::new();
    for a in args {
        match a {
            Arg::In { layout, .. } => layouts.push(layout.broadcast_to(shape)?),
            Arg::Out { layout, .. } => {
                if layout.shape() != shape || layout.has_broadcast_axes() {
                    return Err(ArrayError::WriteToBroadcast {
                        shape: layout.shape().to_vec(),
                        strides: layout.strides().to_vec(),
                    });
                }
                layouts.push((*layout).clone());
            }
            _ => {}
        }
    }
    let refs: Vec<&Layout> = layouts.iter().collect();
    let (mut cshape, mut cstrides) = Layout::coalesce(&refs);
    if cshape.is_empty() {
        // Only axes of length 1: one axis of one element.
        cshape.push(1);
        cstrides.iter_mut().for_each(|s| s.push(0));
    }
    let c_strides = Layout::c_contiguous(&cshape)?.strides().to_vec();
    let mut mask = Vec::new();
    let mut strides = Vec::new();
    let mut k = 0;
    for a in args {
        match a {
            Arg::In { .. } | Arg::Out { .. } => {
                let strided = cstrides[k] != c_strides;
                mask.push(strided);
                if strided {
                    strides.push(cstrides[k].clone());
                }
                k += 1;
            }
            Arg::Whole { .. } | Arg::WholeOut { .. } => mask.push(false),
            Arg::Scalar(_) => {}
        }
    }
    Ok(StridedPlan {
        shape: cshape,
        mask,
        strides,
    })
}

fn run_strided(
    stream: &Stream,
    e: &Entry,
    shape: &[usize],
    n: usize,
    args: &[Arg<'_>],
) -> Result<()> {
    let plan = strided_plan(shape, args)?;
    let function = e.strided(stream.context(), plan.shape.len(), &plan.mask)?;
    let mut buf = ArgBuffer::new();
    push_args(&mut buf, stream, args)?;
    buf.push(n as i64);
    for &d in &plan.shape {
        buf.push(d as i64);
    }
    for s in &plan.strides {
        for &v in s {
            buf.push(v as i64);
        }
    }
    let cfg = crate::launch_shape::elementwise(n, e.max_blocks / BLOCKS_PER_SM, BLOCKS_PER_SM);
    // SAFETY: the strided variant of this key's spec takes the arguments in order, then
    // n, the merged shape, and the merged strides of each strided array. Each `In`/`Out`
    // array is visited through its own layout broadcast to the iteration shape, which
    // was checked against its buffer when the array was made; `Whole` arrays are indexed
    // within their length by the generated code. The kernel waits for its predecessor
    // first, as every rendered elementwise kernel does (see `run`).
    unsafe { function.launch_args_programmatic(cfg, stream, &buf)? };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::SliceArg;

    fn mem(ptr: u64) -> ArrayMemory<'static> {
        ArrayMemory {
            // SAFETY: never used for work.
            range: unsafe { rucuda_driver::DeviceRange::untracked(ptr, 1 << 20) },
            offset: 0,
        }
    }

    fn arr(layout: &Layout, out: bool, ptr: u64) -> Arg<'_> {
        if out {
            Arg::Out {
                mem: mem(ptr),
                layout,
            }
        } else {
            Arg::In {
                mem: mem(ptr),
                layout,
            }
        }
    }

    #[test]
    fn contiguous_operands_take_the_tiled_or_plain_loop() {
        let a = Layout::c_contiguous(&[4, 5]).unwrap();
        let row = Layout::c_contiguous(&[1, 5]).unwrap();
        let args = [arr(&a, false, 256), arr(&a, true, 512)];
        assert_eq!(contiguous_plan(20, &args, true), Some(true));
        // Misaligned (a view at an odd offset): the plain loop.
        let args = [arr(&a, false, 260), arr(&a, true, 512)];
        assert_eq!(contiguous_plan(20, &args, true), Some(false));
        // A broadcast operand or a transposed one: strided.
        assert_eq!(
            contiguous_plan(20, &[arr(&row, false, 0), arr(&a, true, 0)], true),
            None
        );
        let t = a.transpose();
        assert_eq!(
            contiguous_plan(20, &[arr(&t, false, 0), arr(&a, true, 0)], true),
            None
        );
        // All F-ordered (the transpose of a C array, and an F output): the contiguous
        // loop over memory, unless the operation uses `i` as a value.
        let f = Layout::f_contiguous(&[4, 5]).unwrap();
        let tf = Layout::c_contiguous(&[5, 4]).unwrap().transpose();
        let f3 = Layout::f_contiguous(&[1, 4, 5]).unwrap();
        let args = [arr(&tf, false, 0), arr(&f3, false, 0), arr(&f, true, 0)];
        assert_eq!(contiguous_plan(20, &args, true), Some(true));
        assert_eq!(contiguous_plan(20, &args, false), None);
        // F beside C, or a reversed F view: strided.
        assert_eq!(
            contiguous_plan(20, &[arr(&f, false, 0), arr(&a, true, 0)], true),
            None
        );
        assert_eq!(
            contiguous_plan(20, &[arr(&a, false, 0), arr(&f, true, 0)], true),
            None
        );
        // A gather source beside F operands: row-major iteration (strided).
        let args = [
            arr(&tf, false, 0),
            Arg::Whole { mem: mem(0) },
            arr(&f, true, 0),
        ];
        assert_eq!(contiguous_plan(20, &args, true), None);
        let rf = f.flip(0).unwrap();
        assert_eq!(
            contiguous_plan(20, &[arr(&rf, false, 0), arr(&f, true, 0)], true),
            None
        );
        // Scalars and gather sources do not count.
        let args = [
            Arg::Scalar(ScalarValue::new(1.0f32)),
            Arg::Whole { mem: mem(3) },
            arr(&a, true, 0),
        ];
        assert_eq!(contiguous_plan(20, &args, true), Some(true));
    }

    #[test]
    fn strided_plans_merge_axes_and_mark_strided_arrays() {
        // out [3,4,5] contiguous, a broadcast from [4,1], b transposed.
        let out = Layout::c_contiguous(&[3, 4, 5]).unwrap();
        let a = Layout::c_contiguous(&[4, 1]).unwrap();
        let b = Layout::c_contiguous(&[5, 4, 3]).unwrap().transpose();
        let args = [
            arr(&a, false, 0),
            Arg::Scalar(ScalarValue::new(2i8)),
            arr(&b, false, 0),
            arr(&out, true, 0),
        ];
        let p = strided_plan(&[3, 4, 5], &args).unwrap();
        assert_eq!(p.shape, vec![3, 4, 5]);
        assert_eq!(p.mask, vec![true, true, false]);
        assert_eq!(p.strides, vec![vec![0, 1, 0], vec![1, 3, 12]]);
        // Contiguous runs merge: a [6, 8] slice of columns 0..8 of a [6, 10] matrix.
        let m = Layout::c_contiguous(&[6, 10]).unwrap();
        let v = m.slice(&[SliceArg::All, SliceArg::range(0, 8)]).unwrap();
        let o = Layout::c_contiguous(&[6, 8]).unwrap();
        let p = strided_plan(&[6, 8], &[arr(&v, false, 0), arr(&o, true, 0)]).unwrap();
        assert_eq!(p.shape, vec![6, 8]);
        assert_eq!(p.mask, vec![true, false]);
        assert_eq!(p.strides, vec![vec![10, 1]]);
        // A reversed vector and a 0-d operand broadcast to it: one axis.
        let r = Layout::c_contiguous(&[7]).unwrap().flip(0).unwrap();
        let z = Layout::c_contiguous(&[]).unwrap();
        let o = Layout::c_contiguous(&[7]).unwrap();
        let p = strided_plan(
            &[7],
            &[arr(&r, false, 0), arr(&z, false, 0), arr(&o, true, 0)],
        )
        .unwrap();
        assert_eq!(p.mask, vec![true, true, false]);
        assert_eq!(p.strides, vec![vec![-1], vec![0]]);
        // Gather sources are never strided.
        let p = strided_plan(
            &[7],
            &[
                arr(&r, false, 0),
                Arg::Whole { mem: mem(0) },
                arr(&o, true, 0),
            ],
        )
        .unwrap();
        assert_eq!(p.mask, vec![true, false, false]);
        // Writing through a broadcast output or into another shape is refused; an operand
        // that does not broadcast is an error naming the shapes.
        let bo = Layout::c_contiguous(&[1, 5])
            .unwrap()
            .broadcast_to(&[4, 5])
            .unwrap();
        assert!(strided_plan(&[4, 5], &[arr(&bo, true, 0)]).is_err());
        let bad = Layout::c_contiguous(&[3]).unwrap();
        let e = strided_plan(&[4, 5], &[arr(&bad, false, 0)]).unwrap_err();
        assert!(
            e.to_string().contains("[3]") && e.to_string().contains("[4, 5]"),
            "{e}"
        );
    }

    #[test]
    fn strided_masks_are_exact_keys() {
        let mut long = vec![false; 65];
        long[0] = true;
        let mut aliased = vec![false; 65];
        aliased[64] = true; // bit 64 once folded onto bit 0
        assert_ne!(StridedMask::of(&long), StridedMask::of(&aliased));
        assert_ne!(StridedMask::of(&[true]), StridedMask::of(&[true, false]));
        assert_eq!(
            StridedMask::of(&[true, false]),
            StridedMask::of(&[true, false])
        );
    }
}
