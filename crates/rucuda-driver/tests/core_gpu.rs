//! GPU tests of the core: devices, contexts, streams, events, device buffers, modules and
//! checked launches. Each runs in its own process in the GPU bundle.

mod common;

use common::{assert_close, core_module, ctx, Rng};
use rucuda_driver::*;

const GPU: &str = "needs a CUDA device";

#[test]
#[ignore = "needs a CUDA device"]
fn device_queries_are_consistent() {
    let _ = GPU;
    assert!(Device::count().unwrap() >= 1);
    let dev = Device::get(0).unwrap();
    let name = dev.name().unwrap();
    assert!(!name.is_empty());
    let (major, minor) = dev.compute_capability().unwrap();
    assert!(major >= 5 && minor >= 0);
    assert!(dev.total_memory().unwrap() > 1 << 30);
    let bus = dev.pci_bus_id().unwrap();
    assert_eq!(Device::by_pci_bus_id(&bus).unwrap(), dev);
    assert!(dev.uuid_string().unwrap().starts_with("GPU-"));
    let attrs = dev.attributes().unwrap();
    assert_eq!(attrs["COMPUTE_CAPABILITY_MAJOR"], major);
    assert!(attrs["MULTIPROCESSOR_COUNT"] > 0);
    assert_eq!(attrs["WARP_SIZE"], 32);
    assert!(
        attrs.len() > 100,
        "only {} attributes answered",
        attrs.len()
    );
    let json = serde_json::to_string(&attrs).unwrap();
    assert!(json.contains("MAX_THREADS_PER_BLOCK"));
    assert!(driver_version().unwrap() >= 12000);
    assert_eq!(get_version(), (13, 0, 0));
    assert!(dev.can_access_peer(dev).is_ok());
    println!("{name}: sm_{major}{minor}, {} attributes", attrs.len());
}

