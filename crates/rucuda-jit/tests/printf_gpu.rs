//! A PyCUDA-style source that includes `<stdio.h>` and prints from the device, compiled
//! by NVRTC (with rucuda's built-in header) and run; its output is captured and checked.
//! Device `printf` reaches the process's stdout when the context synchronizes, so the
//! kernels run in a child process (this test binary again, `print_child`), whose stdout
//! the parent reads and compares with the lines it expects.

use rucuda_driver::{Context, Device, DeviceBuffer, LaunchConfig, Stream};
use rucuda_jit::{Backend, CompileOptions, SourceModule};
use rucuda_testkit::TestRng as Rng;

const PRINTING: &str = include_str!("kernels/device_printf.cu");
const EVERY_HEADER: &str = include_str!("kernels/std_headers.cu");

/// The values the child prints, comma-separated.
const VALUES_VAR: &str = "RUCUDA_TEST_PRINTF_VALUES";

fn ctx() -> Context {
    let ctx = Device::get(0)
        .and_then(Device::primary_context)
        .expect("a CUDA device (this test is ignored unless the GPU bundle runs it)");
    ctx.bind().expect("bind");
    ctx
}

/// The lines `say_values` prints for `values`, sorted (threads print in any order).
fn expected_lines(values: &[i32]) -> Vec<String> {
    let mut lines: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            format!(
                "device line {i}: value {v}, squared {}, quarter {:.2}",
                v * v,
                i as f64 * 0.25
            )
        })
        .collect();
    lines.sort();
    lines
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_printf_output_is_captured_and_checked() {
    let mut rng = Rng::fresh();
    let n = 37; // more than one block of 16, the last one partial
    let values: Vec<i32> = (0..n).map(|_| rng.range(-3000, 3000) as i32).collect();
    let list: Vec<String> = values.iter().map(i32::to_string).collect();
    let out = rucuda_testkit::child_test("print_child")
        .env(VALUES_VAR, list.join(","))
        .output()
        .expect("the child process starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("child stdout:\n{stdout}\nchild stderr:\n{stderr}");
    assert!(out.status.success(), "the child failed: {}", out.status);
    assert!(stdout.contains("1 passed"), "the child test did not run");
    // The device's lines come at the synchronize, possibly right after the test
    // harness's unterminated "test print_child ... ": each is taken from its marker on.
    let mut got: Vec<String> = stdout
        .lines()
        .filter_map(|l| l.find("device line ").map(|at| l[at..].to_string()))
        .collect();
    got.sort();
    assert_eq!(got, expected_lines(&values));
    // The kernel that uses every served header printed its two lines once each.
    let once = |line: &str| stdout.lines().filter(|l| l.ends_with(line)).count();
    assert_eq!(
        once("INT_MAX=2147483647 UINT32_MAX=4294967295 FLT_MAX=3.40282e+38"),
        1,
        "{stdout}"
    );
    assert_eq!(once("offsetof=8"), 1, "{stdout}");
    // Everything the device printed came before the child's own last words.
    let done = stdout
        .find("print child: synchronized")
        .expect("the child's marker");
    let last_device_line = stdout.rfind("device line ").expect("device lines");
    assert!(last_device_line < done, "printed at the synchronize");
}

/// Runs only as the child of `device_printf_output_is_captured_and_checked`.
#[test]
#[ignore = "needs a CUDA device"]
fn print_child() {
    let Ok(list) = std::env::var(VALUES_VAR) else {
        rucuda_testkit::skip(
            "runs only as the child of device_printf_output_is_captured_and_checked",
        );
        return;
    };
    let values: Vec<i32> = list
        .split(',')
        .map(|v| v.parse().expect("an int"))
        .collect();
    let ctx = ctx();
    let options = CompileOptions::new();
    let printing = SourceModule::for_context(&ctx, PRINTING, &options).expect("compiles");
    assert_eq!(printing.compiled().compiler, Backend::Nvrtc);
    assert_eq!(printing.compiled().std_headers, ["stdio.h", "stddef.h"]);
    let n = values.len();
    let dvalues = DeviceBuffer::from_slice(&ctx, &values).unwrap();
    let stream = Stream::null(&ctx);
    // SAFETY: say_values(const int *values, int n) reads values[0..n).
    unsafe {
        printing
            .function("say_values")
            .unwrap()
            .launch(
                LaunchConfig::for_elements(n, 16),
                &stream,
                (&dvalues, n as i32),
            )
            .unwrap()
    };

    // The kernel that uses every served header: its results against the CPU.
    let every = SourceModule::for_context(&ctx, EVERY_HEADER, &options).expect("compiles");
    assert_eq!(every.compiled().compiler, Backend::Nvrtc);
    let m = 1000usize;
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![f32::NAN; m]).unwrap();
    let mut bits = DeviceBuffer::from_slice(&ctx, &vec![u32::MAX; m]).unwrap();
    // SAFETY: use_every_header(float *out, uint32_t *bits, size_t n) writes out[0..n)
    // and bits[0..n).
    unsafe {
        every
            .function("use_every_header")
            .unwrap()
            .launch(
                LaunchConfig::for_elements(m, 128),
                &stream,
                (&mut out, &mut bits, m as u64),
            )
            .unwrap()
    };
    ctx.synchronize().unwrap();
    let got_bits = bits.to_vec().unwrap();
    // 1 (2^40 >> 40) + 1 + 127 (INT8_MAX) + 1 + 1 + 1 (CHAR_BIT) + 1 + 1.
    assert!(got_bits.iter().all(|&b| b == 134), "{:?}", &got_bits[..8]);
    let got = out.to_vec().unwrap();
    for (i, g) in got.iter().enumerate() {
        let x = i as f64;
        let want = 2.0 * x.sqrt()
            + 8.0
            + x
            + std::f64::consts::PI
            + f64::from(f32::EPSILON)
            + f64::EPSILON;
        assert!(
            (f64::from(*g) - want).abs() <= 1e-5 * want.abs().max(1.0),
            "out[{i}] = {g}, want {want}"
        );
    }
    // Device printf's buffer reaches the C library's stdout at the synchronize above;
    // flush it so the lines are in the pipe before ours.
    // SAFETY: fflush(NULL) flushes every open C stream; nothing else uses them now.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    println!("print child: synchronized");
}
