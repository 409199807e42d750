//! A data-parallel training step on every visible GPU: each GPU holds a shard of the data,
//! computes the partial sums of its gradient with a reduction kernel, and an all-reduce
//! adds the partial sums of all GPUs, so every GPU takes the same step.
//!
//! The model is a line, `y = a·x + b`, fitted by gradient descent on the mean squared
//! error to noisy samples of `y = 3x + 1`. The first step's all-reduced gradient is
//! checked against the CPU over all shards, and the ranks must end with the same (a, b).
//!
//! ```text
//! cargo run --release -p rucuda-nccl --example data_parallel                  # one process per GPU
//! cargo run --release -p rucuda-nccl --example data_parallel -- --one-process # one process, all GPUs
//!     [--ranks N] [--samples N] [--steps N]
//! ```
//!
//! One process per GPU: this program starts itself once per GPU with `RUCUDA_DP_RANK`,
//! `RUCUDA_DP_NRANKS` and `RUCUDA_DP_ID_FILE` set; rank 0 makes the communicator's unique
//! id and writes it to that file, the others read it. Across hosts the same program works
//! with any launcher that sets those variables and a file (or another channel) that all
//! hosts can read. One process: `Communicator::init_all` and a group per step.
//!
//! Every process it starts gets `NCCL_NVLS_ENABLE=0` (NVLink multicast stays off on the
//! machines this project runs on).
//!
//! The partial sums come from rucuda-array's `ReductionKernel` (PyCUDA's), one per
//! component of the gradient, written into the two elements of the array that is then
//! all-reduced.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rucuda_array::reduction::ReductionKernel;
use rucuda_array::{DType, GpuArray, SliceArg};
use rucuda_driver::{Context, Device, Stream, StreamFlags};
use rucuda_nccl::{group, Communicator, ReduceOp, UniqueId};

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

const RANK_ENV: &str = "RUCUDA_DP_RANK";
const NRANKS_ENV: &str = "RUCUDA_DP_NRANKS";
const ID_FILE_ENV: &str = "RUCUDA_DP_ID_FILE";

const TRUE_A: f64 = 3.0;
const TRUE_B: f64 = 1.0;
const LEARNING_RATE: f64 = 0.4;

/// The C arguments of both partial sums (PyCUDA's `ReductionKernel` form; its reduce
/// expression names the two values `a` and `b`, so the model's are `slope` and `offset`).
const ARGUMENTS: &str = "float slope, float offset, const float *x, const float *y";

/// The two partial sums of the squared error's gradient over a shard, in double:
/// Σ 2r·x and Σ 2r, with r = slope·x + offset − y.
fn gradient_kernels() -> rucuda_array::Result<[ReductionKernel; 2]> {
    let residual = "((double)slope * x[i] + offset - y[i])";
    Ok([
        // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
        unsafe {
            ReductionKernel::new(
                DType::F64,
                "0.0",
                "a + b",
                &format!("2.0 * {residual} * x[i]"),
                ARGUMENTS,
                "gradient_slope",
            )
        }?,
        // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
        unsafe {
            ReductionKernel::new(
                DType::F64,
                "0.0",
                "a + b",
                &format!("2.0 * {residual}"),
                ARGUMENTS,
                "gradient_offset",
            )
        }?,
    ])
}

struct Options {
    one_process: bool,
    ranks: Option<usize>,
    samples: usize,
    steps: usize,
}