#[test]
#[ignore = "needs a CUDA device"]
fn primary_context_is_shared_and_created_context_is_separate() {
    let a = ctx();
    let b = Device::get(0).unwrap().primary_context().unwrap();
    assert_eq!(a, b);
    assert_eq!(a.id(), b.id());
    assert!(a.is_primary());
    let created = Device::get(0)
        .unwrap()
        .make_context(ContextFlags::SCHED_BLOCKING_SYNC)
        .unwrap();
    assert!(!created.is_primary());
    assert_ne!(created, a);
    // make_context leaves it current, like PyCUDA.
    assert_eq!(Context::current().unwrap().unwrap(), created);
    a.bind().unwrap();
    assert_eq!(Context::current().unwrap().unwrap(), a);
    // push/pop
    created.push().unwrap();
    assert_eq!(Context::current().unwrap().unwrap(), created);
    Context::pop().unwrap();
    assert!(created.api_version().unwrap() >= 3020);
    let (free, total) = created.mem_get_info().unwrap();
    assert!(free > 0 && free <= total);
    created.synchronize().unwrap();
    created.detach().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn limits_and_cache_config_round_trip() {
    let c = ctx();
    c.set_limit(Limit::StackSize, 4096).unwrap();
    assert!(c.limit(Limit::StackSize).unwrap() >= 4096);
    c.set_limit(Limit::PrintfFifoSize, 1 << 20).unwrap();
    assert!(c.limit(Limit::PrintfFifoSize).unwrap() >= 1 << 20);
    c.set_cache_config(CacheConfig::PreferL1).unwrap();
    let got = c.cache_config().unwrap();
    assert!(
        matches!(got, CacheConfig::PreferL1 | CacheConfig::PreferNone),
        "{got:?}"
    );
    let (least, greatest) = c.stream_priority_range().unwrap();
    assert!(greatest <= least);
}

#[test]
#[ignore = "needs a CUDA device"]
fn contexts_are_usable_from_many_threads() {
    let c = ctx();
    let m = core_module(&c);
    let add_one = m.function("add_one").unwrap();
    std::thread::scope(|s| {
        for t in 0..8 {
            let (c, add_one) = (c.clone(), add_one.clone());
            s.spawn(move || {
                let n = 1000 + t * 17;
                let host: Vec<i32> = (0..n as i32).map(|i| i * 3 - t as i32).collect();
                let mut buf = DeviceBuffer::from_slice(&c, &host).unwrap();
                let stream = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
                // SAFETY: add_one(int* x, int n) touches x[0..n).
                unsafe {
                    add_one
                        .launch(
                            LaunchConfig::for_elements(n, 128),
                            &stream,
                            (&mut buf, n as i32),
                        )
                        .unwrap()
                };
                stream.synchronize().unwrap();
                let out = buf.to_vec().unwrap();
                assert!(out.iter().zip(&host).all(|(o, h)| *o == h + 1));
            });
        }
    });
}

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
fn streams_events_and_callbacks() {
    let c = ctx();
    let m = core_module(&c);
    let spin = m.function("spin").unwrap();
    let s1 = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let (least, greatest) = c.stream_priority_range().unwrap();
    let s2 = Stream::with_priority(&c, StreamFlags::NON_BLOCKING, greatest).unwrap();
    assert_eq!(s2.priority().unwrap(), greatest);
    assert!(least >= greatest);
    assert_eq!(s1.flags().unwrap(), StreamFlags::NON_BLOCKING);
    let start = Event::new(&c, EventFlags::DEFAULT).unwrap();
    let end = Event::new(&c, EventFlags::DEFAULT).unwrap();
    start.record(&s1).unwrap();
    // SAFETY: spin(u64 cycles) touches no memory.
    unsafe {
        spin.launch(LaunchConfig::linear(1, 1), &s1, (200_000_000u64,))
            .unwrap()
    };
    end.record(&s1).unwrap();
    assert!(!s1.is_done().unwrap(), "a 0.1 s kernel should still run");
    assert!(!end.query().unwrap());
    // s2 waits for s1's end event; its callback must see the spin finished.
    s2.wait_event(&end).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let end2 = end.clone();
    s2.add_callback(move || {
        let _ = tx.send(end2.raw() as usize);
    })
    .unwrap();
    s2.synchronize().unwrap();
    assert!(rx.recv_timeout(std::time::Duration::from_secs(10)).is_ok());
    assert!(end.query().unwrap());
    assert!(s1.is_done().unwrap());
    let ms = end.time_since(&start).unwrap();
    assert!(ms > 10.0, "spin took {ms} ms");
    assert!((start.time_till(&end).unwrap() - ms).abs() < 1e-3);
}

#[test]
#[ignore = "needs a CUDA device"]
fn buffers_round_trip_slice_and_free() {
    let c = ctx();
    let mut rng = Rng::fresh();
    let host = rng.vec_i32(4099);
    let mut buf = DeviceBuffer::from_slice(&c, &host).unwrap();
    assert_eq!(buf.to_vec().unwrap(), host);
    let view = buf.slice(10..20).unwrap();
    assert_eq!(view.len(), 10);
    let mut part = DeviceBuffer::<i32>::uninit(&c, 10).unwrap();
    part.copy_from_device(&view).unwrap();
    assert_eq!(part.to_vec().unwrap(), host[10..20]);
    assert!(buf.slice(4000..5000).is_err());
    let e = buf.copy_from_host(&host[..5]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Logic);
    let z = DeviceBuffer::<u64>::zeros(&c, 77).unwrap();
    assert!(z.to_vec().unwrap().iter().all(|&v| v == 0));
    let stream = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let a = DeviceBuffer::<f32>::uninit_async(&stream, 1 << 20).unwrap();
    assert_eq!(a.len(), 1 << 20);
    a.free().unwrap();
    buf.copy_from_host(&host).unwrap();
    buf.free().unwrap();
    let empty = DeviceBuffer::<f32>::from_slice(&c, &[]).unwrap();
    assert!(empty.is_empty() && empty.to_vec().unwrap().is_empty());
}

#[test]
#[ignore = "needs a CUDA device"]
fn allocating_more_than_the_device_has_is_a_memory_error() {
    if rucuda_testkit::skip_under_sanitizer("asks for more memory than the device has on purpose") {
        return;
    }
    let c = ctx();
    let total = c.device().total_memory().unwrap();
    let e = DeviceBuffer::<u8>::uninit(&c, total * 2).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Memory, "{e}");
    assert!(e.to_string().contains("cuMemAlloc_v2"), "{e}");
    // The process keeps working.
    let b = DeviceBuffer::from_slice(&c, &[1u32, 2, 3]).unwrap();
    assert_eq!(b.to_vec().unwrap(), vec![1, 2, 3]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_trapping_kernel_is_a_launch_error_labelled_as_asynchronous() {
    // Under the sanitizer the binary's tests share one process, which the trap would
    // leave unusable (and the tool reports the trap).
    if rucuda_testkit::skip_under_sanitizer("traps a kernel on purpose (a sticky launch error)") {
        return;
    }
    let c = Device::get(0)
        .unwrap()
        .make_context(ContextFlags::empty())
        .unwrap();
    let m = core_module(&c);
    let trap = m.function("trap_kernel").unwrap();
    // SAFETY: the kernel traps on purpose; it touches no memory.
    unsafe {
        trap.launch(LaunchConfig::linear(1, 1), &Stream::null(&c), ())
            .unwrap()
    };
    let e = c.synchronize().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Launch, "{e}");
    let msg = e.to_string();
    assert!(msg.contains("earlier asynchronous work"), "{msg}");
    assert!(msg.contains("create a new one"), "{msg}");
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
    std::fs::write(ptx.path(), include_str!("kernels/core.ptx")).unwrap();
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

const IPC_EVENT_VAR: &str = "RUCUDA_TEST_IPC_EVENT";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn ipc_event_handles_are_opened_by_a_child_process() {
    let c = ctx();
    let spin = core_module(&c).function("spin").unwrap();
    let stream = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let event = Event::new(&c, EventFlags::INTERPROCESS | EventFlags::DISABLE_TIMING).unwrap();
    // SAFETY: spin(u64 cycles) touches no memory; about half a second.
    unsafe {
        spin.launch(LaunchConfig::linear(1, 1), &stream, (1_000_000_000u64,))
            .unwrap()
    };
    event.record(&stream).unwrap();
    assert!(!event.query().unwrap());
    let handle = event.ipc_handle().unwrap();
    let out = rucuda_testkit::child_test("ipc_event_child")
        .env(IPC_EVENT_VAR, hex(&handle.0))
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{text}");
    assert!(
        text.contains("1 passed") && text.contains("child waited on the parent's event"),
        "{text}"
    );
    // The child waited for our kernel, so the event has completed.
    assert!(event.query().unwrap());
}

#[test]
#[ignore = "needs a CUDA device"]
fn ipc_event_child() {
    let Ok(text) = std::env::var(IPC_EVENT_VAR) else {
        common::skip("runs only as the child of ipc_event_handles_are_opened_by_a_child_process");
        return;
    };
    let mut bytes = [0u8; 64];
    bytes.copy_from_slice(&unhex(&text));
    let c = ctx();
    let event = Event::from_ipc_handle(&c, IpcEventHandle(bytes)).unwrap();
    event.synchronize().unwrap();
    assert!(event.query().unwrap());
    println!("child waited on the parent's event");
}
