//! GPU fault test: running out of device memory in the middle of a chain of array
//! expressions. The failing step returns a typed error (`ArrayError::Driver` of kind
//! `Memory`), the arrays made before it keep their values, freeing one lets the same
//! expression succeed, and once everything is dropped the device's free memory is back
//! where it started.

mod common;

use common::{ctx, stream};
use rucuda_array::elementwise::ElementwiseKernel;
use rucuda_array::{ArrayError, GpuArray, SliceArg};
use rucuda_driver::{ErrorKind, MemPool};

/// Elements per array: 256 MiB of f32.
const CHUNK: usize = 64 << 20;
/// Free memory may come back short by this much (module images, the driver's own
/// bookkeeping).
const SLACK: usize = 256 << 20;

fn head_and_tail(a: &GpuArray<f32>) -> Vec<f32> {
    let n = a.len() as isize;
    let mut out = a.slice(&[SliceArg::range(0, 4)]).unwrap().to_vec().unwrap();
    out.extend(
        a.slice(&[SliceArg::range(n - 4, n)])
            .unwrap()
            .to_vec()
            .unwrap(),
    );
    out
}

#[test]
#[ignore = "needs a CUDA device"]
fn out_of_memory_mid_expression_is_typed_and_leaks_nothing() {
    if rucuda_testkit::skip_under_sanitizer("runs the device out of memory on purpose") {
        return;
    }
    let c = ctx();
    let s = stream();
    c.synchronize().unwrap();
    let (free_before, total) = c.mem_get_info().unwrap();
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let axpy = unsafe {
        ElementwiseKernel::new(
            "float a, const float *x, const float *y, float *z",
            "z[i] = a * x[i] + y[i]",
            "axpy_oom",
        )
    }
    .unwrap();
    let x = GpuArray::<f32>::full(&s, &[CHUNK], 1.5).unwrap();
    let y = GpuArray::<f32>::full(&s, &[CHUNK], 2.0).unwrap();
    // z_k = k * x + y, each into a new array, until the device is full.
    let step = |k: usize| -> Result<GpuArray<f32>, ArrayError> {
        let mut z = GpuArray::<f32>::empty(&s, &[CHUNK])?;
        axpy.call(
            &s,
            &[(k as f32).into(), (&x).into(), (&y).into(), (&mut z).into()],
        )?;
        Ok(z)
    };
    let mut held = Vec::new();
    let limit = total / (CHUNK * 4) + 8;
    let err = loop {
        assert!(held.len() < limit, "no out-of-memory after {limit} arrays");
        match step(held.len()) {
            Ok(z) => held.push(z),
            Err(e) => break e,
        }
    };
    println!(
        "out of memory after {} arrays of 256 MiB: {err}",
        held.len()
    );
    match &err {
        ArrayError::Driver(d) => assert_eq!(d.kind(), ErrorKind::Memory, "{err}"),
        other => panic!("expected a driver memory error, got {other:?}"),
    }
    assert!(held.len() >= 2, "the device filled up too early");
    // What was computed before the failure is intact.
    s.synchronize().unwrap();
    for k in [0, held.len() / 2, held.len() - 1] {
        let want = k as f32 * 1.5 + 2.0;
        assert!(
            head_and_tail(&held[k]).iter().all(|v| *v == want),
            "array {k} changed"
        );
    }
    // Free one array; the same expression now succeeds (stream-ordered frees are
    // reusable on the same stream at once).
    held.pop();
    let k = held.len();
    let z = step(k).unwrap();
    assert!(head_and_tail(&z).iter().all(|v| *v == k as f32 * 1.5 + 2.0));
    held.push(z);
    // Everything back.
    drop(held);
    drop((x, y));
    s.synchronize().unwrap();
    c.synchronize().unwrap();
    c.check_deferred_errors().unwrap();
    // The pool keeps freed memory for reuse (rucuda-array raises its release threshold,
    // as CuPy and PyTorch keep theirs): trimmed, it gives back all that nothing holds.
    MemPool::current(&c).unwrap().trim_to(0).unwrap();
    let (free_after, _) = c.mem_get_info().unwrap();
    println!("free memory: {free_before} before, {free_after} after");
    // Other test processes on the same GPU (run.sh --jobs) move the free memory meanwhile.
    assert!(
        free_after + SLACK >= free_before || rucuda_testkit::gpu_shared(),
        "{} MiB not given back",
        (free_before - free_after) >> 20
    );
}
