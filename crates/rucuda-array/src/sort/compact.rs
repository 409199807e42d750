//! One-pass stream compaction (CUB's `DeviceSelect::Flagged` / `::If` and
//! `DevicePartition`): the elements whose flag is nonzero, or for which a predicate
//! holds, in order, by decoupled look-back over tiles (`cuda/compact.cu`).
//!
//! Each block also asks L2 to prefetch the tile (and flags) that a block starting about
//! one block lifetime later will take, at the scan's automatic distance
//! ([`DeviceFacts`](crate::scan::DeviceFacts)): on an H200 (2^28 f32, `x > 0.5f`, one
//! bench call, 2026-11-27) 990 GB/s with it against 898 without, CUB 2693 in the same
//! call. Doubling the distance (24 MiB, 857), 128-thread blocks (981), 8 or 32 elements
//! per thread (898, 780) did no better.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use rucuda_driver::{
    memset_d32_async, Access, ArgBuffer, DeviceBuffer, Function, LaunchConfig, Stream,
};

use super::engine::{push_array, push_range};
use crate::codegen::prelude::PREFETCH_L2;
use crate::codegen::prelude_for;
use crate::codegen::template::render;
use crate::compile::default_compiler;
use crate::dtype::{DType, DTypeKind, Element};
use crate::error::{ArrayError, Result};
use crate::layout::SliceArg;
use crate::scan::{parse_prefetch, DeviceFacts, L2Prefetch};
use crate::GpuArray;

const SOURCE: &str = include_str!("cuda/compact.cu");

/// Threads per block and elements per thread of the compaction
/// (`RUCUDA_SELECT_THREADS`, `RUCUDA_SELECT_ITEMS`; defaults 256 and 16 / 8 / 4 for
/// elements of up to 4, 8, 16 bytes).
fn shape(size: usize) -> (u32, u32) {
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
    };
    let threads = env("RUCUDA_SELECT_THREADS")
        .filter(|t| t % 32 == 0 && (32..=1024).contains(t))
        .unwrap_or(256);
    let default_items = match size {
        0..=4 => 16,
        5..=8 => 8,
        _ => 4,
    };
    let mut items = env("RUCUDA_SELECT_ITEMS")
        .filter(|i| (1..=64).contains(i))
        .unwrap_or(default_items);
    while items > 1 && threads as usize * items as usize * size > 40 * 1024 {
        items /= 2;
    }
    (threads, items)
}

/// Elements past its own tile each block asks L2 to prefetch: the scan's automatic
/// distance from the device's bandwidth and L2 (`RUCUDA_SELECT_PREFETCH`: `off`, `auto`
/// or bytes such as `12m`), in whole tiles of `tile` elements of `size` bytes.
fn prefetch_ahead(stream: &Stream, tile: usize, size: usize) -> Result<i64> {
    static KNOB: OnceLock<L2Prefetch> = OnceLock::new();
    let prefetch = *KNOB.get_or_init(|| {
        std::env::var("RUCUDA_SELECT_PREFETCH")
            .ok()
            .and_then(|v| parse_prefetch(&v))
            .unwrap_or(L2Prefetch::Auto)
    });
    let tiles = DeviceFacts::of(stream.context())?.tiles_ahead(prefetch, tile * size);
    Ok(i64::try_from(tiles.saturating_mul(tile as u64)).unwrap_or(i64::MAX))
}

/// Which elements a compaction keeps.
enum Keep<'e> {
    /// Nonzero flags of this type.
    Flags(DType),
    /// A predicate over `x`.
    Expr(&'e str),
}

/// The source and entry of a compaction of `dtype` elements.
fn source(
    dtype: DType,
    keep: &Keep<'_>,
    partition: bool,
    threads: u32,
    items: u32,
) -> Result<(String, String)> {
    let (flag_t, keep_text, flag_prelude) = match keep {
        Keep::Flags(f) => {
            let test = match f.kind() {
                DTypeKind::Complex => {
                    return Err(ArrayError::InvalidArgument(
                        "select: complex flags are not supported".into(),
                    ))
                }
                DTypeKind::Float if matches!(f, DType::F16 | DType::BF16) => {
                    "  return (float)flags[i] != 0.0f;\n".to_string()
                }
                _ => "  return flags[i] != 0;\n".to_string(),
            };
            (f.c_type(), format!("  (void)x;\n{test}"), Some(*f))
        }
        Keep::Expr(e) => (
            "unsigned char",
            format!("  (void)flags;\n  (void)i;\n  return ({e});\n"),
            None,
        ),
    };
    let entry = format!(
        "rucuda_{}_{}_{}",
        if partition { "partition" } else { "compact" },
        dtype.to_string().to_lowercase(),
        match keep {
            Keep::Flags(f) => f.to_string().to_lowercase(),
            Keep::Expr(_) => "expr".into(),
        }
    );
    let prelude = prelude_for([dtype].into_iter().chain(flag_prelude));
    let src = render(
        SOURCE,
        &[
            ("PRELUDE", &prelude),
            ("PREFETCH_L2", PREFETCH_L2),
            ("T", dtype.c_type()),
            ("FLAG_T", flag_t),
            ("THREADS", &threads.to_string()),
            ("ITEMS", &items.to_string()),
            ("PARTITION", if partition { "1" } else { "0" }),
            ("KEEP", &keep_text),
            ("ENTRY", &entry),
        ],
    )?;
    Ok((src, entry))
}

