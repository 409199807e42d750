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
            // SAFETY: the caller's contract; parts of different indices are disjoint.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (self.src + start) as *const u8,
                    (self.dst + start) as *mut u8,
                    end - start,
                )
            };
        }
    }
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
            };
            for index in 0..parties {
                // SAFETY: valid, disjoint buffers of `len` bytes.
                unsafe { job.run_part(index) };
            }
            assert_eq!(dst, src, "{parties} parties");
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
