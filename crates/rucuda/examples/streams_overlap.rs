//! Streams and events overlapping copies with compute: the data is cut into chunks in
//! page-locked host buffers; on two streams, each chunk is copied in, processed and copied
//! back, so one chunk's copies run while another's kernel does. The same work on one
//! stream, one step after the other, is the serial baseline; both are timed with events
//! (recorded on one stream, waited for by the other) and the speedup is printed. The
//! results are checked on the CPU.
//!
//! Run: `cargo run -p rucuda --example streams_overlap`

mod common;

use rucuda::driver::{memcpy_dtoh_async, memcpy_htod_async};
use rucuda::prelude::*;

const SOURCE: &str = include_str!("kernels/sine_sum.cu");

const CHUNKS: usize = 16;
const CHUNK_LEN: usize = 2 << 20; // 8 MiB of floats per chunk, 128 MiB in all

struct Chunk {
    input: PinnedHostBuffer<f32>,
    output: PinnedHostBuffer<f32>,
    device: DeviceBuffer<f32>,
}

fn main() {
    common::main("streams_overlap", true, run);
}

fn run() -> common::ExampleResult {
    let ctx = autoprimaryctx()?;
    let module = SourceModule::for_context(ctx, SOURCE, &CompileOptions::new())?;
    let sine_sum = module.function("sine_sum")?;
    let sms = DeviceData::new(ctx.device)?.multiprocessors;
    let cfg = LaunchConfig::linear(sms * 4, 256);

    let seed = common::fresh_seed();
    let mut chunks = Vec::with_capacity(CHUNKS);
    for c in 0..CHUNKS {
        let data = common::random_f32(CHUNK_LEN, seed.wrapping_add(c as u64));
        chunks.push(Chunk {
            input: PinnedHostBuffer::from_slice(ctx, &data, HostAllocFlags::empty())?,
            output: PinnedHostBuffer::zeros(ctx, CHUNK_LEN, HostAllocFlags::empty())?,
            device: DeviceBuffer::zeros(ctx, CHUNK_LEN)?,
        });
    }
    let streams = [
        Stream::new(ctx, StreamFlags::NON_BLOCKING)?,
        Stream::new(ctx, StreamFlags::NON_BLOCKING)?,
    ];

    // Choose the work per element so that a chunk's kernel takes about as long as its
    // copy in: the case where overlapping pays most.
    let terms = calibrate(ctx, &sine_sum, cfg, &mut chunks[0], &streams[0])?;
    println!(
        "{CHUNKS} chunks of {} MiB, {terms} sine terms per element",
        (CHUNK_LEN * 4) >> 20
    );

    let step = |chunk: &mut Chunk, stream: &Stream, what: Step| -> common::ExampleResult {
        match what {
            Step::CopyIn => memcpy_htod_async(&mut chunk.device, &chunk.input, stream)?,
            // SAFETY: sine_sum(float *x, unsigned n, unsigned terms) touches x[0..n).
            Step::Compute => unsafe {
                sine_sum.launch(cfg, stream, (&mut chunk.device, CHUNK_LEN as u32, terms))?
            },
            Step::CopyOut => memcpy_dtoh_async(&mut chunk.output, &chunk.device, stream)?,
        }
        Ok(())
    };

    let mut serial = f64::INFINITY;
    let mut overlapped = f64::INFINITY;
    for _ in 0..3 {
        // Serial: one stream, all copies in, all kernels, all copies out.
        serial = serial.min(timed(ctx, &streams, |streams| {
            for what in [Step::CopyIn, Step::Compute, Step::CopyOut] {
                for chunk in chunks.iter_mut() {
                    step(chunk, &streams[0], what)?;
                }
            }
            Ok(())
        })?);
        // Overlapped: chunk c on stream c % 2, its three steps in order there.
        overlapped = overlapped.min(timed(ctx, &streams, |streams| {
            for (c, chunk) in chunks.iter_mut().enumerate() {
                for what in [Step::CopyIn, Step::Compute, Step::CopyOut] {
                    step(chunk, &streams[c % 2], what)?;
                }
            }
            Ok(())
        })?);
    }
    let bytes = (2 * CHUNKS * CHUNK_LEN * 4) as f64;
    println!(
        "serial (1 stream):     {:7.2} ms  ({:.1} GB/s of copies)",
        serial * 1e3,
        bytes / serial / 1e9
    );
    println!(
        "overlapped (2 streams): {:6.2} ms  ({:.1} GB/s of copies)",
        overlapped * 1e3,
        bytes / overlapped / 1e9
    );
    println!("speedup: {:.2}x", serial / overlapped);
    if serial / overlapped < 1.2 {
        println!("(little overlap: this device or its bus may not copy and compute at once)");
    }

    // The CPU check (host access waits for the copies out): in every chunk its first and
    // last element and every 61st from a random offset, against a sum in f64.
    let offset = (seed % 61) as usize;
    let mut checked = 0;
    for (c, chunk) in chunks.iter().enumerate() {
        let picks: Vec<usize> = (offset..CHUNK_LEN)
            .step_by(61)
            .chain([0, CHUNK_LEN - 1])
            .collect();
        let want: Vec<f32> = picks
            .iter()
            .map(|&i| {
                let v = chunk.input[i];
                let sum: f64 = (1..=terms).map(|k| f64::from(v * k as f32).sin()).sum();
                (sum / f64::from(terms)) as f32
            })
            .collect();
        let got: Vec<f32> = picks.iter().map(|&i| chunk.output[i]).collect();
        common::compare(&format!("chunk {c}"), &got, &want, 1e-5)?;
        checked += picks.len();
    }
    println!("{checked} sampled elements match the CPU");
    println!("streams_overlap: OK");
    Ok(())
}

