//! Host-to-host copies split over several threads: the host side of the staged copies
//! (`staged.rs`). A copy runs its pieces through [`with_copiers`], which keeps a few
//! scoped helper threads for the whole copy and meets them at a rendezvous per piece.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

/// How long a copy thread spins at a rendezvous before sleeping.
const SPIN: std::time::Duration = std::time::Duration::from_micros(20);

/// One host copy, split among `parties` threads by page-aligned parts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CopyJob {
    /// Source address.
    pub src: usize,
    /// Destination address.
    pub dst: usize,
    /// Bytes to copy.
    pub len: usize,
    /// Threads sharing the copy (set by [`with_copiers`]).
    pub parties: usize,
    /// Write with non-temporal stores (x86-64; a plain copy elsewhere).
    pub streaming: bool,
}

impl CopyJob {
    /// Copies part `index` of `parties`.
    ///
    /// # Safety
    /// `src..src+len` must be readable and `dst..dst+len` writable, not overlapping, and
    /// no other thread may touch the part of `dst` this index covers.
    pub(crate) unsafe fn run_part(&self, index: usize) {
        let part = self
            .len
            .div_ceil(self.parties.max(1))
            .next_multiple_of(4096);
        let start = index.saturating_mul(part).min(self.len);
        let end = start.saturating_add(part).min(self.len);
        if start < end {
            let (src, dst) = (
                (self.src + start) as *const u8,
                (self.dst + start) as *mut u8,
            );
            if self.streaming {
                // SAFETY: as below.
                unsafe { copy_streaming(src, dst, end - start) };
            } else {
                // SAFETY: the caller's contract; parts of different indices are disjoint.
                unsafe { std::ptr::copy_nonoverlapping(src, dst, end - start) };
            }
        }
    }
}

/// Copies `len` bytes with non-temporal stores (x86-64: `movntdq` after aligning the
/// destination to 16 bytes, then a store fence so that other threads see the bytes once
/// they synchronize with this one). Skipping the read of each destination line before it
/// is written saves a third of the memory traffic of a copy to memory not in cache.
///
/// # Safety
/// `src..src+len` readable, `dst..dst+len` writable, not overlapping.
#[cfg(target_arch = "x86_64")]
unsafe fn copy_streaming(src: *const u8, dst: *mut u8, len: usize) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
    let head = dst.align_offset(16).min(len);
    // SAFETY: (the whole block) offsets stay below `len`, inside both ranges; SSE2 is part
    // of every x86-64 target; `dst + i` is 16-byte aligned after the head.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, head);
        let mut i = head;
        while i + 64 <= len {
            let a = _mm_loadu_si128(src.add(i).cast::<__m128i>());
            let b = _mm_loadu_si128(src.add(i + 16).cast::<__m128i>());
            let c = _mm_loadu_si128(src.add(i + 32).cast::<__m128i>());
            let d = _mm_loadu_si128(src.add(i + 48).cast::<__m128i>());
            _mm_stream_si128(dst.add(i).cast::<__m128i>(), a);
            _mm_stream_si128(dst.add(i + 16).cast::<__m128i>(), b);
            _mm_stream_si128(dst.add(i + 32).cast::<__m128i>(), c);
            _mm_stream_si128(dst.add(i + 48).cast::<__m128i>(), d);
            i += 64;
        }
        while i + 16 <= len {
            let a = _mm_loadu_si128(src.add(i).cast::<__m128i>());
            _mm_stream_si128(dst.add(i).cast::<__m128i>(), a);
            i += 16;
        }
        std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
        _mm_sfence();
    }
}

/// A plain copy where there are no non-temporal stores to use.
///
/// # Safety
/// As for the x86-64 version.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn copy_streaming(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
}

/// Advises the kernel to back the whole 2 MiB pages inside `ptr..ptr+len` with huge pages
/// (`madvise(MADV_HUGEPAGE)`; Linux, best effort: a refusal changes nothing).
pub(crate) fn advise_huge_pages(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = (ptr as usize).next_multiple_of(HUGE);
        let end = (ptr as usize).saturating_add(len) / HUGE * HUGE;
        if end > start {
            // SAFETY: advice on whole pages of memory the caller owns; it changes no
            // contents and failure is ignored.
            let _ = unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE)
            };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

/// A reusable barrier whose number of parties is fixed after the threads are spawned
/// (a spawn may fail), spinning briefly before sleeping.
struct Rendezvous {
    state: Mutex<RendezvousState>,
    generation: AtomicU64,
    wake: Condvar,
}

struct RendezvousState {
    parties: usize,
    arrived: usize,
}

impl Rendezvous {
    fn new() -> Rendezvous {
        Rendezvous {
            state: Mutex::new(RendezvousState {
                parties: 0,
                arrived: 0,
            }),
            generation: AtomicU64::new(0),
            wake: Condvar::new(),
        }
    }

    fn release_if_complete(&self, st: &mut RendezvousState) {
        if st.parties > 0 && st.arrived >= st.parties {
            st.arrived = 0;
            self.generation.fetch_add(1, Ordering::AcqRel);
            self.wake.notify_all();
        }
    }

    fn set_parties(&self, parties: usize) {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.parties = parties;
        self.release_if_complete(&mut st);
    }

