//! GPU tests of modules and checked launches: a PTX saxpy against the CPU, every scalar,
//! struct and vector type packed as the kernel reads it, the checks that refuse a bad
//! launch before the driver, dynamic shared memory, globals and constants, the JIT log of
//! bad PTX, 3D grids, modules loaded from files. Each runs in its own process in the GPU
//! bundle.

use crate::common::{assert_close, core_module, ctx, Rng};
use rucuda_driver::*;

#[test]
#[ignore = "needs a CUDA device"]
fn saxpy_from_ptx_matches_cpu_in_float64() {
    let c = ctx();
    let f = core_module(&c).function("saxpy").unwrap();
    let mut rng = Rng::fresh();
    let n = 1_000_003usize;
    let (x, y) = (rng.vec_f32(n), rng.vec_f32(n));
    let a = rng.f32() * 3.0;
    let dx = DeviceBuffer::from_slice(&c, &x).unwrap();
    let dy = DeviceBuffer::from_slice(&c, &y).unwrap();
    let mut out = DeviceBuffer::from_slice(&c, &vec![f32::NAN; n]).unwrap();
    let stream = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    // SAFETY: saxpy(float a, const float* x, const float* y, float* out, u64 n).
    unsafe {
        f.launch(
            LaunchConfig::linear(264, 256),
            &stream,
            (a, &dx, &dy, &mut out, n as u64),
        )
        .unwrap()
    };
    stream.synchronize().unwrap();
    let got: Vec<f64> = out.to_vec().unwrap().into_iter().map(f64::from).collect();
    let want: Vec<f64> = (0..n)
        .map(|i| a as f64 * x[i] as f64 + y[i] as f64)
        .collect();
    assert_close(&got, &want, 1e-6);
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_scalar_type_is_packed_right() {
    let c = ctx();
    let f = core_module(&c).function("scalars").unwrap();
    let mut out = DeviceBuffer::from_slice(&c, &[f64::NAN]).unwrap();
    let args = (
        -5i8,
        200u8,
        -30000i16,
        60000u16,
        -2_000_000_000i32,
        4_000_000_000u32,
        -(1i64 << 40),
        1u64 << 41,
        1.5f32,
        -0.25f64,
    );
    let want =
        -5.0 + 200.0 + -30000.0 + 60000.0 + -2e9 + 4e9 + -(2f64.powi(40)) + 2f64.powi(41) + 1.5
            - 0.25;
    // SAFETY: scalars(...10 scalars..., double* out) writes out[0].
    unsafe {
        f.launch(
            LaunchConfig::linear(1, 1),
            &Stream::null(&c),
            (
                args.0, args.1, args.2, args.3, args.4, args.5, args.6, args.7, args.8, args.9,
                &mut out,
            ),
        )
        .unwrap()
    };
    assert_eq!(out.to_vec().unwrap()[0], want);
    // The same through a run-time argument list.
    let mut out2 = DeviceBuffer::from_slice(&c, &[f64::NAN]).unwrap();
    let mut list = ArgBuffer::new();
    list.push(args.0)
        .push(args.1)
        .push(args.2)
        .push(args.3)
        .push(args.4);
    list.push(args.5)
        .push(args.6)
        .push(args.7)
        .push(args.8)
        .push(args.9);
    list.push_memory(&out2, &Stream::null(&c), rucuda_driver::Access::Write)
        .unwrap();
    // SAFETY: as above.
    unsafe {
        f.launch_args(LaunchConfig::linear(1, 1), &Stream::null(&c), &list)
            .unwrap()
    };
    // The list holds the use of `out2` until it is dropped, after the launch.
    drop(list);
    assert_eq!(out2.to_vec().unwrap()[0], want);
    out2.copy_from_host(&[0.0]).unwrap();
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Params {
    n: i32,
    scale: f32,
    offset: f64,
}
// SAFETY: repr(C) plain numbers matching `struct Params { int; float; double; }`.
unsafe impl DeviceRepr for Params {
    const C_TYPE: &'static str = "Params";
}

#[test]
#[ignore = "needs a CUDA device"]
fn structs_and_vector_types_pass_by_value() {
    let c = ctx();
    let f = core_module(&c).function("with_struct").unwrap();
    let mut rng = Rng::fresh();
    let n = 300;
    let x = rng.vec_f32(n);
    let p = Params {
        n: n as i32,
        scale: rng.f32(),
        offset: rng.f64(),
    };
    let v = vector::Float4 {
        x: 1.0,
        y: 2.0,
        z: 3.0,
        w: 4.5,
    };
    let dx = DeviceBuffer::from_slice(&c, &x).unwrap();
    let mut out = DeviceBuffer::from_slice(&c, &vec![f64::NAN; n]).unwrap();
    // SAFETY: with_struct(Params, float4, const float*, double*) writes out[0..n).
    unsafe {
        f.launch(
            LaunchConfig::linear(1, 128),
            &Stream::null(&c),
            (p, v, &dx, &mut out),
        )
        .unwrap()
    };
    let got = out.to_vec().unwrap();
    let want: Vec<f64> = x
        .iter()
        .map(|&xi| xi as f64 * p.scale as f64 + p.offset + 10.5)
        .collect();
    assert_close(&got, &want, 1e-6);
}

#[test]
#[ignore = "needs a CUDA device"]
fn launch_checks_refuse_bad_launches_before_the_driver() {
    let c = ctx();
    let m = core_module(&c);
    let saxpy = m.function("saxpy").unwrap();
    assert_eq!(saxpy.param_sizes().unwrap(), Some(vec![4, 8, 8, 8, 8]));
    let x = DeviceBuffer::<f32>::zeros(&c, 16).unwrap();
    let s = Stream::null(&c);
    // Too few arguments.
    // SAFETY: refused before launch.
    let e = unsafe { saxpy.launch(LaunchConfig::linear(1, 32), &s, (1.0f32, &x)) }.unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("`saxpy`")
            && msg.contains("takes 5 arguments")
            && msg.contains("2 were given"),
        "{msg}"
    );
    assert_eq!(e.kind(), ErrorKind::Launch);
    // Wrong size: n passed as u32 instead of u64.
    // SAFETY: refused before launch.
    let e = unsafe { saxpy.launch(LaunchConfig::linear(1, 32), &s, (1.0f32, &x, &x, &x, 16u32)) }
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("argument 4 has 4 bytes, the kernel's parameter 4 has 8"),
        "{e}"
    );
    // Block too large.
    // SAFETY: refused before launch.
    let e = unsafe {
        saxpy.launch(
            LaunchConfig::linear(1, 2048),
            &s,
            (1.0f32, &x, &x, &x, 16u64),
        )
    }
    .unwrap_err();
    assert!(e.to_string().contains("2048 threads"), "{e}");
    // Too much dynamic shared memory.
    let shared = m.function("uses_shared").unwrap();
    // SAFETY: refused before launch.
    let e = unsafe {
        shared.launch(
            LaunchConfig::linear(1, 32).with_shared_mem(1 << 20),
            &s,
            (&x,),
        )
    }
    .unwrap_err();
    assert!(e.to_string().contains("dynamic shared memory"), "{e}");
    // The context still works.
    let mut y = DeviceBuffer::<f32>::zeros(&c, 16).unwrap();
    // SAFETY: saxpy over 16 elements of valid buffers.
    unsafe {
        saxpy
            .launch(
                LaunchConfig::linear(1, 32),
                &s,
                (1.0f32, &x, &x, &mut y, 16u64),
            )
            .unwrap()
    };
    s.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn dynamic_shared_memory_and_raised_limit() {
    let c = ctx();
    let f = core_module(&c).function("uses_shared").unwrap();
    let mut out = DeviceBuffer::from_slice(&c, &[f32::NAN; 256]).unwrap();
    // SAFETY: uses_shared(float* out) with blockDim floats of dynamic shared memory.
    unsafe {
        f.launch(
            LaunchConfig::linear(1, 256).with_shared_mem(256 * 4),
            &Stream::null(&c),
            (&mut out,),
        )
        .unwrap()
    };
    let got = out.to_vec().unwrap();
    assert!(got.iter().enumerate().all(|(i, v)| *v == (255 - i) as f32));
    // Above 48 KiB needs the attribute raised first.
    f.set_max_dynamic_shared_memory(100 * 1024).unwrap();
    // SAFETY: as above, with more shared memory than the kernel touches.
    unsafe {
        f.launch(
            LaunchConfig::linear(1, 256).with_shared_mem(100 * 1024),
            &Stream::null(&c),
            (&mut out,),
        )
        .unwrap()
    };
    assert_eq!(
        f.attribute(FunctionAttribute::MaxDynamicSharedSizeBytes)
            .unwrap(),
        100 * 1024
    );
    assert!(f.attribute(FunctionAttribute::NumRegs).unwrap() > 0);
}

#[test]
#[ignore = "needs a CUDA device"]
fn constants_written_from_safe_code_are_seen_by_kernels() {
    let c = ctx();
    let m = core_module(&c);
    let f = m.function("use_constants").unwrap();
    let mut coeffs = m.global("coefficients").unwrap();
    assert_eq!(coeffs.name(), "coefficients");
    assert_eq!(coeffs.len_of::<f32>().unwrap(), 4);
    let mut rng = Rng::fresh();
    let stream = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let mut out = DeviceBuffer::from_slice(&c, &[f32::NAN; 4]).unwrap();
    let doubled = |v: &[f32]| v.iter().map(|x| x * 2.0).collect::<Vec<f32>>();

    // 1. A synchronous write has finished when it returns: a kernel on any stream sees it.
    let host = rng.vec_f32(4);
    coeffs.write(&host).unwrap();
    assert_eq!(coeffs.read::<f32>().unwrap(), host);
    // SAFETY: use_constants(float* out) writes out[0..4) and reads `coefficients`, which
    // nothing writes until the stream is synchronized or the write is on this stream.
    unsafe {
        f.launch(LaunchConfig::linear(1, 32), &stream, (&mut out,))
            .unwrap()
    };
    assert_eq!(out.to_vec().unwrap(), doubled(&host), "after write");

    // 2. An async write from registered memory, ordered before a launch on its stream.
    let host2 = rng.vec_f32(4);
    let reg =
        RegisteredHostMemory::from_vec(&c, host2.clone(), HostRegisterFlags::empty()).unwrap();
    coeffs.write_async(&reg, &stream).unwrap();
    // SAFETY: as above; the write is queued before the launch on the same stream.
    unsafe {
        f.launch(LaunchConfig::linear(1, 32), &stream, (&mut out,))
            .unwrap()
    };
    assert_eq!(out.to_vec().unwrap(), doubled(&host2), "after write_async");
    drop(reg.into_vec().unwrap());

    // 3. The global as a copy destination: a device-to-device copy into its view.
    let host3 = rng.vec_f32(4);
    let staging = DeviceBuffer::from_slice(&c, &host3).unwrap();
    memcpy_dtod_async(&mut coeffs.view_mut::<f32>().unwrap(), &staging, &stream).unwrap();
    // SAFETY: as above.
    unsafe {
        f.launch(LaunchConfig::linear(1, 32), &stream, (&mut out,))
            .unwrap()
    };
    assert_eq!(
        out.to_vec().unwrap(),
        doubled(&host3),
        "after a copy into view_mut"
    );
    stream.synchronize().unwrap();
    assert_eq!(coeffs.view::<f32>().unwrap().len(), 4);
    assert_eq!(coeffs.read::<f32>().unwrap(), host3);

    // 4. A __device__ counter: reset, two launches, read back (after the stream: kernels
    // touch globals by name, which no launch records).
    let mut counter = m.global("device_counter").unwrap();
    let start = rng.range(0, 1000) as i32;
    counter.write(&[start]).unwrap();
    for _ in 0..2 {
        // SAFETY: as above; nothing else touches device_counter meanwhile.
        unsafe {
            f.launch(LaunchConfig::linear(1, 32), &stream, (&mut out,))
                .unwrap()
        };
    }
    stream.synchronize().unwrap();
    assert_eq!(counter.read::<i32>().unwrap(), [start + 2]);

    // 5. Typed errors: sizes that do not fill the global, a type that does not divide it.
    for e in [
        coeffs.write(&[1.0f64]).unwrap_err(),
        coeffs.write(&rng.vec_f32(5)).unwrap_err(),
        counter.read::<f64>().unwrap_err(),
        counter.view_mut::<f64>().unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::Logic, "{e}");
    }
    let e = coeffs.write(&rng.vec_f32(3)).unwrap_err().to_string();
    assert!(
        e.contains("`coefficients`") && e.contains("16 bytes"),
        "{e}"
    );
    // The failed writes changed nothing.
    assert_eq!(coeffs.read::<f32>().unwrap(), host3);
}

