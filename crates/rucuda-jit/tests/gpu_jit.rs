//! GPU tests of SourceModule, the memo and linking: modules compiled by NVRTC and nvcc
//! run and match a CPU reference on random data; templated kernels are found by their
//! C++ name; a kernel that launches kernels runs after linking with libcudadevrt.
//! Each is ignored in CI and run (one process per test) by the GPU bundle.

mod common;

use std::sync::Arc;
use std::time::Instant;

use rucuda_driver::{Context, ContextFlags, Device, DeviceBuffer, LaunchConfig, Stream};
use rucuda_jit::{device_arch, Backend, CompileOptions, Error, Linker, OutputKind, SourceModule};

const SAXPY: &str = common::SAXPY;

fn ctx() -> Context {
    let ctx = Device::get(0)
        .and_then(Device::primary_context)
        .expect("a CUDA device (this test is ignored unless the GPU bundle runs it)");
    ctx.bind().expect("bind");
    ctx
}

// Seeded random inputs (fresh per run, `RUCUDA_TEST_SEED` replays), from the testkit.
use rucuda_testkit::{assert_close, TestRng as Rng};

/// Runs `saxpy(a, x, y, n)` from `module` on random data and checks it against the CPU.
fn check_saxpy(ctx: &Context, module: &SourceModule) {
    let mut rng = Rng::fresh();
    let n = 100_003usize;
    let a = rng.f32() * 3.0;
    let x = rng.vec_f32(n);
    let y = rng.vec_f32(n);
    let dx = DeviceBuffer::from_slice(ctx, &x).unwrap();
    let mut dy = DeviceBuffer::from_slice(ctx, &y).unwrap();
    let saxpy = module.function("saxpy").unwrap();
    let stream = Stream::null(ctx);
    // SAFETY: saxpy(float a, const float *x, float *y, int n) reads x[0..n), writes y[0..n).
    unsafe {
        saxpy
            .launch(
                LaunchConfig::for_elements(n, 256),
                &stream,
                (a, &dx, &mut dy, n as i32),
            )
            .unwrap()
    };
    let got = dy.to_vec().unwrap();
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| a.mul_add(*x, *y)).collect();
    assert_close(&got, &want, 1e-6);
}

fn nvcc_missing(result: &Result<Arc<SourceModule>, Error>) -> bool {
    if let Err(Error::NvccNotFound { tried }) = result {
        rucuda_testkit::skip(format!("nvcc not found (tried {tried:?})"));
        return true;
    }
    false
}

#[test]
#[ignore = "needs a CUDA device"]
fn nvrtc_module_matches_the_cpu() {
    let ctx = ctx();
    let m = SourceModule::new(SAXPY, &CompileOptions::new()).unwrap();
    assert_eq!(m.compiled().arch, device_arch(&ctx).unwrap());
    assert_eq!(m.compiled().output, OutputKind::Cubin);
    check_saxpy(&ctx, &m);
}

#[test]
#[ignore = "needs a CUDA device"]
fn nvcc_module_matches_the_cpu() {
    let ctx = ctx();
    let result =
        SourceModule::for_context(&ctx, SAXPY, &CompileOptions::new().backend(Backend::Nvcc));
    if nvcc_missing(&result) {
        return;
    }
    let m = result.unwrap();
    assert_eq!(m.compiled().output, OutputKind::Cubin);
    check_saxpy(&ctx, &m);
}

#[test]
#[ignore = "needs a CUDA device"]
fn ptx_and_fatbin_modules_match_the_cpu() {
    let ctx = ctx();
    let ptx =
        SourceModule::for_context(&ctx, SAXPY, &CompileOptions::new().output(OutputKind::Ptx))
            .unwrap();
    assert_eq!(ptx.compiled().output, OutputKind::Ptx);
    check_saxpy(&ctx, &ptx);
    let arch = device_arch(&ctx).unwrap();
    let fat = CompileOptions::new()
        .backend(Backend::Nvcc)
        .output(OutputKind::Fatbin)
        .code(format!("{},{}", arch.real(), arch.virtual_arch()));
    let result = SourceModule::for_context(&ctx, SAXPY, &fat);
    if nvcc_missing(&result) {
        return;
    }
    check_saxpy(&ctx, &result.unwrap());
}