/// The compaction source for `dtype` elements kept by nonzero flags of `flags`, writing
/// the others too when `partition` (for the NVRTC tests).
///
/// ```
/// use rucuda_array::DType;
/// let s = rucuda_array::sort::compact_source(DType::F32, DType::Bool, false)?;
/// assert!(s.contains("rucuda_compact_float32_bool"));
/// let p = rucuda_array::sort::compact_source(DType::F32, DType::Bool, true)?;
/// assert!(p.contains("rucuda_partition_float32_bool"));
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn compact_source(dtype: DType, flags: DType, partition: bool) -> Result<String> {
    let (t, i) = shape(dtype.size_bytes());
    Ok(source(dtype, &Keep::Flags(flags), partition, t, i)?.0)
}

fn kernel(stream: &Stream, src: &str, entry: &str) -> Result<Function> {
    static CACHE: OnceLock<Mutex<HashMap<(u64, String), Function>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (stream.context().id(), src.to_string());
    if let Some(f) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(f.clone());
    }
    let loaded = default_compiler().load(stream.context(), src, &[entry])?;
    let f = loaded
        .functions
        .into_iter()
        .next()
        .ok_or_else(|| ArrayError::Compile {
            kernel: entry.into(),
            message: "no kernel returned".into(),
        })?;
    crate::pool::retain_freed_memory(stream.context());
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, f.clone());
    Ok(f)
}

fn contiguous<T: Element>(a: &GpuArray<T>) -> Result<GpuArray<T>> {
    let f = a.ravel()?;
    if f.is_c_contiguous() {
        Ok(f)
    } else {
        f.copy()
    }
}

/// Compacts the flattened `a` (flags: the flattened `flags`, or none for a predicate):
/// the kept elements and, for a partition, the others; each a view of an n-element
/// buffer. Waits for the stream (the count).
fn compact<T: Element, M: Element>(
    a: &GpuArray<T>,
    flags: Option<&GpuArray<M>>,
    keep: Keep<'_>,
    partition: bool,
) -> Result<(GpuArray<T>, Option<GpuArray<T>>)> {
    let stream = a.stream().clone();
    let x = contiguous(a)?;
    let f = match flags {
        Some(m) => {
            if m.context() != a.context() {
                return Err(ArrayError::ContextMismatch);
            }
            if m.shape() != a.shape() {
                return Err(crate::layout::LayoutError::BroadcastTo {
                    from: m.shape().to_vec(),
                    to: a.shape().to_vec(),
                }
                .into());
            }
            // A copy of the flags is made on their stream: wait for it.
            let c = contiguous(m)?;
            crate::ordering::before_on(&stream, &[c.stream()])?;
            Some(c)
        }
        None => None,
    };
    let n = x.len();
    let selected = GpuArray::<T>::empty(&stream, &[n])?;
    let rejected = if partition {
        Some(GpuArray::<T>::empty(&stream, &[n])?)
    } else {
        None
    };
    let count = GpuArray::<u64>::zeros(&stream, &[1])?;
    if n > 0 {
        let (threads, items) = shape(T::DTYPE.size_bytes());
        let (src, entry) = source(T::DTYPE, &keep, partition, threads, items)?;
        let k = kernel(&stream, &src, &entry)?;
        let tile = threads as usize * items as usize;
        let tiles = n.div_ceil(tile);
        if tiles > i32::MAX as usize {
            return Err(ArrayError::InvalidArgument(format!(
                "select: {n} elements are too many tiles"
            )));
        }
        let mut status = DeviceBuffer::<u32>::uninit_async(&stream, 2 * tiles)?;
        memset_d32_async(&mut status, 0, 2 * tiles, &stream)?;
        let mut counter = DeviceBuffer::<u32>::uninit_async(&stream, 1)?;
        memset_d32_async(&mut counter, 0, 1, &stream)?;
        let mut buf = ArgBuffer::new();
        push_array(&mut buf, &x, &stream, Access::Read)?;
        match &f {
            Some(m) => push_range(
                &mut buf,
                m.memory().elements(m.nbytes())?,
                &stream,
                Access::Read,
            )?,
            None => {
                buf.push(0u64);
            }
        }
        buf.push(n as i64);
        push_array(&mut buf, &selected, &stream, Access::Write)?;
        match &rejected {
            Some(r) => push_range(
                &mut buf,
                r.memory().elements(r.nbytes())?,
                &stream,
                Access::Write,
            )?,
            None => {
                buf.push(0u64);
            }
        }
        buf.push_memory(&status, &stream, Access::Write)?;
        buf.push_memory(&counter, &stream, Access::Write)?;
        push_array(&mut buf, &count, &stream, Access::Write)?;
        buf.push(prefetch_ahead(&stream, tile, T::DTYPE.size_bytes())?);
        // SAFETY: one block per tile of the n elements (tiles by ticket from the zeroed
        // counter, statuses zeroed, one 64-bit word per tile); each reads its tile of
        // `x` (and of the flags, n elements) and writes its kept elements at positions
        // below the running count (≤ n) of `selected` and its others below n of
        // `rejected` (both n elements), and the last tile the count.
        unsafe { k.launch_args(LaunchConfig::linear(tiles as u32, threads), &stream, &buf)? };
    }
    let kept = count.to_vec()?.first().copied().unwrap_or(0) as usize;
    if let Some(m) = &f {
        crate::ordering::after_on(&stream, &[m.stream()])?;
    }
    let sel = selected.slice(&[SliceArg::range(0, kept as isize)])?;
    let rej = match rejected {
        Some(r) => Some(r.slice(&[SliceArg::range(0, (n - kept.min(n)) as isize)])?),
        None => None,
    };
    Ok((sel, rej))
}

