//! Helpers shared by this crate's GPU tests: the context, cuRAND's reference kernels,
//! per-state views of our outputs, random parameters.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use rucuda_driver::{
    Context, Device, DeviceBuffer, DevicePointerArg, DevicePtr, DeviceRepr, LaunchConfig, Stream,
};
use rucuda_jit::{CompileOptions, SourceModule};
use rucuda_rand::reference::Layout;

/// The primary context of device 0 (the bundle sets CUDA_VISIBLE_DEVICES per pass).
pub fn ctx() -> Context {
    Device::get(0)
        .and_then(Device::primary_context)
        .expect("a CUDA device (this test is ignored unless the GPU bundle runs it)")
}

/// The CUDA toolkit's include folder: `CUDA_PATH`/`CUDA_HOME` or `/usr/local/cuda`.
pub fn cuda_include() -> PathBuf {
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Ok(p) = std::env::var(var) {
            let inc = PathBuf::from(p).join("include");
            if inc.join("curand_kernel.h").exists() {
                return inc;
            }
        }
    }
    PathBuf::from("/usr/local/cuda/include")
}

/// cuRAND's device API compiled by our jit from `tests/kernels/curand_reference.cu`
/// (which includes `<curand_kernel.h>` from the toolkit).
pub fn curand_module(ctx: &Context) -> Arc<SourceModule> {
    curand_source_module(
        ctx,
        include_str!("../kernels/curand_reference.cu"),
        "curand_reference.cu",
    )
}

/// A test source that includes `<curand_kernel.h>`, compiled by our jit as
/// [`curand_module`] is (the compiler's defaults, for the device's architecture).
pub fn curand_source_module(ctx: &Context, source: &str, name: &str) -> Arc<SourceModule> {
    let inc = cuda_include();
    let mut options = CompileOptions::new()
        .no_extern_c(true)
        .std("c++17")
        .program_name(name)
        .include_dir(inc.clone());
    if inc.join("cccl").is_dir() {
        options = options.include_dir(inc.join("cccl"));
    }
    SourceModule::for_context(ctx, source, &options)
        .unwrap_or_else(|e| panic!("compiling {name} (cuRAND's device API): {e}"))
}

/// Runs `ref_<name>` of the pseudo-random generators: `m` values for each of the
/// `seeds.len()` threads, thread-major. Poisson counts (`<generator>_poisson_u32`) come
/// from stored states ([`stored_poisson`]).
///
/// The kernel runs twice, into an output of all-zero bits and into one of all-one bits
/// ([`Bits::ONES`]), and every value must come out the same from both: a slot the
/// reference did not write keeps its two different poisons, so a failed or partial
/// reference run panics here instead of looking like a mismatch of ours. (No single poison
/// can be told from a value: `curand` of MRG32k3a can return `0xFFFFFFFF`, and 0 is a raw
/// output of the others.)
#[allow(clippy::too_many_arguments)]
pub fn curand_pseudo<T: DeviceRepr + Copy + Default + Bits>(
    module: &SourceModule,
    name: &str,
    seeds: &[u64],
    subs: &[u64],
    offs: &[u64],
    m: usize,
    (mean, stddev, lambda): (f64, f64, f64),
    stream: &Stream,
) -> Vec<T> {
    let ctx = stream.context();
    let n = seeds.len();
    let (a, b, c) = (
        DeviceBuffer::from_slice(ctx, seeds).unwrap(),
        DeviceBuffer::from_slice(ctx, subs).unwrap(),
        DeviceBuffer::from_slice(ctx, offs).unwrap(),
    );
    let runs: Vec<Vec<T>> = [T::default(), T::ONES]
        .into_iter()
        .map(|poison| {
            let mut out = DeviceBuffer::from_slice(ctx, &vec![poison; n * m]).unwrap();
            if let Some(generator) = name.strip_suffix("_poisson_u32") {
                stored_poisson(generator, (&a, &b, &c), m, lambda, &mut out, stream);
                return out.to_vec().unwrap();
            }
            let f = module
                .function(&format!("ref_{name}"))
                .unwrap_or_else(|e| panic!("ref_{name}: {e}"));
            // SAFETY: ref_*(const u64* seeds, subs, offs, unsigned n, unsigned m, T* out,
            // double, double, double) reads n of each array and writes out[0..n*m).
            unsafe {
                f.launch(
                    LaunchConfig::for_elements(n, 128),
                    stream,
                    (
                        &a, &b, &c, n as u32, m as u32, &mut out, mean, stddev, lambda,
                    ),
                )
                .unwrap_or_else(|e| panic!("launching ref_{name}: {e}"))
            };
            stream
                .synchronize()
                .unwrap_or_else(|e| panic!("running ref_{name}: {e}"));
            out.to_vec().unwrap()
        })
        .collect();
    check_written(name, &runs[0], &runs[1], m, &|t| {
        format!(
            "seed {:#x}, subsequence {}, offset {}",
            seeds[t], subs[t], offs[t]
        )
    });
    runs.into_iter().next().unwrap_or_default()
}

