//! NumPy's `histogram` (even bins over a range, or explicit edges) and `bincount`:
//! counts privatized per block in shared memory (while the bins fit), 16-byte loads.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use rucuda_driver::{Access, ArgBuffer, Function, LaunchConfig, Stream};

use super::engine::{push_array, push_range};
use crate::codegen::prelude_for;
use crate::codegen::template::render;
use crate::compile::{default_compiler, load_kernel_list};
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
    let float_input = if matches!(dtype, DType::F32 | DType::F16 | DType::BF16) {
        "1"
    } else {
        "0"
    };
    // Every value of the 8- and 16-bit integer types (the lanes kernels count them with
    // no test when each value has its own bin); an empty range for the others.
    let (type_min, type_max) = match dtype {
        DType::Bool => (0, 1),
        DType::U8 => (0, i32::from(u8::MAX)),
        DType::I8 => (i32::from(i8::MIN), i32::from(i8::MAX)),
        DType::U16 => (0, i32::from(u16::MAX)),
        DType::I16 => (i32::from(i16::MIN), i32::from(i16::MAX)),
        _ => (1, 0),
    };
    Ok(render(
        SOURCE,
        &[
            ("PRELUDE", &prelude_for([dtype])),
            ("T", dtype.c_type()),
            ("TO_DOUBLE", to_double),
            ("TO_INT", to_int),
            ("FLOAT_INPUT", float_input),
            ("TYPE_MIN", &type_min.to_string()),
            ("TYPE_MAX", &type_max.to_string()),
            ("ENTRY", &entry(dtype)),
        ],
    )?)
}

/// Which histogram kernel counts (`RUCUDA_HISTOGRAM_VARIANT`: `classic` or `lanes`; or
/// [`set_histogram_variant`] for the whole process, as the bench's sweep does).
///
/// ```
/// use rucuda_array::sort::HistogramVariant;
/// assert_eq!(HistogramVariant::parse("lanes"), Some(HistogramVariant::Lanes));
/// assert_eq!(HistogramVariant::default(), HistogramVariant::Lanes);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum HistogramVariant {
    /// One copy of the bins per block in shared memory, the mode chosen at run time; also
    /// where the lanes kernels' copies do not fit.
    Classic,
    /// 32 copies of the bins per block (lane j of each warp counts into copy j: no bank or
    /// address conflicts among a warp's atomics), one kernel per mode, and for float
    /// inputs in even bins a float estimate of the bin that takes the exact double path
    /// only near an edge. Used where the copies fit 48 KiB of shared memory (up to 383
    /// bins); elsewhere the classic kernel counts. The default: on the H200 it counted
    /// 256 bins of 2^28 `u8` at 690 GB/s (classic 598) and of `f32` at 2386 GB/s (classic
    /// 1160). With one loop per way of placing a value, one unconditional atomic per
    /// element and four loads in flight per thread: 2642 GB/s for the `u8` case (CUB
    /// 1974) and 2878 for `f32` (CUB 2923), H100, one bench call (2026-11-28).
    #[default]
    Lanes,
}

impl HistogramVariant {
    /// The `RUCUDA_HISTOGRAM_VARIANT` spelling: `classic` or `lanes`.
    pub fn parse(s: &str) -> Option<HistogramVariant> {
        match s.trim() {
            "classic" => Some(HistogramVariant::Classic),
            "lanes" => Some(HistogramVariant::Lanes),
            _ => None,
        }
    }
}

/// 0: no override; 1: classic; 2: lanes.
static VARIANT_OVERRIDE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Sets (or with `None` clears) the histogram kernel for the whole process, ahead of
/// `RUCUDA_HISTOGRAM_VARIANT`.
pub fn set_histogram_variant(variant: Option<HistogramVariant>) {
    let v = match variant {
        None => 0,
        Some(HistogramVariant::Classic) => 1,
        Some(HistogramVariant::Lanes) => 2,
    };
    VARIANT_OVERRIDE.store(v, std::sync::atomic::Ordering::Relaxed);
}