impl<T: Element> GpuArray<T> {
    /// CUB's `DeviceSelect::Flagged` (NumPy's `a[flags != 0]` on the flattened arrays):
    /// the elements whose flag is nonzero, in row-major order, in one pass (a view of a
    /// buffer of this array's size). `flags` must have this array's shape. Waits for the
    /// stream (the result's size).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::GpuArray;
    /// let a = GpuArray::from_slice(&stream, &[1.0f32, -2.0, 3.0, -4.0])?;
    /// let keep = a.greater(0.0f32)?;
    /// assert_eq!(a.select_flagged(&keep)?.to_vec()?, vec![1.0, 3.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn select_flagged<M: Element>(&self, flags: &GpuArray<M>) -> Result<GpuArray<T>> {
        Ok(compact(self, Some(flags), Keep::Flags(M::DTYPE), false)?.0)
    }

    /// CUB's `DevicePartition::Flagged`: the elements with nonzero flags and the others,
    /// each in row-major order, in one pass. Waits for the stream.
    pub fn partition_flagged<M: Element>(
        &self,
        flags: &GpuArray<M>,
    ) -> Result<(GpuArray<T>, GpuArray<T>)> {
        let (s, r) = compact(self, Some(flags), Keep::Flags(M::DTYPE), true)?;
        Ok((
            s,
            r.ok_or_else(|| ArrayError::InvalidArgument("partition: no second part".into()))?,
        ))
    }

    /// CUB's `DeviceSelect::If`: the elements `x` for which the CUDA C predicate holds
    /// (`"x > 0.5f"`), in row-major order, in one pass. Waits for the stream.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[5i32, 12, 7, 30])?;
    /// // SAFETY: the predicate reads only `x`.
    /// let big = unsafe { a.select_if("x >= 10") }?;
    /// assert_eq!(big.to_vec()?, vec![12, 30]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    ///
    /// # Safety
    /// `predicate` is CUDA C compiled and run as written with each element as `x` (of
    /// this array's C type): it must read nothing but `x` and be free of undefined
    /// behaviour.
    pub unsafe fn select_if(&self, predicate: &str) -> Result<GpuArray<T>> {
        Ok(compact::<T, u8>(self, None, Keep::Expr(predicate), false)?.0)
    }

    /// CUB's `DevicePartition::If`: the elements for which `predicate` holds and the
    /// others, each in row-major order, in one pass. Waits for the stream.
    ///
    /// # Safety
    /// As for [`GpuArray::select_if`].
    pub unsafe fn partition_if(&self, predicate: &str) -> Result<(GpuArray<T>, GpuArray<T>)> {
        let (s, r) = compact::<T, u8>(self, None, Keep::Expr(predicate), true)?;
        Ok((
            s,
            r.ok_or_else(|| ArrayError::InvalidArgument("partition: no second part".into()))?,
        ))
    }
}
