//! GPU tests: `fill_poisson` against cuRAND's `curand_poisson` in bulk, where its rejection
//! method runs (64 ≤ λ ≤ 4000): λ = 64, 150.5, 1000.25, 4000 and two random λ, per
//! generator, from one state up to the `new()` default, bit for bit.
//!
//! cuRAND's result there depends on how the call was compiled (ptxas fuses some of its
//! multiply-adds or not, by context; the crate's README has the details), so the reference
//! runs in four forms from `tests/kernels/curand_poisson_forms.cu`: `plain` (curand_init,
//! then curand_poisson in a loop), `noinline` (through a `__noinline__` device function),
//! `stored` (states from an init kernel, loaded and stored back by the drawing kernel, as
//! NVIDIA's device-API examples and rucuda's own generators keep them: the form rucuda
//! matches, asserted) and `pycuda` (PyCUDA's `fill_poisson` kernel, which draws in place
//! in the states array); the other three are reported.
//!
//! Environment: `RUCUDA_POISSON_SEED` replays a run (its seed is printed first);
//! `RUCUDA_POISSON_DRAWS` sets the draws per generator and λ of the large cases (default
//! 10^7, so about 6·10^7 per generator in all; 10^8 makes it 6·10^8, holding 400 MB of
//! counts twice on the host and the device).

mod common;

use common::{ctx, curand_source_module, Rng};
use rucuda_driver::{memset_d32, Context, DeviceBuffer, LaunchConfig, Stream};
use rucuda_jit::SourceModule;
use rucuda_rand::mrg32k3a::jump::CURAND_SUBSEQUENCE_BITS;
use rucuda_rand::reference::Layout;
use rucuda_rand::{
    default_state_count, Distribution, GeneratorOptions, Mrg32k3a, Philox4x32_10, RandomGenerator,
    Seeds, Xorwow,
};

/// The reference forms, by kernel-name prefix; `stored` is asserted.
const FORMS: [&str; 4] = ["plain", "noinline", "stored", "pycuda"];

/// Draws per state of the small cases (a multiple of 4: each state then owns whole chunks).
const SMALL_DRAWS_PER_STATE: usize = 16384;

/// The run's seed: `RUCUDA_POISSON_SEED`, else fresh.
fn run_seed() -> u64 {
    let seed = std::env::var("RUCUDA_POISSON_SEED")
        .ok()
        .map(|s| {
            s.parse()
                .unwrap_or_else(|_| panic!("RUCUDA_POISSON_SEED={s}: not an unsigned integer"))
        })
        .unwrap_or_else(rucuda_rand::seed::entropy);
    println!("Poisson seed {seed} (set RUCUDA_POISSON_SEED={seed} to replay)");
    seed
}

/// Draws per generator and λ of the large cases: `RUCUDA_POISSON_DRAWS`, else 10^7 (64 Ki
/// under compute-sanitizer, which is slow).
fn large_draws() -> usize {
    match std::env::var("RUCUDA_POISSON_DRAWS") {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("RUCUDA_POISSON_DRAWS={s}: not an unsigned integer")),
        Err(_) => rucuda_testkit::scaled_for_sanitizer(10_000_000, 1 << 16),
    }
}

/// `curand_init` parameters of each state.
struct Init {
    seeds: Vec<u64>,
    subs: Vec<u64>,
    offs: Vec<u64>,
    /// `Some(seed)`: the generator is made as `G::new(ctx, seed)` makes it.
    same_seed: Option<u64>,
    /// How they were chosen, for the report.
    what: String,
}

impl Init {
    /// What `G::new(ctx, seed)` does: one seed, state `i` on subsequence `i`, offset 0.
    fn like_new(seed: u64, n: usize) -> Init {
        Init {
            seeds: vec![seed; n],
            subs: (0..n as u64).collect(),
            offs: vec![0; n],
            same_seed: Some(seed),
            what: format!("as new({seed:#x})"),
        }
    }