    fn wait(&self) {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let generation = self.generation.load(Ordering::Acquire);
        st.arrived += 1;
        self.release_if_complete(&mut st);
        if self.generation.load(Ordering::Acquire) != generation {
            return;
        }
        drop(st);
        // The others usually arrive within microseconds (they copy equal parts): spin a
        // little before sleeping, which costs tens of microseconds to wake from.
        let spin_until = std::time::Instant::now() + SPIN;
        loop {
            for _ in 0..64 {
                if self.generation.load(Ordering::Acquire) != generation {
                    return;
                }
                std::hint::spin_loop();
            }
            if std::time::Instant::now() >= spin_until {
                break;
            }
        }
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while self.generation.load(Ordering::Acquire) == generation {
            st = self.wake.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Runs `body` with a function that performs one host copy on `workers` threads (the
/// calling thread and up to `workers - 1` scoped helpers).
pub(crate) fn with_copiers<R>(
    workers: usize,
    body: impl FnOnce(&mut dyn FnMut(CopyJob)) -> R,
) -> R {
    if workers <= 1 {
        // SAFETY: one party copies the whole job; the job's ranges are the caller's.
        return body(&mut |job: CopyJob| unsafe { CopyJob { parties: 1, ..job }.run_part(0) });
    }
    let rendezvous = Rendezvous::new();
    // None tells the helpers to stop.
    let current: Mutex<Option<CopyJob>> = Mutex::new(None);
    std::thread::scope(|scope| {
        let mut parties = 1;
        for index in 1..workers {
            let (rendezvous, current) = (&rendezvous, &current);
            let spawned = std::thread::Builder::new()
                .name("rucuda-copy".into())
                .spawn_scoped(scope, move || loop {
                    rendezvous.wait();
                    let job = *current.lock().unwrap_or_else(PoisonError::into_inner);
                    let Some(job) = job else { break };
                    // SAFETY: the main thread keeps the job's ranges valid until the
                    // second rendezvous; each index copies its own part.
                    unsafe { job.run_part(index) };
                    rendezvous.wait();
                });
            if spawned.is_err() {
                break;
            }
            parties += 1;
        }
        rendezvous.set_parties(parties);
        let result = body(&mut |job: CopyJob| {
            let job = CopyJob { parties, ..job };
            *current.lock().unwrap_or_else(PoisonError::into_inner) = Some(job);
            rendezvous.wait();
            // SAFETY: as for the helpers; this thread copies part 0.
            unsafe { job.run_part(0) };
            rendezvous.wait();
        });
        *current.lock().unwrap_or_else(PoisonError::into_inner) = None;
        rendezvous.wait();
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_jobs_split_into_disjoint_covering_parts() {
        let src: Vec<u8> = (0..100_003u32).map(|i| (i * 31 % 251) as u8).collect();
        for parties in 1..6 {
            let mut dst = vec![0xEEu8; src.len()];
            let job = CopyJob {
                src: src.as_ptr() as usize,
                dst: dst.as_mut_ptr() as usize,
                len: src.len(),
                parties,
                streaming: parties % 2 == 0,
            };
            for index in 0..parties {
                // SAFETY: valid, disjoint buffers of `len` bytes.
                unsafe { job.run_part(index) };
            }
            assert_eq!(dst, src, "{parties} parties");
        }
    }

    #[test]
    fn streaming_copies_are_exact_at_any_alignment_and_length() {
        let src: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 253) as u8).collect();
        for src_off in [0usize, 1, 3, 16] {
            for dst_off in [0usize, 1, 5, 15, 16] {
                for len in [0usize, 1, 15, 16, 17, 63, 64, 65, 200, 4000] {
                    let mut dst = vec![0xEEu8; 4200];
                    // SAFETY: both ranges lie inside their vectors and do not overlap.
                    unsafe {
                        copy_streaming(
                            src.as_ptr().add(src_off),
                            dst.as_mut_ptr().add(dst_off),
                            len,
                        )
                    };
                    assert_eq!(&dst[dst_off..dst_off + len], &src[src_off..src_off + len]);
                    assert!(dst[..dst_off].iter().all(|&b| b == 0xEE));
                    assert!(dst[dst_off + len..].iter().all(|&b| b == 0xEE));
                }
            }
        }
    }

    #[test]
    fn parallel_copiers_copy_every_job() {
        let src: Vec<u8> = (0..(5 << 20) + 17).map(|i: u32| (i % 253) as u8).collect();
        for workers in [1, 2, 3, 8] {
            let mut dst = vec![0u8; src.len()];
            with_copiers(workers, |copy| {
                for (i, piece) in src.chunks(777_777).enumerate() {
                    copy(CopyJob {
                        src: piece.as_ptr() as usize,
                        dst: dst.as_mut_ptr() as usize + i * 777_777,
                        len: piece.len(),
                        parties: 1,
                        streaming: workers > 2,
                    });
                }
            });
            assert_eq!(dst, src, "{workers} workers");
        }
    }

    #[test]
    fn rendezvous_releases_once_all_parties_arrive() {
        let r = Rendezvous::new();
        let count = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..100 {
                        count.fetch_add(1, Ordering::SeqCst);
                        r.wait();
                    }
                });
            }
            r.set_parties(4);
            for round in 1..=100u64 {
                r.wait();
                assert!(count.load(Ordering::SeqCst) >= 3 * round);
            }
        });
        assert_eq!(count.load(Ordering::SeqCst), 300);
    }
}
