//! Tests of the staged copies' plans and pipelines (through a fake device).

use super::*;

#[test]
fn plans_cover_every_byte_with_bounded_chunks() {
    for &bytes in &[
        1usize,
        4095,
        1 << 20,
        (1 << 20) + 1,
        3 << 20,
        (37 << 20) + 3,
        (128 << 20) - 1,
        1 << 30,
    ] {
        for &slot in &[1usize << 16, 1 << 20, 16 << 20] {
            let p = plan(bytes, slot, 8);
            assert!(p.chunk <= slot, "{bytes} {slot} {p:?}");
            assert!(p.chunk > 0);
            assert!(p.chunks * p.chunk >= bytes);
            assert!((p.chunks - 1) * p.chunk < bytes, "{bytes} {slot} {p:?}");
            assert!((1..=8).contains(&p.workers));
        }
    }
    let big = plan(1 << 30, 16 << 20, 8);
    assert_eq!((big.chunk, big.chunks, big.workers), (16 << 20, 64, 8));
    let small = plan(2 << 20, 16 << 20, 8);
    assert_eq!((small.chunk, small.workers), (1 << 20, 1));
    assert_eq!(plan(1 << 30, 16 << 20, 3).workers, 3);
}

/// A fake device that performs each queued transfer only when its slot is waited on
/// (the latest moment a real DMA may run), so a pipeline that reuses a slot too early
/// or reads one too soon produces wrong bytes.
struct LazyDevice {
    memory: Vec<u8>,
    slots: Vec<Vec<u8>>,
    queued: Vec<Option<(bool, usize, usize)>>,
    waits: usize,
}

impl LazyDevice {
    fn new(memory: Vec<u8>, slot_bytes: usize, slots: usize) -> LazyDevice {
        LazyDevice {
            memory,
            slots: vec![vec![0x55; slot_bytes]; slots],
            queued: vec![None; slots],
            waits: 0,
        }
    }
}

impl StagingDevice for LazyDevice {
    fn slots(&self) -> usize {
        self.slots.len()
    }
    fn slot_ptr(&mut self, slot: usize) -> *mut u8 {
        self.slots[slot].as_mut_ptr()
    }
    fn wait_slot(&mut self, slot: usize) -> Result<()> {
        self.waits += 1;
        if let Some((up, offset, len)) = self.queued[slot].take() {
            if up {
                self.memory[offset..offset + len].copy_from_slice(&self.slots[slot][..len]);
            } else {
                self.slots[slot][..len].copy_from_slice(&self.memory[offset..offset + len]);
            }
        }
        Ok(())
    }
    fn upload(&mut self, slot: usize, offset: usize, len: usize) -> Result<()> {
        assert!(
            self.queued[slot].is_none(),
            "slot {slot} reused before its wait"
        );
        self.queued[slot] = Some((true, offset, len));
        Ok(())
    }
    fn download(&mut self, slot: usize, offset: usize, len: usize) -> Result<()> {
        assert!(
            self.queued[slot].is_none(),
            "slot {slot} reused before its wait"
        );
        // Poison the slot: reading it before the wait gives wrong bytes.
        self.slots[slot].fill(0xA5);
        self.queued[slot] = Some((false, offset, len));
        Ok(())
    }
}

fn pattern(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

#[test]
fn pipelines_move_odd_sizes_exactly_through_a_lazy_device() {
    let slot_bytes = 1 << 16;
    for (k, &bytes) in [1usize, 4096, 65_535, 65_536, 65_537, 200_003, 1_000_003]
        .iter()
        .enumerate()
    {
        for (workers, slots, streaming) in
            [(1, 2, false), (3, 2, true), (2, 3, true), (1, 4, false)]
        {
            let p = Plan {
                workers,
                ..plan(bytes, slot_bytes, 8)
            };
            let host = pattern(bytes, 7 + k as u64);
            let mut dev = LazyDevice::new(vec![0xFF; bytes], slot_bytes, slots);
            // SAFETY: valid buffers of `bytes` bytes; chunks fit the slots.
            unsafe { upload_pipelined(&mut dev, host.as_ptr(), bytes, p) }.expect("fake");
            assert!(
                dev.queued.iter().all(Option::is_none),
                "all transfers waited"
            );
            assert!(
                dev.memory == host,
                "upload of {bytes} bytes with {workers} workers"
            );

            let device = pattern(bytes, 99 + k as u64);
            let mut dev = LazyDevice::new(device.clone(), slot_bytes, slots);
            let mut out = vec![0xFFu8; bytes];
            // SAFETY: as above.
            unsafe { download_pipelined(&mut dev, out.as_mut_ptr(), bytes, p, streaming) }
                .expect("fake");
            assert!(
                out == device,
                "download of {bytes} bytes with {workers} workers"
            );
            assert!(dev.waits >= p.chunks);
        }
    }
}