fn parse_options() -> BoxResult<Options> {
    let mut o = Options {
        one_process: false,
        ranks: None,
        samples: 1 << 20,
        steps: 40,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut number = |flag: &str| -> BoxResult<usize> {
            Ok(args
                .next()
                .ok_or(format!("{flag} needs a number"))?
                .parse()?)
        };
        match a.as_str() {
            "--one-process" => o.one_process = true,
            "--ranks" => o.ranks = Some(number("--ranks")?),
            "--samples" => o.samples = number("--samples")?,
            "--steps" => o.steps = number("--steps")?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    Ok(o)
}

/// The samples of rank `rank`: x uniform in [-1, 1), y = 3x + 1 + noise (deterministic).
fn shard(rank: usize, n: usize) -> (Vec<f32>, Vec<f32>) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(rank as u64 + 1);
    let mut uniform = move || rng.gen_range(-1.0f32..1.0);
    let x: Vec<f32> = (0..n).map(|_| uniform()).collect();
    let y = x
        .iter()
        .map(|&x| (TRUE_A * f64::from(x) + TRUE_B) as f32 + 0.1 * uniform())
        .collect();
    (x, y)
}

/// The gradient's sums over every shard, on the CPU.
fn cpu_gradient(nranks: usize, n: usize, a: f64, b: f64) -> [f64; 2] {
    let mut g = [0.0f64; 2];
    for rank in 0..nranks {
        let (x, y) = shard(rank, n);
        for (&x, &y) in x.iter().zip(&y) {
            let r = a as f32 as f64 * f64::from(x) + f64::from(b as f32) - f64::from(y);
            g[0] += 2.0 * r * f64::from(x);
            g[1] += 2.0 * r;
        }
    }
    g
}

/// One GPU's part: its shard on the device, the reduction kernels, a stream, and the
/// two-element gradient that is all-reduced.
struct Worker {
    comm: Communicator,
    stream: Stream,
    x: GpuArray<f32>,
    y: GpuArray<f32>,
    kernels: [ReductionKernel; 2],
    grad: GpuArray<f64>,
}

impl Worker {
    fn new(comm: Communicator, samples: usize) -> BoxResult<Worker> {
        let stream = Stream::new(comm.context(), StreamFlags::NON_BLOCKING)?;
        let (x, y) = shard(comm.rank(), samples);
        let (x, y) = (
            GpuArray::from_slice(&stream, &x)?,
            GpuArray::from_slice(&stream, &y)?,
        );
        let grad = GpuArray::<f64>::zeros(&stream, &[2])?;
        Ok(Worker {
            comm,
            stream,
            x,
            y,
            kernels: gradient_kernels()?,
            grad,
        })
    }

    /// Queues this shard's partial sums into the two elements of `grad`.
    fn partial_gradient(&mut self, a: f64, b: f64) -> BoxResult<()> {
        for (k, kernel) in self.kernels.iter().enumerate() {
            let mut component = self
                .grad
                .slice(&[SliceArg::range(k as isize, k as isize + 1)])?;
            kernel.call_into(
                &self.stream,
                &[
                    (a as f32).into(),
                    (b as f32).into(),
                    (&self.x).into(),
                    (&self.y).into(),
                ],
                &mut component,
            )?;
        }
        Ok(())
    }

    fn gradient(&self) -> BoxResult<[f64; 2]> {
        self.comm.wait(&self.stream, Duration::from_secs(120))?;
        let g = self.grad.to_vec()?;
        Ok([g[0], g[1]])
    }
}

/// Gradient descent on (a, b): every step, every worker's partial sums are all-reduced.
/// `all_reduce` issues the all-reduce of every worker this thread drives.
fn train(
    workers: &mut [Worker],
    nranks: usize,
    samples: usize,
    steps: usize,
    all_reduce: impl Fn(&mut [Worker]) -> rucuda_nccl::Result<()>,
) -> BoxResult<(f64, f64)> {
    let total = (nranks * samples) as f64;
    let (mut a, mut b) = (0.0f64, 0.0f64);
    let start = Instant::now();
    for step in 0..steps {
        for w in workers.iter_mut() {
            w.partial_gradient(a, b)?;
        }
        all_reduce(workers)?;
        let grads: Vec<[f64; 2]> = workers
            .iter()
            .map(Worker::gradient)
            .collect::<BoxResult<_>>()?;
        if grads.windows(2).any(|p| p[0] != p[1]) {
            return Err(format!("ranks of this process disagree at step {step}: {grads:?}").into());
        }
        let g = grads[0];
        if step == 0 {
            let want = cpu_gradient(nranks, samples, a, b);
            for k in 0..2 {
                let err = (g[k] - want[k]).abs() / want[k].abs().max(1.0);
                if err > 1e-6 {
                    return Err(format!(
                        "step 0: the all-reduced gradient {g:?} differs from the CPU's {want:?}"
                    )
                    .into());
                }
            }
            println!("step 0: all-reduced gradient {g:?} matches the CPU over {nranks} shard(s)");
        }
        a -= LEARNING_RATE * g[0] / total;
        b -= LEARNING_RATE * g[1] / total;
    }
    println!(
        "{steps} steps over {nranks} rank(s) × {samples} samples in {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok((a, b))
}

fn report(rank: usize, a: f64, b: f64) -> BoxResult<()> {
    println!(
        "rank {rank}: fitted a = {a:.6}, b = {b:.6} (true 3, 1); bits {:016x} {:016x}",
        a.to_bits(),
        b.to_bits()
    );
    if (a - TRUE_A).abs() > 0.05 || (b - TRUE_B).abs() > 0.05 {
        return Err(format!("rank {rank} did not converge: a = {a}, b = {b}").into());
    }
    Ok(())
}

/// One process per GPU: the child part.
fn run_rank(options: &Options) -> BoxResult<()> {
    let var = |k: &str| std::env::var(k).map_err(|_| format!("{k} is not set"));
    let rank: usize = var(RANK_ENV)?.parse()?;
    let nranks: usize = var(NRANKS_ENV)?.parse()?;
    let id_file = PathBuf::from(var(ID_FILE_ENV)?);
    let id = if rank == 0 {
        let id = UniqueId::new()?;
        id.save(&id_file)?;
        id
    } else {
        UniqueId::load_waiting(&id_file, Duration::from_secs(60))?
    };
    let ctx = Device::get(rank)?.primary_context()?;
    let comm = Communicator::init_rank(&ctx, nranks, &id, rank)?;
    let mut workers = vec![Worker::new(comm, options.samples)?];
    let (a, b) = train(&mut workers, nranks, options.samples, options.steps, |ws| {
        let w = &mut ws[0];
        w.comm
            .all_reduce_in_place(&mut w.grad, ReduceOp::Sum, &w.stream)
    })?;
    report(rank, a, b)
}

/// One process per GPU: the parent starts a child per rank and checks they agree.
fn launch_ranks(nranks: usize) -> BoxResult<()> {
    let exe = std::env::current_exe()?;
    let id_file = std::env::temp_dir().join(format!("rucuda-dp-{}.ncclid", std::process::id()));
    let _ = std::fs::remove_file(&id_file);
    println!(
        "one process per GPU: starting {nranks} rank(s); the unique id goes through {}",
        id_file.display()
    );
    let mut children = Vec::new();
    for rank in 0..nranks {
        let child = Command::new(&exe)
            .args(std::env::args().skip(1))
            .env(RANK_ENV, rank.to_string())
            .env(NRANKS_ENV, nranks.to_string())
            .env(ID_FILE_ENV, &id_file)
            .env("NCCL_NVLS_ENABLE", "0")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        children.push(child);
    }
    let mut fitted = Vec::new();
    let mut failed = 0;
    for (rank, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            println!("[rank {rank}] {line}");
            if let Some(bits) = line.split("bits ").nth(1) {
                fitted.push(bits.to_string());
            }
        }
        if !out.status.success() {
            eprintln!("rank {rank} failed: {}", out.status);
            failed += 1;
        }
    }
    let _ = std::fs::remove_file(&id_file);
    if failed > 0 {
        return Err(format!("{failed} rank(s) failed").into());
    }
    if fitted.len() != nranks || fitted.windows(2).any(|p| p[0] != p[1]) {
        return Err(format!("the ranks ended with different parameters: {fitted:?}").into());
    }
    println!("all {nranks} rank(s) took the same steps and agree bit for bit");
    Ok(())
}

/// One process for all GPUs: `init_all`, every step's all-reduces in one group.
fn one_process(nranks: usize, options: &Options) -> BoxResult<()> {
    let ctxs: Vec<Context> = (0..nranks)
        .map(|i| Device::get(i)?.primary_context())
        .collect::<Result<_, _>>()?;
    let comms = Communicator::init_all(&ctxs)?;
    println!("one process for {nranks} GPU(s): init_all");
    let mut workers = comms
        .into_iter()
        .map(|c| Worker::new(c, options.samples))
        .collect::<BoxResult<Vec<_>>>()?;
    let (a, b) = train(&mut workers, nranks, options.samples, options.steps, |ws| {
        group(|| {
            for w in ws.iter_mut() {
                w.comm
                    .all_reduce_in_place(&mut w.grad, ReduceOp::Sum, &w.stream)?;
            }
            Ok(())
        })
    })?;
    for w in &workers {
        report(w.comm.rank(), a, b)?;
    }
    Ok(())
}

fn main() -> BoxResult<()> {
    // NVLink multicast stays off (see the guide's chapter on scaling out).
    std::env::set_var("NCCL_NVLS_ENABLE", "0");
    let options = parse_options()?;
    if std::env::var_os(RANK_ENV).is_some() {
        return run_rank(&options);
    }
    let visible = Device::count()?;
    let nranks = options.ranks.unwrap_or(visible).min(visible);
    if nranks == 0 {
        return Err("no GPU is visible".into());
    }
    if let Err(e) = rucuda_nccl::version() {
        return Err(format!("NCCL is needed: {e}").into());
    }
    if options.one_process {
        one_process(nranks, &options)?;
    } else {
        launch_ranks(nranks)?;
    }
    println!("data_parallel: OK");
    Ok(())
}