/// cuRAND's Poisson counts as rucuda matches them (the crate's README has the forms):
/// `curand_poisson_forms.cu`'s `init_<generator>` stores the states, `stored_<generator>`
/// loads them, draws `m` per state into `out` and stores them back. (Within one kernel
/// after `curand_init`, MRG32k3a's form differs about once in a million draws.)
fn stored_poisson<T: DeviceRepr>(
    generator: &str,
    (seeds, subs, offs): (&DeviceBuffer<u64>, &DeviceBuffer<u64>, &DeviceBuffer<u64>),
    m: usize,
    lambda: f64,
    out: &mut DeviceBuffer<T>,
    stream: &Stream,
) {
    let ctx = stream.context();
    let n = seeds.len();
    let module = curand_source_module(
        ctx,
        include_str!("../kernels/curand_poisson_forms.cu"),
        "curand_poisson_forms.cu",
    );
    let function = |prefix: &str| {
        let name = format!("{prefix}_{generator}");
        let f = module
            .function(&name)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        (name, f)
    };
    let mut state_bytes = DeviceBuffer::<u32>::zeros(ctx, 1).unwrap();
    let (name, f) = function("state_bytes");
    // SAFETY: state_bytes_G(unsigned* out) writes out[0] from one thread.
    unsafe {
        f.launch(
            LaunchConfig::for_elements(1, 32),
            stream,
            (&mut state_bytes,),
        )
    }
    .unwrap_or_else(|e| panic!("launching {name}: {e}"));
    stream.synchronize().unwrap();
    let bytes = state_bytes.to_vec().unwrap()[0] as usize;
    assert!(bytes > 0, "{name} gave no size");
    let mut states = DeviceBuffer::<u8>::zeros(ctx, n * bytes).unwrap();
    let (name, init) = function("init");
    // SAFETY: init_G(const u64* seeds, subs, offs, unsigned n, STATE* states)
    // reads n of each array and writes states[0..n), n * sizeof(STATE) bytes.
    unsafe {
        init.launch(
            LaunchConfig::for_elements(n, 128),
            stream,
            (seeds, subs, offs, n as u32, &mut states),
        )
    }
    .unwrap_or_else(|e| panic!("launching {name}: {e}"));
    let (name, draw) = function("stored");
    assert_eq!(std::mem::size_of::<T>(), 4, "{name} writes 32-bit counts");
    // SAFETY: stored_G(STATE* states, unsigned n, unsigned m, unsigned* out,
    // double lambda) reads and writes states[0..n) and writes out[0..n*m) (T is 4 bytes).
    unsafe {
        draw.launch(
            LaunchConfig::for_elements(n, 128),
            stream,
            (&mut states, n as u32, m as u32, out, lambda),
        )
    }
    .unwrap_or_else(|e| panic!("launching {name}: {e}"));
    stream
        .synchronize()
        .unwrap_or_else(|e| panic!("running {name}: {e}"));
}

/// Panics unless the two runs of a reference kernel (poisoned with zero bits and with one
/// bits) agree everywhere, i.e. the kernel wrote every slot.
fn check_written<T: Bits>(
    name: &str,
    zeros: &[T],
    ones: &[T],
    m: usize,
    what: &dyn Fn(usize) -> String,
) {
    let unwritten: Vec<usize> = zeros
        .iter()
        .zip(ones)
        .enumerate()
        .filter(|(_, (x, y))| x.bits() != y.bits())
        .map(|(i, _)| i)
        .collect();
    if let Some(&i) = unwritten.first() {
        let t = i / m.max(1);
        panic!(
            "cuRAND reference ref_{name} left {} of {} outputs unwritten (first: thread {t} \
             ({}), output {}): the reference failed, nothing was compared",
            unwritten.len(),
            zeros.len(),
            what(t),
            i % m.max(1)
        );
    }
}

