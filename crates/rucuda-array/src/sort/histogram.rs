//! NumPy's `histogram` (even bins over a range, or explicit edges) and `bincount`:
//! counts privatized per block in shared memory (while the bins fit), 16-byte loads.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use rucuda_driver::{Access, ArgBuffer, DeviceAttribute, Function, LaunchConfig, Stream};

use super::engine::{push_array, push_range};
use crate::codegen::prelude_for;
use crate::codegen::template::render;
use crate::compile::default_compiler;
use crate::dtype::{DType, DTypeKind, Element};
use crate::error::{ArrayError, Result};
use crate::GpuArray;

const SOURCE: &str = include_str!("cuda/histogram.cu");
/// Bins counted in shared memory at most (48 KiB of 32-bit counters).
const SHARED_BINS: usize = 12 * 1024;
const THREADS: u32 = 256;

/// The source of the histogram kernel for elements of `dtype` (entry
/// `rucuda_histogram_<NumPy type name>_histogram`).
///
/// ```
/// let s = rucuda_array::sort::histogram_source(rucuda_array::DType::U8)?;
/// assert!(s.contains("rucuda_histogram_uint8_histogram"));
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn histogram_source(dtype: DType) -> Result<String> {
    let (to_double, to_int) = match dtype.kind() {
        DTypeKind::Complex => {
            return Err(ArrayError::InvalidArgument(format!(
                "histogram: {dtype} values have no order"
            )))
        }
        DTypeKind::Float if matches!(dtype, DType::F16 | DType::BF16) => {
            ("(double)(float)(x)", "(long long)(float)(x)")
        }
        DTypeKind::Float => ("(double)(x)", "(long long)(x)"),
        _ => ("(double)(x)", "(long long)(x)"),
    };
    Ok(render(
        SOURCE,
        &[
            ("PRELUDE", &prelude_for([dtype])),
            ("T", dtype.c_type()),
            ("TO_DOUBLE", to_double),
            ("TO_INT", to_int),
            ("ENTRY", &entry(dtype)),
        ],
    )?)
}

fn entry(dtype: DType) -> String {
    format!("rucuda_histogram_{}", dtype.to_string().to_lowercase())
}

fn kernel(stream: &Stream, dtype: DType) -> Result<Function> {
    static CACHE: OnceLock<Mutex<HashMap<(u64, DType), Function>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (stream.context().id(), dtype);
    if let Some(f) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(f.clone());
    }
    let source = histogram_source(dtype)?;
    let name = format!("{}_histogram", entry(dtype));
    let loaded = default_compiler().load(stream.context(), &source, &[&name])?;
    let f = loaded
        .functions
        .into_iter()
        .next()
        .ok_or_else(|| ArrayError::Compile {
            kernel: name,
            message: "no kernel returned".into(),
        })?;
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, f.clone());
    Ok(f)
}

/// NumPy's `linspace(lo, hi, bins + 1)`.
fn even_edges(lo: f64, hi: f64, bins: usize) -> Vec<f64> {
    let step = (hi - lo) / bins as f64;
    let mut e: Vec<f64> = (0..=bins).map(|i| i as f64 * step + lo).collect();
    if let Some(last) = e.last_mut() {
        *last = hi;
    }
    e
}

/// How elements become bins.
enum Bins<'e> {
    /// `bins` even bins over [lo, hi] (NumPy's linspace edges, computed on the device).
    Even { lo: f64, hi: f64 },
    /// Between explicit increasing edges.
    Edges(&'e [f64]),
    /// The integer value (bincount).
    Values,
    /// Integers over the integral [lo, hi] in bins of the integral `width`.
    IntegerEven { lo: f64, hi: f64, width: i64 },
}

