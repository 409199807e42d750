//! Uses handed out and not yet queued: which thread holds which, and the registry of
//! threads waiting for each other's, which refuses a wait that would close a cycle.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread::ThreadId;

/// How queued work uses memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// The work only reads it.
    Read,
    /// The work may write it (and read it).
    Write,
}

/// A use handed out by [`DeviceRange::use_on`](super::DeviceRange::use_on) whose work is not queued yet.
pub(super) struct Pending {
    pub(super) id: u64,
    pub(super) user: UserKey,
    pub(super) access: Access,
    pub(super) thread: u64,
}

/// What tells two users apart ([`User::same`]), without holding the stream.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct UserKey {
    pub(super) stream: usize,
    pub(super) thread: Option<ThreadId>,
    pub(super) ctx: usize,
}

thread_local! {
    /// This thread's tag in pending uses (cheaper than `thread::current().id()`).
    static THREAD_TAG: u64 = {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed)
    };
    /// Pending uses this thread holds (across all logs).
    pub(super) static HELD: Cell<usize> = const { Cell::new(0) };
}

pub(super) fn thread_tag() -> u64 {
    THREAD_TAG.with(|t| *t)
}

/// Which thread waits for which (by tag): the threads that hold pending uses and wait
/// for another thread's. Each thread waits for one at a time.
pub(super) static WAITS: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

/// A registered wait of one thread for another, removed on drop.
pub(super) struct WaitEdge(u64);

impl WaitEdge {
    /// Registers that `me` waits for `owner`, or `None` when `owner` waits (through
    /// others) for `me`: the wait would never end.
    pub(super) fn register(me: u64, owner: u64) -> Option<WaitEdge> {
        let mut waits = WAITS.lock().unwrap_or_else(PoisonError::into_inner);
        let mut at = owner;
        for _ in 0..=waits.len() {
            if at == me {
                return None;
            }
            match waits.iter().find(|(w, _)| *w == at) {
                Some(&(_, next)) => at = next,
                None => break,
            }
        }
        waits.push((me, owner));
        Some(WaitEdge(me))
    }
}

impl Drop for WaitEdge {
    fn drop(&mut self) {
        let mut waits = WAITS.lock().unwrap_or_else(PoisonError::into_inner);
        waits.retain(|(w, _)| *w != self.0);
    }
}

pub(super) fn conflicts(a: Access, b: Access) -> bool {
    a == Access::Write || b == Access::Write
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_that_would_close_a_cycle_is_refused() {
        // Tags far from the ones real threads get.
        let (t1, t2, t3) = (u64::MAX - 3, u64::MAX - 2, u64::MAX - 1);
        let e12 = WaitEdge::register(t1, t2).expect("t1 may wait for t2");
        let e23 = WaitEdge::register(t2, t3).expect("t2 may wait for t3");
        assert!(WaitEdge::register(t3, t1).is_none(), "t3 -> t1 -> t2 -> t3");
        assert!(
            WaitEdge::register(t3, t3).is_none(),
            "a thread never waits for itself"
        );
        drop(e12);
        let e31 = WaitEdge::register(t3, t1).expect("t1 waits for nobody now");
        drop((e23, e31));
        let waits = WAITS.lock().unwrap();
        assert!(!waits.iter().any(|(w, _)| [t1, t2, t3].contains(w)));
    }
}
