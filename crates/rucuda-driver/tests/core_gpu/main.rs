//! GPU tests of the core objects: devices, contexts (primary, created, on many threads),
//! limits, streams, events and callbacks, device buffers, out-of-memory and trap errors,
//! IPC event handles; `launch` has modules and checked launches. Each runs in its own
//! process in the GPU bundle.

#[path = "../common/mod.rs"]
mod common;

mod launch;

use common::{core_module, ctx, Rng};
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
fn detach_pops_the_context_only_when_it_is_current() {
    let dev = Device::get(0).unwrap();
    let primary = dev.primary_context().unwrap();
    primary.push().unwrap();
    // make_context pushes the new context on top of the primary one.
    let created = dev.make_context(ContextFlags::SCHED_AUTO).unwrap();
    assert_eq!(Context::current().unwrap().unwrap(), created);
    let kept = created.clone();
    created.detach().unwrap();
    // PyCUDA: detach pops a current context; the one under it is current again.
    assert_eq!(Context::current().unwrap().unwrap(), primary);
    // A handle still held keeps the context alive and usable (it is made current).
    let data = Rng::fresh().vec_i32(1001);
    let buf = DeviceBuffer::from_slice(&kept, &data).unwrap();
    assert_eq!(buf.to_vec().unwrap(), data);
    drop(buf);
    assert_eq!(Context::current().unwrap().unwrap(), kept);
    // bind replaced the top of the stack: popping it leaves the stack empty.
    kept.detach().unwrap();
    assert!(Context::current().unwrap().is_none());
    // Detaching a context that is not current pops nothing.
    primary.push().unwrap();
    let other = dev.make_context(ContextFlags::SCHED_AUTO).unwrap();
    Context::pop().unwrap();
    assert_eq!(Context::current().unwrap().unwrap(), primary);
    other.detach().unwrap();
    assert_eq!(Context::current().unwrap().unwrap(), primary);
    Context::pop().unwrap();
    assert!(Context::current().unwrap().is_none());
    // The primary context still works after all that.
    let b = DeviceBuffer::from_slice(&primary, &data[..7]).unwrap();
    assert_eq!(b.to_vec().unwrap(), data[..7]);
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