/// Runs `ref_<name>` of a Sobol generator: `m` values for each of the dimensions whose
/// direction vectors (`bits` words each) are given; twice, as [`curand_pseudo`] does, so
/// that an unwritten output panics.
#[allow(clippy::too_many_arguments)]
pub fn curand_quasi<W: DeviceRepr + Copy, T: DeviceRepr + Copy + Default + Bits>(
    module: &SourceModule,
    name: &str,
    vectors: &[W],
    scramble: Option<&[W]>,
    bits: usize,
    offset: W,
    m: usize,
    (mean, stddev, lambda): (f64, f64, f64),
    stream: &Stream,
) -> Vec<T> {
    let ctx = stream.context();
    let n = vectors.len() / bits;
    let f = module.function(&format!("ref_{name}")).unwrap();
    let v = DeviceBuffer::from_slice(ctx, vectors).unwrap();
    let sc = scramble.map(|s| DeviceBuffer::from_slice(ctx, s).unwrap());
    let sc_ptr = DevicePointerArg(sc.as_ref().map_or(0, |b| b.device_range().address()));
    let runs: Vec<Vec<T>> = [T::default(), T::ONES]
        .into_iter()
        .map(|poison| {
            let mut out = DeviceBuffer::from_slice(ctx, &vec![poison; n * m]).unwrap();
            // SAFETY: ref_*(const W* vectors, const W* scramble, W offset, unsigned n,
            // unsigned m, T* out, double, double, double) reads n·bits vectors (and n
            // constants when scrambled) and writes out[0..n*m).
            unsafe {
                f.launch(
                    LaunchConfig::for_elements(n, 128),
                    stream,
                    (
                        &v, sc_ptr, offset, n as u32, m as u32, &mut out, mean, stddev, lambda,
                    ),
                )
                .unwrap_or_else(|e| panic!("launching ref_{name}: {e}"))
            };
            stream
                .synchronize()
                .unwrap_or_else(|e| panic!("running ref_{name}: {e}"));
            out.to_vec().unwrap()
        })
        .collect();
    check_written(name, &runs[0], &runs[1], m, &|t| format!("dimension {t}"));
    runs.into_iter().next().unwrap_or_default()
}

/// Each state's outputs, in order, across consecutive fills laid out as [`Layout`] says.
pub fn per_state<T: Copy>(fills: &[Vec<T>], states: usize, chunk: usize) -> Vec<Vec<T>> {
    let layout = Layout::new(states, chunk);
    let mut out: Vec<Vec<T>> = vec![Vec::new(); states];
    for fill in fills {
        let mut this: Vec<Vec<(usize, T)>> = vec![Vec::new(); states];
        for (i, &v) in fill.iter().enumerate() {
            let (s, p) = layout.source(i);
            this[s].push((p, v));
        }
        for (s, mut vals) in this.into_iter().enumerate() {
            vals.sort_by_key(|(p, _)| *p);
            for (k, (p, v)) in vals.into_iter().enumerate() {
                assert_eq!(p, k, "positions of state {s} are not 0, 1, 2, ...");
                out[s].push(v);
            }
        }
    }
    out
}

/// SplitMix64, seeded freshly per run unless RUCUDA_TEST_SEED is set; the seed is printed
/// so that a failure can be replayed.
pub struct Rng(pub u64);

impl Rng {
    pub fn fresh() -> Rng {
        let seed = std::env::var("RUCUDA_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(rucuda_rand::seed::entropy);
        println!("random seed {seed} (set RUCUDA_TEST_SEED to replay)");
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// Bits of a value, for exact comparisons.
pub trait Bits: Copy {
    /// The value whose bits are all one (a poison for the reference outputs).
    const ONES: Self;
    fn bits(self) -> u64;
    fn value(self) -> f64;
}
impl Bits for u32 {
    const ONES: Self = u32::MAX;
    fn bits(self) -> u64 {
        u64::from(self)
    }
    fn value(self) -> f64 {
        f64::from(self)
    }
}
impl Bits for u64 {
    const ONES: Self = u64::MAX;
    fn bits(self) -> u64 {
        self
    }
    fn value(self) -> f64 {
        self as f64
    }
}
impl Bits for f32 {
    const ONES: Self = f32::from_bits(u32::MAX);
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn value(self) -> f64 {
        f64::from(self)
    }
}
impl Bits for f64 {
    const ONES: Self = f64::from_bits(u64::MAX);
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn value(self) -> f64 {
        self
    }
}
