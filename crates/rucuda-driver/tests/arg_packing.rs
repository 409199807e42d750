//! Kernel argument packing without a GPU: tuples of values hand the launch one pointer
//! and one size per argument, pointing at the argument's own bytes; `ArgBuffer` copies
//! values of every size in. Pure Rust over raw pointers, so it also runs under Miri
//! (`cargo +nightly miri test -p rucuda-driver --test arg_packing`), which checks every
//! read below for alignment, bounds and provenance.

use std::ffi::c_void;

use rucuda_driver::vector::{Double2, Float4, Int2};
use rucuda_driver::{ArgBuffer, DevicePointerArg, KernelArgs, LaunchConfig};

/// Reads `size` bytes at `ptr`.
///
/// # Safety
/// `ptr` must point to `size` readable bytes.
unsafe fn bytes_at(ptr: *mut c_void, size: usize) -> Vec<u8> {
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), size) }.to_vec()
}

fn bytes_of<T: bytemuck_free::Plain>(v: &T) -> Vec<u8> {
    v.bytes()
}

/// Byte views of the values used here, without a dependency.
mod bytemuck_free {
    pub trait Plain: Copy {
        fn bytes(&self) -> Vec<u8>;
    }
    macro_rules! plain {
        ($($t:ty),*) => {$(
            impl Plain for $t {
                fn bytes(&self) -> Vec<u8> {
                    self.to_le_bytes().to_vec()
                }
            }
        )*};
    }
    plain!(u8, i8, i16, u16, i32, u32, i64, u64, f32, f64);
}

#[test]
fn tuples_point_at_each_arguments_bytes() {
    let args = (7u8, -3i16, 1.5f32, -2.25f64, 0xdead_beef_u64, 42i32);
    assert_eq!(<(u8, i16, f32, f64, u64, i32) as KernelArgs>::COUNT, 6);
    let want: Vec<Vec<u8>> = vec![
        bytes_of(&7u8),
        bytes_of(&-3i16),
        bytes_of(&1.5f32),
        bytes_of(&-2.25f64),
        bytes_of(&0xdead_beef_u64),
        bytes_of(&42i32),
    ];
    args.with_params(None, |ptrs, sizes| {
        assert_eq!(sizes, [1, 2, 4, 8, 8, 4]);
        for (k, (&p, &s)) in ptrs.iter().zip(sizes).enumerate() {
            // SAFETY: each pointer is the argument's own bytes, `s` of them.
            assert_eq!(unsafe { bytes_at(p, s) }, want[k], "argument {k}");
        }
        Ok(())
    })
    .unwrap();
}

#[test]
fn vector_types_and_pointers_keep_their_layout() {
    let v = Float4 {
        x: 1.0,
        y: 2.0,
        z: 3.0,
        w: 4.0,
    };
    let d = Double2 { x: -1.0, y: 0.5 };
    let i = Int2 { x: 1, y: -2 };
    let p = DevicePointerArg(0x7f00_0000_1000);
    (v, d, i, p)
        .with_params(None, |ptrs, sizes| {
            assert_eq!(sizes, [16, 16, 8, 8]);
            // SAFETY: as above.
            let f: Vec<u8> = unsafe { bytes_at(ptrs[0], 16) };
            let floats: Vec<f32> = f
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            assert_eq!(floats, [1.0, 2.0, 3.0, 4.0]);
            // SAFETY: as above.
            let ptr = unsafe { bytes_at(ptrs[3], 8) };
            assert_eq!(
                u64::from_le_bytes(ptr.try_into().unwrap()),
                0x7f00_0000_1000
            );
            for (k, &ptr) in ptrs.iter().enumerate() {
                assert_eq!(ptr as usize % 4, 0, "argument {k} is misaligned");
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn the_empty_and_the_largest_tuples() {
    assert_eq!(<() as KernelArgs>::COUNT, 0);
    ().with_params(None, |ptrs, sizes| {
        assert!(ptrs.is_empty() && sizes.is_empty());
        Ok(())
    })
    .unwrap();
    let t = (
        0u8, 1u16, 2u32, 3u64, 4i8, 5i16, 6i32, 7i64, 8f32, 9f64, 10u8, 11u16, 12u32, 13u64, 14i8,
        15i16,
    );
    t.with_params(None, |ptrs, sizes| {
        assert_eq!(ptrs.len(), 16);
        assert_eq!(sizes, [1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 1, 2, 4, 8, 1, 2]);
        // SAFETY: as above.
        assert_eq!(unsafe { bytes_at(ptrs[9], 8) }, bytes_of(&9f64));
        // SAFETY: as above.
        assert_eq!(unsafe { bytes_at(ptrs[15], 2) }, bytes_of(&15i16));
        Ok(())
    })
    .unwrap();
}

#[test]
fn arg_buffers_take_values_of_every_size() {
    let mut b = ArgBuffer::new();
    assert!(b.is_empty());
    b.push(1u8)
        .push(2.0f64)
        .push(Float4 {
            x: 1.0,
            y: 2.0,
            z: 3.0,
            w: 4.0,
        })
        .push(Int2 { x: 1, y: 2 })
        .push(DevicePointerArg(16))
        .push(7i16);
    assert_eq!(b.len(), 6);
}

#[test]
fn launch_shapes_cover_every_element() {
    for (n, block) in [
        (0usize, 256u32),
        (1, 256),
        (255, 256),
        (257, 256),
        (1000, 0),
    ] {
        let cfg = LaunchConfig::for_elements(n, block);
        let covered = cfg.grid.0 as usize * cfg.block.0 as usize;
        assert!(
            covered >= n && cfg.grid.0 >= 1 && cfg.block.0 >= 1,
            "{n} {block}"
        );
    }
    let huge = LaunchConfig::for_elements(usize::MAX, 1024);
    assert_eq!(huge.grid.0, u32::MAX);
}
