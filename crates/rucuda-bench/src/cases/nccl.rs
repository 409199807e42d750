//! All-reduce across every visible GPU through NCCL, in one process (one communicator over
//! all GPUs from `init_all`, one group per step, one thread driving them all):
//!
//! - `allreduce_busbw_GBps`: bus bandwidth of an in-place f32 sum, `n` = bytes per GPU,
//!   from 1 KiB to 1 GiB by powers of two (quick: by powers of 16, to 256 MiB, and 1 GiB);
//! - `allreduce_latency_us`: time of one 8-byte all-reduce.
//!
//! Measured as nccl-tests and `peers/torch_allreduce.py` measure: the host clock around
//! `iters` back-to-back all-reduces and a synchronisation of every stream, divided by
//! `iters`; the median of several such samples. Bus bandwidth is the algorithm bandwidth
//! (bytes / time) × 2(n − 1)/n for n GPUs, NCCL's measure of what each link carries.
//!
//! `raw` drives NCCL through rucuda-nccl's generated bindings alone (`ncclCommInitAll`,
//! `ncclGroupStart`, `ncclAllReduce`, `ncclGroupEnd`); `rucuda` through the safe API
//! (`Communicator::init_all`, `group`, `all_reduce_in_place` on a slice of a `GpuArray`
//! — plain device buffers are refused inside groups — with its checks). Fewer than two GPUs, or no NCCL: the cases are skipped with a message.
//!
//! The work runs on a thread of its own (NCCL switches the current GPU of the thread it
//! runs on), with `NCCL_NVLS_ENABLE=0`: NVLink multicast stays off on our machines.

use std::time::Instant;

use rucuda_array::{GpuArray, SliceArg};
use rucuda_driver::{Context, Device, DeviceBuffer, Stream, StreamFlags};
use rucuda_nccl::sys::{ncclComm_t, ncclDataType_t, ncclRedOp_t, ncclResult_t};
use rucuda_nccl::{group, Communicator, Nccl, ReduceOp};

use super::{Case, RAW, RUCUDA};
use crate::config::Config;
use crate::cuda::{Error, Gpu, Result};
use crate::harness::{median, units, Measurement};

/// Registers the all-reduce cases (raw NCCL first, the floor).
pub fn register(cases: &mut Vec<Case>) {
    cases.push(Case {
        name: "allreduce_busbw_GBps",
        lib: RAW,
        run: raw_busbw,
    });
    cases.push(Case {
        name: "allreduce_busbw_GBps",
        lib: RUCUDA,
        run: rucuda_busbw,
    });
    cases.push(Case {
        name: "allreduce_latency_us",
        lib: RAW,
        run: raw_latency,
    });
    cases.push(Case {
        name: "allreduce_latency_us",
        lib: RUCUDA,
        run: rucuda_latency,
    });
}

/// The sizes of the bandwidth sweep, in bytes per GPU.
pub fn sizes(quick: bool) -> Vec<usize> {
    if quick {
        vec![1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 26, 1 << 30]
    } else {
        (10..=30).map(|k| 1usize << k).collect()
    }
}

/// All-reduces per timed sample at a size (keep in step with peers/torch_allreduce.py).
pub fn iters(bytes: usize, quick: bool) -> usize {
    let (small, medium, large) = if quick { (50, 20, 5) } else { (200, 50, 20) };
    match bytes {
        b if b <= 8 => {
            if quick {
                200
            } else {
                1000
            }
        }
        b if b <= 1 << 16 => small,
        b if b <= 1 << 24 => medium,
        _ => large,
    }
}

/// Timed samples per size (after one untimed sample).
fn reps(quick: bool) -> usize {
    if quick {
        3
    } else {
        7
    }
}

/// One way of driving every GPU's all-reduce.
trait AllReduce {
    /// Queues one in-place f32 sum of the first `count` elements on every GPU.
    fn step(&mut self, count: usize) -> Result<()>;
    /// Waits for every GPU's stream.
    fn sync(&self) -> Result<()>;
}

/// Host seconds per all-reduce of `bytes` bytes: the median over samples.
fn seconds_per_op(ring: &mut dyn AllReduce, bytes: usize, quick: bool) -> Result<f64> {
    let count = bytes / 4;
    let iters = iters(bytes, quick);
    let mut samples = Vec::new();
    for rep in 0..=reps(quick) {
        ring.sync()?;
        let start = Instant::now();
        for _ in 0..iters {
            ring.step(count)?;
        }
        ring.sync()?;
        if rep > 0 {
            samples.push(start.elapsed().as_secs_f64() / iters as f64);
        }
    }
    Ok(median(&samples))
}