fn variant() -> HistogramVariant {
    match VARIANT_OVERRIDE.load(std::sync::atomic::Ordering::Relaxed) {
        1 => HistogramVariant::Classic,
        2 => HistogramVariant::Lanes,
        _ => {
            static ENV: OnceLock<HistogramVariant> = OnceLock::new();
            *ENV.get_or_init(|| {
                std::env::var("RUCUDA_HISTOGRAM_VARIANT")
                    .ok()
                    .and_then(|v| HistogramVariant::parse(&v))
                    .unwrap_or_default()
            })
        }
    }
}

/// Bins the lanes kernels hold: 32 copies of 32-bit counters for each bin and for the
/// elements not counted, in 48 KiB.
const LANES_MAX_BINS: usize = 48 * 1024 / (32 * 4) - 1;

/// Shared memory of one lanes block: 32 copies of each of the `bins` counters and of the
/// one the elements not counted go to (every element takes one unconditional atomic).
fn lanes_shared_bytes(bins: usize) -> usize {
    (bins + 1) * 32 * 4
}

/// The float estimate for even bins over [lo, hi]: `(fast, lo32, norm32)`, `lo` and
/// `bins / (hi - lo)` rounded to float (the lanes kernels' arguments with `fast`); `fast`
/// only when the estimate's error, bounded from the magnitudes, stays below a quarter of
/// the kernel's margin (2^-10 bins). The kernel sends values outside [lo, hi] (and those
/// near an edge) to the exact path itself; a range too narrow to hold a float fails the
/// error bound.
fn float_estimate(lo: f64, hi: f64, bins: usize) -> (bool, f32, f32) {
    let norm = bins as f64 / (hi - lo);
    let (lo32, norm32) = (lo as f32, norm as f32);
    // Each float step (the subtraction, lo's and norm's rounding, the product) is off by
    // at most 2^-24 of its magnitude; 2^-22 covers them together.
    let error = (norm * (lo.abs() + hi.abs()) + bins as f64) * (-22f64).exp2();
    // Both ends within float range, and a normal `norm32` (a subnormal one is rounded
    // more coarsely than the bound assumes).
    let fast = error < (-12f64).exp2()
        && bins < (1 << 24)
        && lo32.is_finite()
        && (hi as f32).is_finite()
        && norm32.is_normal();
    (fast, lo32, norm32)
}

fn entry(dtype: DType) -> String {
    format!("rucuda_histogram_{}", dtype.to_string().to_lowercase())
}

/// The classic kernel, then the lanes kernels of modes 0 to 3.
fn kernels(stream: &Stream, dtype: DType) -> Result<std::sync::Arc<Vec<Function>>> {
    type Cache = HashMap<(u64, DType), std::sync::Arc<Vec<Function>>>;
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (stream.context().id(), dtype);
    if let Some(f) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(f.clone());
    }
    let source = histogram_source(dtype)?;
    let e = entry(dtype);
    let mut names = vec![format!("{e}_histogram")];
    names.extend((0..4).map(|m| format!("{e}_histogram_lanes_m{m}")));
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let functions = load_kernel_list(&*default_compiler(), stream.context(), &source, &refs)?;
    let f = std::sync::Arc::new(functions);
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, f.clone());
    Ok(f)
}