    /// Random seeds, subsequences below `max_subsequence`, offsets below 2^40.
    fn random(rng: &mut Rng, n: usize, max_subsequence: u64) -> Init {
        Init {
            seeds: (0..n).map(|_| rng.next_u64()).collect(),
            subs: (0..n).map(|_| rng.below(max_subsequence)).collect(),
            offs: (0..n).map(|_| rng.below(1 << 40)).collect(),
            same_seed: None,
            what: "random seeds, subsequences and offsets".into(),
        }
    }

    fn options(&self) -> GeneratorOptions {
        if let Some(seed) = self.same_seed {
            // new()'s options, with the default state count spelled out.
            return GeneratorOptions {
                states: Some(self.seeds.len()),
                seeds: Seeds::Same(seed),
                ..Default::default()
            };
        }
        GeneratorOptions {
            states: Some(self.seeds.len()),
            seeds: Seeds::PerState(self.seeds.clone()),
            subsequences: Some(self.subs.clone()),
            offsets: Some(self.offs.clone()),
            ..Default::default()
        }
    }
}

/// One reference form's counts for `init`'s states, `m` per state, thread-major
/// (`out[t*m + j]`). Every slot must be written: they start as `u32::MAX`, which no
/// Poisson count below λ = 4000 reaches.
fn reference(
    module: &SourceModule,
    form: &str,
    gname: &str,
    init: &Init,
    m: usize,
    lambda: f64,
    stream: &Stream,
) -> Vec<u32> {
    let ctx = stream.context();
    let n = init.seeds.len();
    let config = LaunchConfig::for_elements(n, 128);
    let (seeds, subs, offs) = (
        DeviceBuffer::from_slice(ctx, &init.seeds).unwrap(),
        DeviceBuffer::from_slice(ctx, &init.subs).unwrap(),
        DeviceBuffer::from_slice(ctx, &init.offs).unwrap(),
    );
    let mut out = DeviceBuffer::<u32>::zeros(ctx, n * m).unwrap();
    memset_d32(ctx, &mut out, u32::MAX, n * m).unwrap();
    let (n32, m32) = (n as u32, m as u32);
    let run = |name: &str| {
        module
            .function(&format!("{name}_{gname}"))
            .unwrap_or_else(|e| panic!("{name}_{gname}: {e}"))
    };
    match form {
        "plain" | "noinline" => {
            // SAFETY: FORM_G(const u64* seeds, subs, offs, unsigned n, unsigned m,
            // unsigned* out, double lambda) reads n of each and writes out[0..n*m).
            unsafe {
                run(form).launch(
                    config,
                    stream,
                    (&seeds, &subs, &offs, n32, m32, &mut out, lambda),
                )
            }
            .unwrap();
        }
        "stored" | "pycuda" => {
            let mut size = DeviceBuffer::<u32>::zeros(ctx, 1).unwrap();
            // SAFETY: state_bytes_G(unsigned* out) writes out[0].
            unsafe { run("state_bytes").launch(LaunchConfig::linear(1, 1), stream, (&mut size,)) }
                .unwrap();
            stream.synchronize().unwrap();
            let bytes = size.to_vec().unwrap()[0] as usize;
            let mut states = DeviceBuffer::<u8>::zeros(ctx, n * bytes).unwrap();
            // SAFETY: init_G(seeds, subs, offs, unsigned n, STATE* states) reads n of each
            // and writes n states (n * sizeof(STATE) bytes, allocated above).
            unsafe { run("init").launch(config, stream, (&seeds, &subs, &offs, n32, &mut states)) }
                .unwrap();
            if form == "stored" {
                // SAFETY: stored_G(STATE* states, unsigned n, unsigned m, unsigned* out,
                // double lambda) reads and writes n states and writes out[0..n*m).
                unsafe {
                    run("stored").launch(config, stream, (&mut states, n32, m32, &mut out, lambda))
                }
                .unwrap();
            } else {
                // PyCUDA's launch: exactly one thread per state, so blocks of a divisor of n.
                let block = (1..=1024.min(n)).rev().find(|b| n % b == 0).unwrap_or(1);
                let total = i32::try_from(n * m).unwrap();
                // SAFETY: pycuda_G(STATE* s, unsigned* d, double lambda, int n) with
                // exactly n states' threads reads and writes those states and writes
                // d[0..n*m).
                unsafe {
                    run("pycuda").launch(
                        LaunchConfig::linear((n / block) as u32, block as u32),
                        stream,
                        (&mut states, &mut out, lambda, total),
                    )
                }
                .unwrap();
            }
        }
        _ => unreachable!("form {form}"),
    }
    stream
        .synchronize()
        .unwrap_or_else(|e| panic!("running cuRAND's {form}_{gname}: {e}"));
    let mut v = out.to_vec().unwrap();
    if form == "pycuda" {
        // Draw j of state t is at j * n + t there: to thread-major.
        v = (0..n * m).map(|k| v[(k % m) * n + k / m]).collect();
    }
    if let Some(i) = v.iter().position(|&x| x == u32::MAX) {
        panic!(
            "cuRAND's {form}_{gname} left output {i} (state {}) unwritten",
            i / m
        );
    }
    v
}