/// Counts the elements of `a` into `bins` bins.
fn count<T: Element>(a: &GpuArray<T>, how: Bins<'_>, bins: usize) -> Result<GpuArray<i64>> {
    let (mode, edges, lo, hi, width): (i32, &[f64], f64, f64, i64) = match how {
        Bins::Even { lo, hi } => (0, &[], lo, hi, 1),
        Bins::Edges(e) => (1, e, e[0], e[e.len() - 1], 1),
        Bins::Values => (2, &[], 0.0, 0.0, 1),
        Bins::IntegerEven { lo, hi, width } => (3, &[], lo, hi, width),
    };
    let step = (hi - lo) / bins.max(1) as f64;
    let stream = a.stream().clone();
    let counts = GpuArray::<u64>::zeros(&stream, &[bins])?;
    let x = {
        let f = a.ravel()?;
        if f.is_c_contiguous() {
            f
        } else {
            f.copy()?
        }
    };
    let n = x.len();
    if n > 0 && bins > 0 {
        let f = kernel(&stream, T::DTYPE)?;
        // Only explicit edges travel to the device.
        let edges_dev = if mode == 1 {
            Some(GpuArray::<f64>::from_slice(&stream, edges)?)
        } else {
            None
        };
        let sms = stream
            .context()
            .device()
            .attribute(DeviceAttribute::MultiprocessorCount)?
            .max(1) as usize;
        let per_sm = std::env::var("RUCUDA_HISTOGRAM_BLOCKS_PER_SM")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(8)
            .max(1);
        let grid = (sms * per_sm).min(n.div_ceil(THREADS as usize)).max(1);
        // Shared counters are 32-bit: each block must count fewer than 2^32 elements.
        let shared = bins <= SHARED_BINS && n / grid < u32::MAX as usize;
        let mem = x.memory();
        let vectorized = mem.is_aligned(16) && T::DTYPE.size_bytes() <= 16;
        let xr = mem.elements(x.nbytes())?;
        let mut buf = ArgBuffer::new();
        push_range(&mut buf, xr, &stream, Access::Read)?;
        buf.push(n as i64);
        buf.push(i32::from(vectorized));
        buf.push(mode);
        match &edges_dev {
            Some(e) => push_range(
                &mut buf,
                e.memory().elements(e.nbytes())?,
                &stream,
                Access::Read,
            )?,
            None => {
                buf.push(0u64);
            }
        }
        buf.push(bins as i64);
        buf.push(lo);
        buf.push(hi);
        buf.push(step);
        buf.push(width);
        buf.push(i32::from(shared));
        push_array(&mut buf, &counts, &stream, Access::Write)?;
        let config = LaunchConfig {
            grid: (grid as u32, 1, 1),
            block: (THREADS, 1, 1),
            shared_mem_bytes: if shared { (bins * 4) as u32 } else { 0 },
        };
        // SAFETY: reads the n elements of `x` (16-byte loads only when aligned, whole
        // vectors below n) and, in mode 1 only, the bins + 1 explicit edges; counts only
        // bins 0..bins into `counts` (bins elements) and the shared counters (bins of
        // them when `shared`).
        unsafe { f.launch_args(config, &stream, &buf)? };
    }
    counts.reinterpret::<i64>()
}

/// Host value of a one-element array as f64.
fn scalar_f64<T: Element>(a: &GpuArray<T>) -> Result<f64> {
    a.astype::<f64>()?
        .to_vec()?
        .first()
        .copied()
        .ok_or_else(|| ArrayError::InvalidArgument("empty reduction".into()))
}