/// Blocks of the lanes kernel of `mode` for `bins` bins that fit a multiprocessor, asked
/// of the driver once per context, type, mode and bin count (each call's host time comes
/// before its kernel, the stream idle: the occupancy query took about 3 µs of it).
fn lanes_blocks_per_sm(
    stream: &Stream,
    f: &Function,
    dtype: DType,
    mode: i32,
    bins: usize,
) -> Result<usize> {
    type Fits = HashMap<(u64, DType, i32, usize), usize>;
    static FITS: OnceLock<Mutex<Fits>> = OnceLock::new();
    let fits = FITS.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (stream.context().id(), dtype, mode, bins);
    if let Some(fit) = fits.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(*fit);
    }
    let fit = f.max_active_blocks_per_multiprocessor(
        THREADS,
        lanes_shared_bytes(bins),
        rucuda_driver::OccupancyFlags::DEFAULT,
    )? as usize;
    fits.lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, fit);
    Ok(fit)
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
        let fns = kernels(&stream, T::DTYPE)?;
        // Only explicit edges travel to the device.
        let edges_dev = if mode == 1 {
            Some(GpuArray::<f64>::from_slice(&stream, edges)?)
        } else {
            None
        };
        let sms = crate::scan::DeviceFacts::of(stream.context())?.multiprocessors as usize;
        let per_sm = std::env::var("RUCUDA_HISTOGRAM_BLOCKS_PER_SM")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(8)
            .max(1);
        let grid_of = |per_sm: usize| (sms * per_sm).min(n.div_ceil(THREADS as usize)).max(1);
        let mut grid = grid_of(per_sm);
        // Shared counters are 32-bit: each block must count fewer than 2^32 elements.
        let shared = bins <= SHARED_BINS && n / grid < u32::MAX as usize;
        let mut lanes = shared && bins <= LANES_MAX_BINS && variant() == HistogramVariant::Lanes;
        if lanes {
            // 32 copies of the bins take bins * 128 bytes a block: no more blocks than fit
            // a multiprocessor at once (a second wave would double the grid-stride loop).
            let fit = lanes_blocks_per_sm(&stream, &fns[1 + mode as usize], T::DTYPE, mode, bins)?;
            grid = grid_of(per_sm.min(fit.max(1)));
            lanes = n / grid < u32::MAX as usize;
            if !lanes {
                grid = grid_of(per_sm);
            }
        }
        let mem = x.memory();
        let vectorized = mem.is_aligned(16) && T::DTYPE.size_bytes() <= 16;
        let xr = mem.elements(x.nbytes())?;
        let mut buf = ArgBuffer::new();
        push_range(&mut buf, xr, &stream, Access::Read)?;
        buf.push(n as i64);
        buf.push(i32::from(vectorized));
        if !lanes {
            // The lanes kernels are one per mode; the classic kernel takes it.
            buf.push(mode);
        }
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
        if lanes {
            let (fast, lo32, norm32) = if mode == 0 {
                float_estimate(lo, hi, bins)
            } else {
                (false, 0.0, 0.0)
            };
            buf.push(i32::from(fast));
            buf.push(lo32);
            buf.push(norm32);
        } else {
            buf.push(i32::from(shared));
        }
        push_array(&mut buf, &counts, &stream, Access::Write)?;
        let (f, shared_bytes) = if lanes {
            (&fns[1 + mode as usize], lanes_shared_bytes(bins))
        } else {
            (&fns[0], if shared { bins * 4 } else { 0 })
        };
        let config = LaunchConfig {
            grid: (grid as u32, 1, 1),
            block: (THREADS, 1, 1),
            shared_mem_bytes: shared_bytes as u32,
        };
        // SAFETY: reads the n elements of `x` (16-byte loads only when aligned, whole
        // vectors below n) and, in mode 1 only, the bins + 1 explicit edges; counts only
        // bins 0..bins into `counts` (bins elements) and the shared counters (bins of
        // them when `shared`; 32 copies of them, bins * 32 words, for the lanes kernels,
        // whose parameters the arguments above follow: `fast`, the two floats, then
        // `counts`, where the classic kernel takes `shared`, then `counts`).
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
    fn the_float_estimate_only_where_its_error_is_small() {
        // [0, 1] in 256 bins: error about 1.2e-4 bins, below 2^-12.
        assert!(super::float_estimate(0.0, 1.0, 256).0);
        // A narrow range far from zero: floats cannot place values in it.
        assert!(!super::float_estimate(1e6, 1e6 + 1.0, 256).0);
        // Too many bins for the margin.
        assert!(!super::float_estimate(0.0, 1.0, 1 << 20).0);
        // An end past the float range, or a norm too small for a normal float.
        assert!(!super::float_estimate(0.0, 1e39, 256).0);
        assert!(!super::float_estimate(-1e38, 3e38, 1).0);
        // A range with no float inside.
        assert!(!super::float_estimate(1.0, 1.0 + 1e-12, 256).0);
        // lo and norm rounded to float, as the kernel takes them.
        let (_, lo32, norm32) = super::float_estimate(0.1, 0.7, 256);
        assert_eq!((lo32, norm32), (0.1f32, (256.0 / (0.7f64 - 0.1)) as f32));
    }

    #[test]
    fn variants_parse() {
        use super::HistogramVariant as V;
        assert_eq!(V::parse(" classic"), Some(V::Classic));
        assert_eq!(V::parse("lanes"), Some(V::Lanes));
        assert_eq!(V::parse("other"), None);
    }

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