#[test]
#[ignore = "needs a CUDA device"]
fn globals_and_constants_are_reachable() {
    let c = ctx();
    let m = core_module(&c);
    let coeffs = m.global("coefficients").unwrap();
    assert_eq!(coeffs.bytes(), 16);
    let counter = m.global("device_counter").unwrap();
    assert_eq!(counter.bytes(), 4);
    let mut rng = Rng::fresh();
    let host: Vec<f32> = rng.vec_f32(4);
    // Write the constants through a temporary buffer copied device to device.
    let staging = DeviceBuffer::from_slice(&c, &host).unwrap();
    // SAFETY: 16 bytes to a 16-byte global.
    unsafe {
        let f = rucuda_driver::driver().unwrap().cuMemcpyDtoD_v2().unwrap();
        rucuda_driver::check(
            f(
                coeffs.device_range().address(),
                staging.device_range().address(),
                16,
            ),
            "cuMemcpyDtoD_v2",
        )
        .unwrap();
    }
    let f = m.function("use_constants").unwrap();
    let mut out = DeviceBuffer::from_slice(&c, &[f32::NAN; 4]).unwrap();
    // SAFETY: use_constants(float* out) writes out[0..4).
    unsafe {
        f.launch(LaunchConfig::linear(1, 32), &Stream::null(&c), (&mut out,))
            .unwrap()
    };
    let got = out.to_vec().unwrap();
    for i in 0..4 {
        assert_eq!(got[i], host[i] * 2.0);
    }
    assert!(m
        .global("no_such_symbol")
        .unwrap_err()
        .to_string()
        .contains("no global named"));
    assert!(m
        .function("no_such_kernel")
        .unwrap_err()
        .to_string()
        .contains("no kernel named"));
}