/// Differences of one form, with the first few for the report.
struct Diff {
    count: usize,
    states: usize,
    first: Vec<String>,
}

fn compare(ours: &[u32], theirs: &[u32], init: &Init, m: usize) -> Diff {
    let n = init.seeds.len();
    let mut per_state = vec![false; n];
    let mut d = Diff {
        count: 0,
        states: 0,
        first: Vec::new(),
    };
    let layout = Layout::for_type::<u32>(n);
    for (i, &v) in ours.iter().enumerate() {
        // Our element i is draw j of state s (m % 4 == 0: every state owns m / 4 chunks).
        let (s, j) = layout.source(i);
        let k = s * m + j;
        let w = theirs[k];
        if v != w {
            d.count += 1;
            if !per_state[s] {
                per_state[s] = true;
                d.states += 1;
                if d.first.len() < 3 {
                    d.first.push(format!(
                        "state {s} (seed {:#x}, subsequence {}, offset {}) draw {}: ours {v}, \
                         cuRAND {w}",
                        init.seeds[s], init.subs[s], init.offs[s], j
                    ));
                }
            }
        }
    }
    d
}

/// One case: `init`'s states, `m` draws each, ours against every form; returns the
/// stored form's count of differing draws (the form rucuda matches).
#[allow(clippy::too_many_arguments)]
fn case<G: RandomGenerator>(
    ctx: &Context,
    stream: &Stream,
    module: &SourceModule,
    gname: &str,
    make: &dyn Fn(&Context, &GeneratorOptions) -> rucuda_rand::Result<G>,
    init: &Init,
    m: usize,
    lambda: f64,
) -> usize {
    assert_eq!(m % 4, 0);
    let n = init.seeds.len();
    let mut g = make(ctx, &init.options()).unwrap();
    let mut out = DeviceBuffer::<u32>::zeros(ctx, n * m).unwrap();
    g.fill(&mut out, Distribution::Poisson { lambda }, stream)
        .unwrap();
    stream.synchronize().unwrap();
    let ours = out.to_vec().unwrap();
    drop(out);
    let mut line = format!(
        "{gname} lambda {lambda}: {n} states ({}), {} draws; differing from cuRAND's",
        init.what,
        n * m
    );
    let mut stored = 0;
    let mut details = Vec::new();
    for form in FORMS {
        let theirs = reference(module, form, gname, init, m, lambda, stream);
        let d = compare(&ours, &theirs, init, m);
        line += &format!(" {form}: {} ({} states)", d.count, d.states);
        if form == "stored" {
            stored = d.count;
        }
        details.extend(d.first.into_iter().map(|f| format!("    {form}: {f}")));
    }
    println!("{line}");
    for d in details {
        println!("{d}");
    }
    stored
}