#[test]
#[ignore = "needs a CUDA device"]
fn templated_kernel_is_found_by_its_cpp_name() {
    let ctx = ctx();
    let src = r#"
template <typename T>
__global__ void axpy(T a, const T *x, T *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#;
    let o = CompileOptions::new()
        .no_extern_c(true)
        .name_expression("axpy<float>")
        .name_expression("axpy<double>");
    let m = SourceModule::for_context(&ctx, src, &o).unwrap();
    assert!(m
        .lowered_name("axpy<double>")
        .unwrap()
        .starts_with("_Z4axpyIdE"));
    let mut rng = Rng::fresh();
    let n = 4099usize;
    let x: Vec<f64> = (0..n).map(|_| f64::from(rng.f32())).collect();
    let y: Vec<f64> = (0..n).map(|_| f64::from(rng.f32())).collect();
    let a = 1.5f64;
    let dx = DeviceBuffer::from_slice(&ctx, &x).unwrap();
    let mut dy = DeviceBuffer::from_slice(&ctx, &y).unwrap();
    let f = m.function("axpy<double>").unwrap();
    // SAFETY: axpy<double>(double a, const double *x, double *y, int n) touches [0, n).
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 128),
            &Stream::null(&ctx),
            (a, &dx, &mut dy, n as i32),
        )
        .unwrap()
    };
    let got = dy.to_vec().unwrap();
    for i in 0..n {
        let want = a.mul_add(x[i], y[i]);
        assert!(
            (got[i] - want).abs() <= 1e-12,
            "element {i}: {} vs {want}",
            got[i]
        );
    }
    // The float instantiation is there too.
    m.function("axpy<float>").unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn memo_returns_the_loaded_module_within_microseconds() {
    let ctx = ctx();
    rucuda_jit::cache::memo::clear();
    let o = CompileOptions::new();
    let first = SourceModule::for_context(&ctx, SAXPY, &o).unwrap();
    let again = SourceModule::for_context(&ctx, SAXPY, &o).unwrap();
    assert!(Arc::ptr_eq(&first, &again));
    let current = SourceModule::new(SAXPY, &o).unwrap();
    assert!(Arc::ptr_eq(&first, &current));
    // Other options: another module.
    let fast = SourceModule::for_context(&ctx, SAXPY, &o.clone().fast_math(true)).unwrap();
    assert!(!Arc::ptr_eq(&first, &fast));
    // Another context: another module.
    let other = Device::get(0)
        .unwrap()
        .make_context(ContextFlags::empty())
        .unwrap();
    let on_other = SourceModule::for_context(&other, SAXPY, &o).unwrap();
    assert!(!Arc::ptr_eq(&first, &on_other));
    drop(on_other);
    rucuda_jit::cache::memo::clear_context(other.id());
    ctx.bind().unwrap();
    let mut times = Vec::new();
    for _ in 0..2000 {
        let t = Instant::now();
        let m = SourceModule::for_context(&ctx, SAXPY, &o).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e6);
        assert!(Arc::ptr_eq(&m, &first));
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "compile_memo_hit_us {median:.3} (median of {})",
        times.len()
    );
    let limit = if cfg!(debug_assertions) { 50.0 } else { 5.0 };
    // Under compute-sanitizer the driver calls are intercepted: a timing, not a check.
    let limit = rucuda_testkit::scaled_for_sanitizer(limit, f64::INFINITY);
    assert!(median <= limit, "memo hit took {median} µs (limit {limit})");
}

