//! GPU fault tests: a kernel that traps, in the primary context, in a child process.
//!
//! What the user must do after a trap (or any sticky error: an illegal address, a
//! failed device-side assert): the context that ran the kernel is unusable, every later
//! call on it returns the error again, and CUDA documents the state of the whole process
//! as inconsistent. The way out is a new process. The test runs the trap in a child
//! process (this test binary again, with `--exact` and an environment variable), checks
//! there that the error is a launch error and that it is sticky, and checks that the
//! parent process, which shares the GPU, is unaffected.

mod common;

use common::{core_module, ctx};
use rucuda_driver::*;

/// Set in the child process: run the trapping body instead of the parent's.
const CHILD_ENV: &str = "RUCUDA_FAULT_CHILD";
const TEST_NAME: &str = "a_trap_poisons_its_process_and_a_new_process_recovers";
/// The line the child prints when every check of its body passed.
const CHILD_OK: &str = "RUCUDA_FAULT_CHILD_OK";

fn add_one_checked(c: &Context) {
    let m = core_module(c);
    let add_one = m.function("add_one").unwrap();
    let host: Vec<i32> = (0..1000).collect();
    let mut buf = DeviceBuffer::from_slice(c, &host).unwrap();
    // SAFETY: add_one(int* x, int n) touches x[0..n).
    unsafe {
        add_one
            .launch(
                LaunchConfig::for_elements(1000, 128),
                &Stream::null(c),
                (&mut buf, 1000i32),
            )
            .unwrap()
    };
    let back = buf.to_vec().unwrap();
    assert!(back.iter().zip(&host).all(|(b, h)| *b == h + 1));
}

/// The child: trap in the primary context, then see what still works.
fn child() {
    let c = ctx();
    add_one_checked(&c);
    let m = core_module(&c);
    let trap = m.function("trap_kernel").unwrap();
    let buf = DeviceBuffer::from_slice(&c, &[1u32, 2, 3]).unwrap();
    // SAFETY: the kernel traps on purpose; it touches no memory.
    let launched = unsafe { trap.launch(LaunchConfig::linear(1, 1), &Stream::null(&c), ()) };
    // The launch itself may already report it, else the next synchronisation does.
    let e = match launched {
        Err(e) => e,
        Ok(()) => c.synchronize().unwrap_err(),
    };
    assert_eq!(e.kind(), ErrorKind::Launch, "{e}");
    let sticky = matches!(&e, Error::Driver(d) if d.is_sticky());
    assert!(sticky, "a trap is a sticky error: {e}");
    // Sticky: later, unrelated calls on the context fail too, with a launch error that
    // says it came from earlier work.
    let copy = buf.to_vec().unwrap_err();
    assert_eq!(copy.kind(), ErrorKind::Launch, "{copy}");
    assert!(
        copy.to_string().contains("earlier asynchronous work"),
        "{copy}"
    );
    let alloc = DeviceBuffer::<u8>::uninit(&c, 1 << 20).unwrap_err();
    println!("after the trap: synchronize: {e}\n  copy: {copy}\n  allocation: {alloc}");
    assert!(c.synchronize().is_err(), "the context recovered by itself");
    // A context created now, in the same process: reported, not asserted (CUDA
    // documents the process as unusable; what a driver does here varies).
    match Device::get(0).and_then(|d| d.make_context(ContextFlags::empty())) {
        Ok(fresh) => {
            let r = DeviceBuffer::from_slice(&fresh, &[5u8; 16]).and_then(|b| b.to_vec());
            println!("a new context in the same process: created; a round trip: {r:?}");
        }
        Err(e) => println!("a new context in the same process: refused: {e}"),
    }
    // Dropping what we hold must not panic or abort: releases fail quietly (queued).
    drop(buf);
    drop(m);
    println!("{CHILD_OK}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_trap_poisons_its_process_and_a_new_process_recovers() {
    if std::env::var_os(CHILD_ENV).is_some() {
        child();
        return;
    }
    if rucuda_testkit::skip_under_sanitizer("traps a kernel on purpose (a sticky launch error)") {
        return;
    }
    // The parent works before, while and after the child traps.
    let c = ctx();
    add_one_checked(&c);
    let out = rucuda_testkit::child_test(TEST_NAME)
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("--- child stdout\n{stdout}--- child stderr\n{stderr}---");
    assert!(out.status.success(), "the child failed: {}", out.status);
    assert!(stdout.contains("running 1 test"), "the child ran no test");
    assert!(
        stdout.contains(CHILD_OK),
        "the child did not finish its checks"
    );
    // The parent's context is untouched: new work runs and gives right results.
    add_one_checked(&c);
    c.synchronize().unwrap();
    c.check_deferred_errors().unwrap();
    // And a second new process gets a working primary context again.
    let again = rucuda_testkit::child_test("a_new_process_after_a_trap_works")
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_new_process_after_a_trap_works() {
    let c = ctx();
    add_one_checked(&c);
    c.synchronize().unwrap();
}