/// The GPUs, or a skip.
fn devices() -> Result<Vec<Context>> {
    let n = Device::count()?;
    if n < 2 {
        return Err(Error::skipped(format!(
            "all-reduce needs 2 or more GPUs, {n} visible"
        )));
    }
    if let Err(e) = Nccl::get() {
        return Err(Error::skipped(format!("no NCCL: {e}")));
    }
    (0..n)
        .map(|i| Ok(Device::get(i)?.primary_context()?))
        .collect()
}

/// Runs `body` on a thread of its own with NVLink multicast off.
fn on_own_thread<T: Send + 'static>(
    body: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    std::env::set_var("NCCL_NVLS_ENABLE", "0");
    std::thread::spawn(body)
        .join()
        .map_err(|_| Error("the all-reduce thread panicked".into()))?
}

fn bus_bandwidth(bytes: usize, seconds: f64, ranks: usize) -> f64 {
    let factor = 2.0 * (ranks as f64 - 1.0) / ranks as f64;
    bytes as f64 / seconds / 1e9 * factor
}

fn sweep(mut ring: impl AllReduce, ranks: usize, quick: bool) -> Result<Measurement> {
    let mut points = Vec::new();
    for bytes in sizes(quick) {
        let seconds = seconds_per_op(&mut ring, bytes, quick)?;
        points.push(Measurement {
            n: bytes as u64,
            value: bus_bandwidth(bytes, seconds, ranks),
            unit: units::GBPS,
            more: Vec::new(),
        });
    }
    Measurement::sweep(points).ok_or_else(|| Error("no sizes".into()))
}

fn latency(mut ring: impl AllReduce, quick: bool) -> Result<Measurement> {
    let seconds = seconds_per_op(&mut ring, 8, quick)?;
    Ok(Measurement {
        n: 8,
        value: seconds * 1e6,
        unit: units::MICROS,
        more: Vec::new(),
    })
}

fn largest(quick: bool) -> usize {
    sizes(quick).into_iter().max().unwrap_or(8).max(8)
}

fn rucuda_busbw(_: &Gpu, config: &Config) -> Result<Measurement> {
    let quick = config.quick;
    on_own_thread(move || {
        let ring = RucudaRing::new(devices()?, largest(quick))?;
        let ranks = ring.comms.len();
        sweep(ring, ranks, quick)
    })
}

fn rucuda_latency(_: &Gpu, config: &Config) -> Result<Measurement> {
    let quick = config.quick;
    on_own_thread(move || latency(RucudaRing::new(devices()?, 8)?, quick))
}

fn raw_busbw(_: &Gpu, config: &Config) -> Result<Measurement> {
    let quick = config.quick;
    on_own_thread(move || {
        let ring = RawRing::new(devices()?, largest(quick))?;
        let ranks = ring.comms.len();
        sweep(ring, ranks, quick)
    })
}

fn raw_latency(_: &Gpu, config: &Config) -> Result<Measurement> {
    let quick = config.quick;
    on_own_thread(move || latency(RawRing::new(devices()?, 8)?, quick))
}

/// Every GPU's stream.
struct Lanes {
    ctxs: Vec<Context>,
    streams: Vec<Stream>,
}

impl Lanes {
    fn new(ctxs: Vec<Context>) -> Result<Lanes> {
        let mut streams = Vec::new();
        for ctx in &ctxs {
            streams.push(Stream::new(ctx, StreamFlags::NON_BLOCKING)?);
        }
        Ok(Lanes { ctxs, streams })
    }

    fn sync(&self) -> Result<()> {
        for s in &self.streams {
            s.synchronize()?;
        }
        Ok(())
    }
}

/// The safe API.
struct RucudaRing {
    comms: Vec<Communicator>,
    lanes: Lanes,
    /// Every GPU's buffer: arrays, which a group keeps alive until it issues its calls.
    arrays: Vec<GpuArray<f32>>,
}

impl RucudaRing {
    fn new(ctxs: Vec<Context>, bytes: usize) -> Result<RucudaRing> {
        let comms = Communicator::init_all(&ctxs)?;
        let lanes = Lanes::new(ctxs)?;
        let arrays = lanes
            .streams
            .iter()
            .map(|s| GpuArray::zeros(s, &[bytes.div_ceil(4)]))
            .collect::<rucuda_array::Result<Vec<_>>>()?;
        Ok(RucudaRing {
            comms,
            lanes,
            arrays,
        })
    }
}