/// Every case of one generator; panics at the end if any draw differs from the stored form.
fn run<G: RandomGenerator>(
    gname: &str,
    make: &dyn Fn(&Context, &GeneratorOptions) -> rucuda_rand::Result<G>,
    max_subsequence: u64,
) {
    let ctx = ctx();
    let stream = Stream::null(&ctx);
    let seed = run_seed();
    let mut rng = Rng(seed);
    let module = curand_source_module(
        &ctx,
        include_str!("kernels/curand_poisson_forms.cu"),
        "curand_poisson_forms.cu",
    );
    let nvrtc = rucuda_jit::nvrtc::Nvrtc::get().ok().map(|l| l.version());
    println!(
        "device {}, NVRTC {nvrtc:?}",
        ctx.device().name().unwrap_or_default()
    );
    // Under compute-sanitizer (slow) at most 2048 states.
    let device_default = default_state_count(&ctx).unwrap();
    let default_states =
        rucuda_testkit::scaled_for_sanitizer(device_default, device_default.min(2048));
    let large = large_draws();
    let small_m = rucuda_testkit::scaled_for_sanitizer(SMALL_DRAWS_PER_STATE, 256);
    let mut lambdas = vec![64.0, 150.5, 1000.25, 4000.0];
    for _ in 0..2 {
        // Uniform in [64, 4000].
        let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        lambdas.push(64.0 + u * 3936.0);
    }
    let started = std::time::Instant::now();
    let (mut stored, mut draws) = (0, 0);
    for (k, &lambda) in lambdas.iter().enumerate() {
        // A few states (one, for the first λ), many draws each.
        let n = if k == 0 {
            1
        } else {
            2 + rng.below(999) as usize
        };
        let init = Init::random(&mut rng, n, max_subsequence);
        stored += case(&ctx, &stream, &module, gname, make, &init, small_m, lambda);
        draws += n * small_m;
        // Many states: the new() default for the fixed λ, else a random count up to it.
        let (init, n) = if k < 4 {
            (
                Init::like_new(rng.next_u64(), default_states),
                default_states,
            )
        } else {
            let n = default_states / 8
                + rng.below((default_states - default_states / 8) as u64) as usize;
            (Init::random(&mut rng, n, max_subsequence), n)
        };
        let m = large.div_ceil(n).next_multiple_of(4);
        stored += case(&ctx, &stream, &module, gname, make, &init, m, lambda);
        draws += n * m;
    }
    println!(
        "{gname}: {draws} draws in {:.1} s, {stored} differing from cuRAND with stored states",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(
        stored, 0,
        "{gname}: {stored} Poisson draws differ from cuRAND with stored states (seed {seed})"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn poisson_xorwow_matches_curand_with_stored_states() {
    run("xorwow", &|c, o| Xorwow::with_options(c, o), u64::MAX);
}

#[test]
#[ignore = "needs a CUDA device"]
fn poisson_mrg32k3a_matches_curand_with_stored_states() {
    // cuRAND's subsequences agree with ours below 2^51 only (see mrg32k3a::jump).
    run(
        "mrg32k3a",
        &|c, o| Mrg32k3a::with_options(c, o),
        1 << CURAND_SUBSEQUENCE_BITS,
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn poisson_philox_matches_curand_with_stored_states() {
    run(
        "philox",
        &|c, o| Philox4x32_10::with_options(c, o),
        u64::MAX,
    );
}

/// The comparison itself (no GPU): our layout against thread-major reference outputs.
#[test]
fn compare_pairs_each_draw_with_its_state_s() {
    let (n, m) = (5, 12);
    let init = Init {
        seeds: vec![1; n],
        subs: vec![0; n],
        offs: vec![0; n],
        same_seed: None,
        what: String::new(),
    };
    let theirs: Vec<u32> = (0..(n * m) as u32).collect();
    let layout = Layout::for_type::<u32>(n);
    let mut ours: Vec<u32> = (0..n * m)
        .map(|i| {
            let (s, j) = layout.source(i);
            (s * m + j) as u32
        })
        .collect();
    assert_eq!(compare(&ours, &theirs, &init, m).count, 0);
    ours[7] += 1;
    ours[8] += 1;
    let d = compare(&ours, &theirs, &init, m);
    assert_eq!((d.count, d.states, d.first.len()), (2, 2, 2));
}
