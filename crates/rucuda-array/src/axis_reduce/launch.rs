//! Compiling (once per context, operation and element type) and launching the axis
//! kernels of `cuda/kernels.cu`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use rucuda_driver::{
    Access, ArgBuffer, DeviceAttribute, DeviceBuffer, DevicePointerArg, DevicePtr, Function, InUse,
    LaunchConfig, OccupancyFlags, Stream,
};

use super::ops::{fold, output_dtype, AxisOp};
use super::plan::{schedule, DeviceFill, Kind, Plan, BLOCK, MAXD};
use crate::array::GpuArray;
use crate::codegen::prelude::{prelude_for, SHUFFLES};
use crate::codegen::template::render;
use crate::compile::{default_compiler, load_kernels};
use crate::dtype::{DType, Element};
use crate::error::{ArrayError, Result};

/// The three kernels (see the template's header).
const KERNELS: &str = include_str!("cuda/kernels.cu");

/// One (operation, element type)'s kernels in one context.
struct Loaded {
    rows: Function,
    cols: Function,
    merge: Function,
    fill: DeviceFill,
    acc_bytes: usize,
}

/// The source of `op` over `d` (for inspection and tests).
pub(crate) fn source(op: AxisOp, d: DType) -> Result<String> {
    let out = output_dtype(op, d)?;
    let f = fold(op, d)?;
    Ok(render(
        KERNELS,
        &[
            ("PRELUDE", &prelude_for([d, out])),
            ("SHUFFLES", SHUFFLES),
            ("OPS", &f.source),
            ("MAXD", &MAXD.to_string()),
        ],
    )?)
}

fn loaded(stream: &Stream, op: AxisOp, d: DType) -> Result<Arc<Loaded>> {
    type Memo = Mutex<HashMap<(u64, AxisOp, DType), Arc<Loaded>>>;
    static MEMO: OnceLock<Memo> = OnceLock::new();
    let ctx = stream.context();
    let key = (ctx.id(), op, d);
    let mut map = MEMO
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(l) = map.get(&key) {
        return Ok(Arc::clone(l));
    }
    let src = source(op, d)?;
    let compiler = default_compiler();
    let [rows, cols, merge] = load_kernels(
        &*compiler,
        ctx,
        &src,
        ["rucuda_axis_rows", "rucuda_axis_cols", "rucuda_axis_merge"],
    )?;
    let sms = ctx
        .device()
        .attribute(DeviceAttribute::MultiprocessorCount)?
        .max(1) as u32;
    let per_sm = |f: &Function| -> Result<u32> {
        Ok(
            f.max_active_blocks_per_multiprocessor(BLOCK, 0, OccupancyFlags::DEFAULT)?
                .max(1),
        )
    };
    let fill = DeviceFill {
        sms,
        rows_per_sm: per_sm(&rows)?,
        cols_per_sm: per_sm(&cols)?,
    };
    let l = Arc::new(Loaded {
        rows,
        cols,
        merge,
        fill,
        acc_bytes: fold(op, d)?.acc_bytes,
    });
    map.insert(key, Arc::clone(&l));
    Ok(l)
}

/// Runs `op` over `a` as `plan` says into `out` (C-contiguous, `plan.nout` elements of
/// the operation's result type), on `a`'s stream.
pub(crate) fn launch<T: Element, O: Element>(
    a: &GpuArray<T>,
    op: AxisOp,
    plan: &Plan,
    ddof: f64,
    out: &mut GpuArray<O>,
) -> Result<()> {
    if O::DTYPE != output_dtype(op, T::DTYPE)? || out.len() != plan.nout || !out.is_c_contiguous() {
        return Err(ArrayError::InvalidArgument(format!(
            "axis {}: internal output mismatch ({} of shape {:?})",
            op.name(),
            O::DTYPE,
            out.shape()
        )));
    }
    if plan.nout == 0 {
        return Ok(());
    }
    let stream = a.stream().clone();
    let l = loaded(&stream, op, T::DTYPE)?;
    let s = schedule(plan, l.fill);
    let geometry = plan.geometry(&s)?;
    let partials = if s.splits > 1 {
        let bytes = s
            .splits
            .checked_mul(plan.nout)
            .and_then(|v| v.checked_mul(l.acc_bytes))
            .ok_or_else(|| {
                ArrayError::InvalidArgument(format!("axis {}: too many partials", op.name()))
            })?;
        Some(DeviceBuffer::<u8>::uninit_async(&stream, bytes)?)
    } else {
        None
    };
    // An empty reduction reads nothing: no use of the (possibly empty) input.
    let x = if plan.len == 0 {
        InUse::null()
    } else {
        a.memory().use_on(&stream, Access::Read)?
    };
    let y = out.memory().use_on(&stream, Access::Write)?;
    let p = match &partials {
        Some(p) => p.device_range().use_on(&stream, Access::Write)?,
        None => InUse::null(),
    };
    let mut buf = ArgBuffer::new();
    buf.push(DevicePointerArg(x.ptr()));
    buf.push(DevicePointerArg(y.ptr()));
    buf.push(DevicePointerArg(p.ptr()));
    buf.push(geometry);
    buf.push(ddof);
    let f = match s.kind {
        Kind::Rows => &l.rows,
        Kind::Cols => &l.cols,
    };
    // SAFETY: the kernel was generated for T's elements, O's results and this fold. It
    // reads `a` only at element 0's address plus offsets built from `a`'s own shape and
    // strides (the plan keeps every (length, stride) pair or merges neighbours into an
    // axis covering the same elements), so inside `a`'s buffer, which `x` records as read;
    // nothing when `len` is 0. It writes `nout` results to `out` (checked above: `nout`
    // contiguous elements of O) or, with splits > 1, `splits * nout` accumulators of at
    // most `acc_bytes` each into `partials`, allocated with that size.
    unsafe { f.launch_args(LaunchConfig::linear(s.grid, BLOCK), &stream, &buf)? };
    if partials.is_some() {
        let mut buf2 = ArgBuffer::new();
        buf2.push(DevicePointerArg(p.ptr()));
        buf2.push(DevicePointerArg(y.ptr()));
        buf2.push(geometry);
        buf2.push(ddof);
        let grid = plan
            .nout
            .div_ceil(BLOCK as usize)
            .clamp(1, (l.fill.sms as usize * 32).min(u32::MAX as usize)) as u32;
        // SAFETY: reads the `splits * nout` partials the first kernel wrote (ordered
        // before it on `stream`; their use is recorded as a write, which covers the
        // read) and writes `nout` results to `out`, as above.
        unsafe {
            l.merge
                .launch_args(LaunchConfig::linear(grid, BLOCK), &stream, &buf2)?
        };
    }
    drop((x, y, p));
    // `partials` is freed here, ordered on `stream` after both launches.
    Ok(())
}