#[test]
#[ignore = "needs a CUDA device"]
fn bad_ptx_reports_the_jit_log() {
    let c = ctx();
    let e = Module::load_data(
        &c,
        b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n",
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("cuModuleLoadDataEx"), "{msg}");
    assert!(msg.contains("JIT log"), "{msg}");
    assert_eq!(e.kind(), ErrorKind::Logic);
}

#[test]
#[ignore = "needs a CUDA device"]
fn three_dimensional_grids_cover_every_cell() {
    let c = ctx();
    let f = core_module(&c).function("index3d").unwrap();
    let (nx, ny, nz) = (37usize, 19usize, 11usize);
    let mut out = DeviceBuffer::from_slice(&c, &vec![-1i32; nx * ny * nz]).unwrap();
    let cfg = LaunchConfig {
        grid: (
            (nx as u32).div_ceil(8),
            (ny as u32).div_ceil(4),
            (nz as u32).div_ceil(2),
        ),
        block: (8, 4, 2),
        shared_mem_bytes: 0,
    };
    // SAFETY: index3d(int* out, int nx, int ny, int nz) writes out[0..nx*ny*nz).
    unsafe {
        f.launch(
            cfg,
            &Stream::null(&c),
            (&mut out, nx as i32, ny as i32, nz as i32),
        )
        .unwrap()
    };
    let got = out.to_vec().unwrap();
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                assert_eq!(
                    got[(z * ny + y) * nx + x],
                    (x + 1000 * y + 1_000_000 * z) as i32
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn modules_load_from_files_and_kernels_take_a_cache_preference() {
    let c = ctx();
    let ptx = tempfile::Builder::new()
        .prefix("rucuda-core-")
        .suffix(".ptx")
        .tempfile()
        .unwrap();
    std::fs::write(ptx.path(), include_str!("../kernels/core.ptx")).unwrap();
    let m = Module::from_file(&c, ptx.path()).unwrap();
    drop(ptx);
    let f = m.function("add_one").unwrap();
    f.set_cache_config(CacheConfig::PreferShared).unwrap();
    let mut rng = Rng::fresh();
    let host = rng.vec_i32(513);
    let mut buf = DeviceBuffer::from_slice(&c, &host).unwrap();
    // SAFETY: add_one(int* x, int n) touches x[0..n).
    unsafe {
        f.launch(
            LaunchConfig::for_elements(513, 128),
            &Stream::null(&c),
            (&mut buf, 513i32),
        )
        .unwrap()
    };
    assert!(buf
        .to_vec()
        .unwrap()
        .iter()
        .zip(&host)
        .all(|(g, h)| *g == h + 1));
    let e = Module::from_file(&c, "/nonexistent/kernels.ptx").unwrap_err();
    assert!(e.to_string().contains("/nonexistent/kernels.ptx"), "{e}");
}
