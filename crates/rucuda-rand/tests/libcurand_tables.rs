//! Our Joe–Kuo direction vectors against the ones libcurand hands out
//! (`curandGetDirectionVectors32/64` with `CURAND_DIRECTION_VECTORS_{32,64}_JOEKUO6`, which
//! need no GPU), loaded at run time. Skipped, with a message, where libcurand cannot be
//! loaded (set RUCUDA_LIBCURAND to its path); the GPU machine has it.

use rucuda_rand::sobol::direction::{direction_vectors_32, direction_vectors_64};

type GetVectors32 = unsafe extern "C" fn(*mut *const [u32; 32], i32) -> i32;
type GetVectors64 = unsafe extern "C" fn(*mut *const [u64; 64], i32) -> i32;

/// cuRAND's `CURAND_DIRECTION_VECTORS_32_JOEKUO6` and `..._64_JOEKUO6`.
const JOEKUO6_32: i32 = 101;
const JOEKUO6_64: i32 = 103;
/// Dimensions in cuRAND's tables.
const CURAND_DIMENSIONS: usize = 20_000;

fn libcurand() -> Option<libloading::Library> {
    let mut names: Vec<String> = std::env::var("RUCUDA_LIBCURAND").into_iter().collect();
    names.extend(
        [
            "libcurand.so.10",
            "libcurand.so",
            "/usr/local/cuda/lib64/libcurand.so.10",
            "/usr/local/cuda/lib64/libcurand.so",
        ]
        .map(String::from),
    );
    for name in names {
        // SAFETY: loading libcurand runs its initialisers, which only set up its tables.
        if let Ok(lib) = unsafe { libloading::Library::new(&name) } {
            println!("libcurand: {name}");
            return Some(lib);
        }
    }
    println!("RUCUDA_SKIPPED: libcurand not found (set RUCUDA_LIBCURAND)");
    None
}

#[test]
fn joe_kuo_vectors_are_libcurand_s() {
    let Some(lib) = libcurand() else { return };
    // SAFETY: the symbols have these C signatures (curand.h).
    let (get32, get64) = unsafe {
        (
            *lib.get::<GetVectors32>(b"curandGetDirectionVectors32\0")
                .unwrap(),
            *lib.get::<GetVectors64>(b"curandGetDirectionVectors64\0")
                .unwrap(),
        )
    };
    let mut p32: *const [u32; 32] = std::ptr::null();
    let mut p64: *const [u64; 64] = std::ptr::null();
    // SAFETY: each call writes one pointer to a static table of CURAND_DIMENSIONS rows.
    let (r32, r64) = unsafe { (get32(&mut p32, JOEKUO6_32), get64(&mut p64, JOEKUO6_64)) };
    assert_eq!((r32, r64), (0, 0), "curandGetDirectionVectors failed");
    assert!(!p32.is_null() && !p64.is_null());
    for d in 0..CURAND_DIMENSIONS {
        // SAFETY: row d < CURAND_DIMENSIONS of the static tables.
        let (theirs32, theirs64) = unsafe { (*p32.add(d), *p64.add(d)) };
        assert_eq!(
            direction_vectors_32(d).unwrap(),
            theirs32,
            "32-bit dimension {d}"
        );
        assert_eq!(
            direction_vectors_64(d).unwrap(),
            theirs64,
            "64-bit dimension {d}"
        );
    }
    println!("all {CURAND_DIMENSIONS} dimensions equal, 32- and 64-bit");
}
