//! A stable merge sort by a user comparison (`less` over `a` and `b` in CUDA C): the
//! fallback for orders that no radix key expresses (lexicographic orders of structs,
//! orders with ties broken by another field, partial keys). Each pass merges sorted runs
//! pairwise, every element placing itself by a binary search in the other run
//! (`cuda/merge.cu`); ⌈log2(row length)⌉ passes.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use rucuda_driver::{Access, ArgBuffer, DeviceAttribute, Function, LaunchConfig, Stream};

use super::api::{axis_back, axis_last, rows_of};
use super::engine::push_range;
use crate::codegen::prelude_for;
use crate::codegen::template::render;
use crate::compile::{default_compiler, load_kernels};
use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::GpuArray;

const SOURCE: &str = include_str!("cuda/merge.cu");

/// The merge pass source for elements of `dtype` ordered by `less` (entry
/// `rucuda_merge_<type>`).
///
/// ```
/// let s = rucuda_array::sort::merge_source(rucuda_array::DType::F32, "a < b")?;
/// assert!(s.contains("rucuda_merge_float32"));
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn merge_source(dtype: DType, less: &str) -> Result<String> {
    Ok(render(
        SOURCE,
        &[
            ("PRELUDE", &prelude_for([dtype])),
            ("T", dtype.c_type()),
            ("LESS", less),
            ("ENTRY", &entry(dtype)),
        ],
    )?)
}

fn entry(dtype: DType) -> String {
    format!("rucuda_merge_{}", dtype.to_string().to_lowercase())
}

/// Loaded merge kernels per (context, element type, comparison).
type Cache = Mutex<HashMap<(u64, DType, String), Function>>;

fn kernel(stream: &Stream, dtype: DType, less: &str) -> Result<Function> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (stream.context().id(), dtype, less.to_string());
    if let Some(f) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(f.clone());
    }
    let src = merge_source(dtype, less)?;
    let name = entry(dtype);
    let [f] = load_kernels(&*default_compiler(), stream.context(), &src, [&*name])?;
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, f.clone());
    Ok(f)
}

impl<T: Element> GpuArray<T> {
    /// A stable sort along `axis` by the CUDA C comparison `less` over elements `a` and
    /// `b` (a strict weak order: `"a.re < b.re || (a.re == b.re && a.im < b.im)"` sorts
    /// complex numbers lexicographically), with the `i64` positions that sort each row.
    /// A merge sort: use the radix sorts ([`GpuArray::sort`],
    /// [`GpuArray::sort_by_key_expr`]) wherever a key expresses the order.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{Complex, GpuArray};
    /// let z = GpuArray::from_slice(&stream, &[Complex::new(1.0f32, 2.0), Complex::new(0.5, 9.0), Complex::new(1.0, -1.0)])?;
    /// // SAFETY: the comparison reads only `a` and `b`.
    /// let (s, p) = unsafe { z.sort_by_less("a.re < b.re || (a.re == b.re && a.im < b.im)", -1) }?;
    /// assert_eq!(p.to_vec()?, vec![1, 2, 0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    ///
    /// # Safety
    /// `less` is CUDA C compiled and run as written with two elements `a` and `b` (of this
    /// array's C type): it must read nothing else, be free of undefined behaviour, and be
    /// a strict weak order (else the results' contents are unspecified).
    pub unsafe fn sort_by_less(
        &self,
        less: &str,
        axis: isize,
    ) -> Result<(GpuArray<T>, GpuArray<i64>)> {
        let (src, ax) = axis_last(self, axis)?;
        let stream = src.stream().clone();
        let (rows, len) = rows_of(&src);
        let total = rows * len;
        let bufs = [
            GpuArray::<T>::empty(&stream, src.shape())?,
            GpuArray::<T>::empty(&stream, src.shape())?,
        ];
        let pos = [
            GpuArray::<i64>::empty(&stream, src.shape())?,
            GpuArray::<i64>::empty(&stream, src.shape())?,
        ];
        if total == 0 {
            let [k, _] = bufs;
            let [p, _] = pos;
            return Ok((axis_back(k, ax)?, axis_back(p, ax)?));
        }
        let f = kernel(&stream, T::DTYPE, less)?;
        let sms = stream
            .context()
            .device()
            .attribute(DeviceAttribute::MultiprocessorCount)?
            .max(1) as usize;
        let grid = total.div_ceil(256).clamp(1, sms * 32) as u32;
        // Pass 0 reads the input and writes buffer 0; pass p writes buffer p % 2.
        let mut width = 1usize;
        let mut pass = 0usize;
        loop {
            let (dst, srcb) = (pass % 2, (pass + 1) % 2);
            let mut buf = ArgBuffer::new();
            let input = if pass == 0 {
                src.memory().elements(src.nbytes())?
            } else {
                bufs[srcb].memory().elements(bufs[srcb].nbytes())?
            };
            push_range(&mut buf, input, &stream, Access::Read)?;
            push_range(
                &mut buf,
                bufs[dst].memory().elements(bufs[dst].nbytes())?,
                &stream,
                Access::Write,
            )?;
            if pass == 0 {
                buf.push(0u64);
            } else {
                push_range(
                    &mut buf,
                    pos[srcb].memory().elements(pos[srcb].nbytes())?,
                    &stream,
                    Access::Read,
                )?;
            }
            push_range(
                &mut buf,
                pos[dst].memory().elements(pos[dst].nbytes())?,
                &stream,
                Access::Write,
            )?;
            buf.push(total as i64);
            buf.push(len as i64);
            buf.push(width as i64);
            // SAFETY: reads the `total` elements (and positions) of the source, writes each
            // element of each row once at a position inside its own row's merged pair of
            // runs (checked in the kernel) of the destination; sources and destinations
            // are distinct arrays of `total` elements.
            unsafe { f.launch_args(LaunchConfig::linear(grid, 256), &stream, &buf)? };
            pass += 1;
            if 2 * width >= len {
                break;
            }
            width *= 2;
        }
        let last = (pass - 1) % 2;
        let [b0, b1] = bufs;
        let [p0, p1] = pos;
        let (k, p) = if last == 0 { (b0, p0) } else { (b1, p1) };
        Ok((axis_back(k, ax)?, axis_back(p, ax)?))
    }
}