#[test]
#[ignore = "needs a CUDA device"]
fn globals_are_found_and_written_by_kernels() {
    let ctx = ctx();
    let src = r#"
__device__ int counter;
__constant__ float coeff[4];
__global__ void count(int n) { atomicAdd(&counter, n); }
"#;
    let m = SourceModule::for_context(&ctx, src, &CompileOptions::new()).unwrap();
    assert_eq!(m.global("coeff").unwrap().bytes(), 16);
    let counter = m.global("counter").unwrap();
    assert_eq!(counter.bytes(), 4);
    let mut zero = DeviceBuffer::from_slice(&ctx, &[0i32]).unwrap();
    let count = m.function("count").unwrap();
    // SAFETY: count(int n) adds n to the module's `counter` once per thread.
    unsafe {
        count
            .launch(LaunchConfig::linear(2, 64), &Stream::null(&ctx), (3i32,))
            .unwrap()
    };
    zero.copy_from_device(&counter).unwrap();
    assert_eq!(zero.to_vec().unwrap(), [2 * 64 * 3]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn linked_sources_call_each_other() {
    let ctx = ctx();
    let lib = "__device__ float twice_plus(float x, float c) { return 2.0f * x + c; }\n";
    let user = r#"
extern __device__ float twice_plus(float x, float c);
__global__ void apply(float *x, float c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = twice_plus(x[i], c);
}
"#;
    // One input from a file (relocatable PTX compiled beforehand), one from source.
    let lib_ptx = rucuda_jit::compile(
        lib,
        &CompileOptions::new()
            .arch(device_arch(&ctx).unwrap())
            .output(OutputKind::Ptx)
            .relocatable(true),
    )
    .unwrap();
    let dir = common::temp_dir("link-file");
    let lib_path = dir.path().join("lib.ptx");
    std::fs::write(&lib_path, &lib_ptx.image[..lib_ptx.image.len() - 1]).unwrap();
    let mut linker = Linker::new(&ctx).unwrap();
    linker
        .add_file(&lib_path, None)
        .unwrap()
        .add_source(user, &CompileOptions::new().program_name("user.cu"))
        .unwrap();
    let linked = linker.link().unwrap();
    assert!(!linked.image.is_empty());
    let mut rng = Rng::fresh();
    let n = 5000usize;
    let x = rng.vec_f32(n);
    let mut dx = DeviceBuffer::from_slice(&ctx, &x).unwrap();
    let apply = linked.function("apply").unwrap();
    // SAFETY: apply(float *x, float c, int n) touches x[0..n).
    unsafe {
        apply
            .launch(
                LaunchConfig::for_elements(n, 256),
                &Stream::null(&ctx),
                (&mut dx, 0.5f32, n as i32),
            )
            .unwrap()
    };
    let want: Vec<f32> = x.iter().map(|v| 2.0f32.mul_add(*v, 0.5)).collect();
    assert_close(&dx.to_vec().unwrap(), &want, 1e-6);
}

#[test]
#[ignore = "needs a CUDA device"]
fn kernel_launching_kernels_runs_after_linking_cudadevrt() {
    if rucuda_testkit::skip_under_sanitizer_tools(
        &["racecheck", "initcheck", "synccheck"],
        "device-side launches: \"CUDA Dynamic Parallelism is not supported by the selected tool\"",
    ) {
        return;
    }
    let ctx = ctx();
    let src = r#"
__global__ void child(float *x, int offset, int count)
{
    int i = threadIdx.x;
    if (i < count) x[offset + i] = x[offset + i] * 2.0f + 1.0f;
}

__global__ void parent(float *x, int n, int per_child)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int offset = c * per_child;
    if (offset < n) {
        int count = min(per_child, n - offset);
        child<<<1, per_child>>>(x, offset, count);
    }
}
"#;
    let mut linker = Linker::new(&ctx).unwrap();
    linker
        .add_source(src, &CompileOptions::new())
        .unwrap()
        .add_cudadevrt()
        .unwrap();
    let linked = linker.link().unwrap();
    let mut rng = Rng::fresh();
    let (n, per_child) = (10_000usize, 128usize);
    let x = rng.vec_f32(n);
    let mut dx = DeviceBuffer::from_slice(&ctx, &x).unwrap();
    let parent = linked.function("parent").unwrap();
    let children = n.div_ceil(per_child);
    // SAFETY: parent(float *x, int n, int per_child) launches children that touch x[0..n).
    unsafe {
        parent
            .launch(
                LaunchConfig::for_elements(children, 32),
                &Stream::null(&ctx),
                (&mut dx, n as i32, per_child as i32),
            )
            .unwrap()
    };
    let want: Vec<f32> = x.iter().map(|v| 2.0f32.mul_add(*v, 1.0)).collect();
    assert_close(&dx.to_vec().unwrap(), &want, 1e-6);
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_bad_kernel_name_is_a_clear_error() {
    let ctx = ctx();
    let m = SourceModule::for_context(&ctx, SAXPY, &CompileOptions::new()).unwrap();
    let err = m.function("saxpyy").unwrap_err();
    assert!(err.to_string().contains("saxpyy"), "{err}");
}