#[derive(Clone, Copy)]
enum Step {
    CopyIn,
    Compute,
    CopyOut,
}

/// Runs `work` on the two streams and returns its time in seconds: an event recorded on
/// stream 0 starts it (stream 1 waits for it), stream 0 waits for stream 1's last event,
/// and an event on stream 0 ends it.
fn timed(
    ctx: &Context,
    streams: &[Stream; 2],
    work: impl FnOnce(&[Stream; 2]) -> common::ExampleResult,
) -> Result<f64, Box<dyn std::error::Error>> {
    let (start, other_done, end) = (
        Event::new(ctx, EventFlags::DEFAULT)?,
        Event::new(ctx, EventFlags::DISABLE_TIMING)?,
        Event::new(ctx, EventFlags::DEFAULT)?,
    );
    start.record(&streams[0])?;
    streams[1].wait_event(&start)?;
    work(streams)?;
    other_done.record(&streams[1])?;
    streams[0].wait_event(&other_done)?;
    end.record(&streams[0])?;
    end.synchronize()?;
    Ok(f64::from(end.time_since(&start)?) / 1e3)
}

/// The number of sine terms that makes one chunk's kernel about as long as its copy in.
fn calibrate(
    ctx: &Context,
    kernel: &Function,
    cfg: LaunchConfig,
    chunk: &mut Chunk,
    stream: &Stream,
) -> Result<u32, Box<dyn std::error::Error>> {
    let events = [
        Event::new(ctx, EventFlags::DEFAULT)?,
        Event::new(ctx, EventFlags::DEFAULT)?,
        Event::new(ctx, EventFlags::DEFAULT)?,
    ];
    let trial_terms = 64u32;
    for _ in 0..2 {
        events[0].record(stream)?;
        memcpy_htod_async(&mut chunk.device, &chunk.input, stream)?;
        events[1].record(stream)?;
        // SAFETY: as in `run`: the kernel touches x[0..n) of the chunk's buffer.
        unsafe {
            kernel.launch(
                cfg,
                stream,
                (&mut chunk.device, CHUNK_LEN as u32, trial_terms),
            )?
        };
        events[2].record(stream)?;
        events[2].synchronize()?;
    }
    let copy_ms = f64::from(events[1].time_since(&events[0])?);
    let kernel_ms = f64::from(events[2].time_since(&events[1])?);
    println!(
        "one chunk: copy in {copy_ms:.3} ms, kernel with {trial_terms} terms {kernel_ms:.3} ms"
    );
    let terms = (f64::from(trial_terms) * copy_ms / kernel_ms.max(1e-6)).round();
    Ok(terms.clamp(1.0, 100_000.0) as u32)
}