impl AllReduce for RucudaRing {
    fn step(&mut self, count: usize) -> Result<()> {
        let lanes = &self.lanes;
        let count = isize::try_from(count)?;
        let mut parts = self
            .arrays
            .iter()
            .map(|a| a.slice(&[SliceArg::range(0, count)]))
            .collect::<rucuda_array::Result<Vec<_>>>()?;
        group(|| {
            for ((comm, part), stream) in self.comms.iter().zip(&mut parts).zip(&lanes.streams) {
                comm.all_reduce_in_place(part, ReduceOp::Sum, stream)?;
            }
            Ok(())
        })?;
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        self.lanes.sync()
    }
}

/// NCCL's C API alone (the contexts made current with rucuda's thread-local check, as the
/// safe API does).
struct RawRing {
    nccl: &'static Nccl,
    comms: Vec<ncclComm_t>,
    lanes: Lanes,
    buffers: Vec<DeviceBuffer<f32>>,
}

fn nccl_check(call: &str, code: ncclResult_t) -> Result<()> {
    if code == ncclResult_t::ncclSuccess {
        Ok(())
    } else {
        Err(Error(format!(
            "{call} failed: {} ({})",
            rucuda_nccl::result_name(code),
            code.0
        )))
    }
}

impl RawRing {
    fn new(ctxs: Vec<Context>, bytes: usize) -> Result<RawRing> {
        let nccl = Nccl::get()?;
        let devices: Vec<i32> = ctxs.iter().map(|c| c.device().ordinal() as i32).collect();
        let mut comms: Vec<ncclComm_t> = vec![std::ptr::null_mut(); ctxs.len()];
        let init = nccl.ncclCommInitAll()?;
        // SAFETY: room for one handle per device; the device list holds as many ordinals.
        nccl_check("ncclCommInitAll", unsafe {
            init(comms.as_mut_ptr(), devices.len() as i32, devices.as_ptr())
        })?;
        let buffers = ctxs
            .iter()
            .map(|ctx| DeviceBuffer::zeros(ctx, bytes.div_ceil(4)))
            .collect::<rucuda_driver::Result<Vec<_>>>()?;
        Ok(RawRing {
            nccl,
            comms,
            lanes: Lanes::new(ctxs)?,
            buffers,
        })
    }
}

impl AllReduce for RawRing {
    fn step(&mut self, count: usize) -> Result<()> {
        let (start, all_reduce, end) = (
            self.nccl.ncclGroupStart()?,
            self.nccl.ncclAllReduce()?,
            self.nccl.ncclGroupEnd()?,
        );
        // SAFETY: balanced by the ncclGroupEnd below.
        nccl_check("ncclGroupStart", unsafe { start() })?;
        for (i, comm) in self.comms.iter().enumerate() {
            self.lanes.ctxs[i].bind()?;
            let ptr = rucuda_driver::DevicePtr::device_range(&self.buffers[i]).address();
            // SAFETY: the buffer holds at least `count` f32 on the communicator's device and
            // outlives the synchronised samples.
            nccl_check("ncclAllReduce", unsafe {
                all_reduce(
                    ptr as *const _,
                    ptr as *mut _,
                    count,
                    ncclDataType_t::ncclFloat32,
                    ncclRedOp_t::ncclSum,
                    *comm,
                    self.lanes.streams[i].raw() as _,
                )
            })?;
        }
        // SAFETY: ends the group started above.
        nccl_check("ncclGroupEnd", unsafe { end() })
    }

    fn sync(&self) -> Result<()> {
        self.lanes.sync()
    }
}

impl Drop for RawRing {
    fn drop(&mut self) {
        if let Ok(destroy) = self.nccl.ncclCommDestroy() {
            for comm in &self.comms {
                // SAFETY: each handle came from ncclCommInitAll and is destroyed once.
                let _ = unsafe { destroy(*comm) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_run_from_1_kib_to_1_gib() {
        let full = sizes(false);
        assert_eq!(
            (full[0], *full.last().unwrap(), full.len()),
            (1 << 10, 1 << 30, 21)
        );
        let quick = sizes(true);
        assert_eq!((quick[0], *quick.last().unwrap()), (1 << 10, 1 << 30));
        assert!(iters(8, false) > iters(1 << 30, false));
    }

    #[test]
    fn bus_bandwidth_is_nccl_tests_measure() {
        // Two GPUs: bus bandwidth equals algorithm bandwidth.
        assert!((bus_bandwidth(1_000_000_000, 0.01, 2) - 100.0).abs() < 1e-9);
        // Eight GPUs: × 2·7/8.
        assert!((bus_bandwidth(1_000_000_000, 0.01, 8) - 175.0).abs() < 1e-9);
    }
}
