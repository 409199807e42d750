//! GPU tests of `rucuda::characterize` (PyCUDA's `pycuda.characterize`): the device's
//! capabilities, and `sizeof` of built-in, vector, preamble-declared and randomly sized
//! types against what Rust and the C layout rules say, with the error cases.

use rucuda::characterize::{has_double_support, has_stack, platform_bits, sizeof};
use rucuda::driver::{Context, Device};
use rucuda_testkit::TestRng as Rng;

fn ctx() -> Context {
    let ctx = Device::get(0)
        .and_then(Device::primary_context)
        .expect("a CUDA device (this test is ignored unless the GPU bundle runs it)");
    ctx.bind().expect("bind");
    ctx
}

#[test]
#[ignore = "needs a CUDA device"]
fn the_device_has_a_stack_and_doubles() {
    let ctx = ctx();
    let device = ctx.device();
    let (major, _) = device.compute_capability().unwrap();
    assert!(major >= 7, "rucuda's GPUs are Volta or newer");
    assert!(has_double_support(device).unwrap());
    assert!(has_stack(device).unwrap());
    assert_eq!(platform_bits(), 64);
}

#[test]
#[ignore = "needs a CUDA device"]
fn sizeof_built_in_and_vector_types() {
    let ctx = ctx();
    let cases: &[(&str, usize)] = &[
        ("double", 8),
        ("float", 4),
        ("char", 1),
        ("short", 2),
        ("int", 4),
        ("long long", 8),
        ("unsigned long long", 8),
        ("void *", std::mem::size_of::<*const u8>()),
        ("size_t", std::mem::size_of::<usize>()),
        ("float2", 8),
        ("float3", 12),
        ("float4", 16),
        ("double2", 16),
        ("int3", 12),
        ("char4", 4),
    ];
    for (name, want) in cases {
        assert_eq!(sizeof(&ctx, name, "").unwrap(), *want, "sizeof({name})");
    }
    assert_eq!(sizeof(&ctx, "double", "").unwrap(), 8);
    // A served standard header in the preamble.
    assert_eq!(sizeof(&ctx, "uint16_t", "#include <stdint.h>").unwrap(), 2);
    assert_eq!(
        sizeof(&ctx, "std::int64_t", "#include <cstdint>").unwrap(),
        8
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn sizeof_types_from_a_preamble() {
    let ctx = ctx();
    let pair = "struct pair { char tag; double value; };";
    assert_eq!(sizeof(&ctx, "struct pair", pair).unwrap(), 16);
    assert_eq!(sizeof(&ctx, "pair", pair).unwrap(), 16);
    let aligned = "struct __align__(32) wide { float x; };";
    assert_eq!(sizeof(&ctx, "wide", aligned).unwrap(), 32);
    let typedefd = "typedef struct { short a; char b; } small_t;";
    assert_eq!(sizeof(&ctx, "small_t", typedefd).unwrap(), 4);
    // A randomly sized struct: the layout rules give the size.
    let mut rng = Rng::fresh();
    for _ in 0..3 {
        let bytes = rng.range(1, 4097) as usize;
        let ints = rng.range(0, 9) as usize;
        let preamble = format!(
            "struct blob {{ char bytes[{bytes}]; int ints[{}]; }};",
            ints.max(1)
        );
        // char[bytes] then int[ints.max(1)] aligned to 4, the whole rounded up to 4.
        let want = bytes.div_ceil(4) * 4 + 4 * ints.max(1);
        assert_eq!(
            sizeof(&ctx, "struct blob", &preamble).unwrap(),
            want,
            "{preamble}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn sizeof_errors_are_typed() {
    let ctx = ctx();
    let e = sizeof(&ctx, "no_such_type", "").unwrap_err();
    let rucuda::Error::Jit(jit) = &e else {
        panic!("a jit error, not {e:?}");
    };
    let ce = jit.as_compile_error().expect("the compiler's error");
    assert!(ce.log.contains("no_such_type"), "{}", ce.log);
    // An incomplete type.
    let e = sizeof(&ctx, "struct opaque", "struct opaque;").unwrap_err();
    assert!(matches!(e, rucuda::Error::Jit(_)), "{e}");
    // No type at all.
    let e = sizeof(&ctx, "  ", "").unwrap_err();
    assert!(e.to_string().contains("type name"), "{e}");
}