impl<T: Element> GpuArray<T> {
    /// NumPy's `np.histogram(a, bins, range)` with even bins: the `i64` counts of the
    /// flattened array in `bins` equal bins over `range` (the last bin closed; values
    /// outside and NaNs not counted) and the `bins + 1` edges. `range` `None` takes the
    /// data's minimum and maximum (waiting for the stream), as NumPy. Bin positions are
    /// computed in `f64` with NumPy's corrections at the edges.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[0.5f32, 1.0, 1.5, 4.0, 9.0])?;
    /// let (counts, edges) = a.histogram(4, Some((0.0, 4.0)))?;
    /// assert_eq!(counts.to_vec()?, vec![1, 2, 0, 1]);
    /// assert_eq!(edges, vec![0.0, 1.0, 2.0, 3.0, 4.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn histogram(
        &self,
        bins: usize,
        range: Option<(f64, f64)>,
    ) -> Result<(GpuArray<i64>, Vec<f64>)> {
        if bins == 0 {
            return Err(ArrayError::InvalidArgument(
                "histogram: bins must be positive".into(),
            ));
        }
        let (mut lo, mut hi) = match range {
            Some(r) => r,
            None if self.is_empty() => (0.0, 1.0),
            None => (scalar_f64(&self.min()?)?, scalar_f64(&self.max()?)?),
        };
        if !(lo.is_finite() && hi.is_finite()) || lo > hi {
            return Err(ArrayError::InvalidArgument(format!(
                "histogram: range [{lo}, {hi}] is not a finite increasing range"
            )));
        }
        if lo == hi {
            lo -= 0.5;
            hi += 0.5;
        }
        let edges = even_edges(lo, hi, bins);
        // Integers over an integral range in bins of an integral width: integer division
        // gives NumPy's bins exactly, without the edge corrections.
        let width = (hi - lo) / bins as f64;
        let integral = |x: f64| x.fract() == 0.0 && x.abs() < 9.0e15;
        if matches!(
            T::DTYPE.kind(),
            DTypeKind::Bool | DTypeKind::SignedInt | DTypeKind::UnsignedInt
        ) && integral(lo)
            && integral(hi)
            && integral(width)
            && width >= 1.0
            && width * bins as f64 == hi - lo
        {
            let how = Bins::IntegerEven {
                lo,
                hi,
                width: width as i64,
            };
            return Ok((count(self, how, bins)?, edges));
        }
        Ok((count(self, Bins::Even { lo, hi }, bins)?, edges))
    }

    /// NumPy's `np.histogram(a, bins=edges)`: counts of the flattened array between
    /// increasing `edges` (each bin half-open but the last, closed).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[1i32, 2, 2, 5, 10])?;
    /// assert_eq!(a.histogram_edges(&[0.0, 2.0, 5.0, 10.0])?.to_vec()?, vec![1, 2, 2]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn histogram_edges(&self, edges: &[f64]) -> Result<GpuArray<i64>> {
        if edges.len() < 2
            || edges.windows(2).any(|w| {
                w[0].partial_cmp(&w[1])
                    .is_none_or(|o| o == std::cmp::Ordering::Greater)
            })
        {
            return Err(ArrayError::InvalidArgument(
                "histogram: edges must be at least two, increasing".into(),
            ));
        }
        count(self, Bins::Edges(edges), edges.len() - 1)
    }

    /// NumPy's `np.bincount(x, minlength)`: how many times each value `0..=max(x)`
    /// occurs in the flattened integer array (at least `minlength` bins). Negative values
    /// are an error. Waits for the stream (the bins' number comes from the maximum).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[1u8, 3, 1, 0])?;
    /// assert_eq!(a.bincount(0)?.to_vec()?, vec![1, 2, 0, 1]);
    /// assert_eq!(a.bincount(6)?.to_vec()?, vec![1, 2, 0, 1, 0, 0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn bincount(&self, minlength: usize) -> Result<GpuArray<i64>> {
        if !matches!(
            T::DTYPE.kind(),
            DTypeKind::Bool | DTypeKind::SignedInt | DTypeKind::UnsignedInt
        ) {
            return Err(ArrayError::InvalidArgument(format!(
                "bincount needs integers, not {}",
                T::DTYPE
            )));
        }
        let bins = if self.is_empty() {
            minlength
        } else {
            let min = scalar_f64(&self.min()?)?;
            if min < 0.0 {
                return Err(ArrayError::InvalidArgument(format!(
                    "bincount: the array holds a negative value ({min})"
                )));
            }
            let max = scalar_f64(&self.max()?)?;
            let max = usize::try_from(max as u64)
                .map_err(|_| ArrayError::InvalidArgument(format!("bincount: {max} bins")))?;
            (max + 1).max(minlength)
        };
        count(self, Bins::Values, bins)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn even_edges_match_numpy_linspace() {
        assert_eq!(
            super::even_edges(0.0, 1.0, 4),
            vec![0.0, 0.25, 0.5, 0.75, 1.0]
        );
        let e = super::even_edges(-1.0, 0.3, 3);
        assert_eq!(e.len(), 4);
        assert_eq!(e[3], 0.3);
    }
}
