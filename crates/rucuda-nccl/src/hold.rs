//! [`Hold`]: what a call recorded in an unfinished group holds on its communicator, so
//! that no other thread destroys, aborts or uses the communicator before the group issues
//! the call.

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

/// The threads whose unfinished groups hold calls recorded on one communicator, one
/// entry per call (see [`Hold`]).
#[derive(Debug, Default)]
pub(crate) struct Holds(Mutex<Vec<ThreadId>>);

impl Holds {
    fn with<R>(&self, f: impl FnOnce(&mut Vec<ThreadId>) -> R) -> R {
        // A panic while the lock was held cannot leave the list half-changed.
        let mut list = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut list)
    }

    /// True when a group on another thread than this one holds calls on the communicator.
    pub(crate) fn elsewhere(&self) -> bool {
        let me = std::thread::current().id();
        self.with(|list| list.iter().any(|&t| t != me))
    }

    /// True when no group on any thread holds calls on the communicator.
    pub(crate) fn is_empty(&self) -> bool {
        self.with(|list| list.is_empty())
    }

    /// A [`Hold`] of this thread.
    pub(crate) fn hold(self: &Arc<Self>) -> Hold {
        let thread = std::thread::current().id();
        self.with(|list| list.push(thread));
        Hold {
            holds: Arc::clone(self),
            thread,
        }
    }
}

/// Held by a call recorded in a group on this thread (in its `Pending` record): while any
/// is alive on another thread, the communicator's handle is neither destroyed nor aborted
/// and no NCCL call is made on it here, so that thread's group issues on a live handle
/// and never at the same time as this one. (On the recording thread itself, destroying
/// or aborting the communicator drops its recorded calls and cancels the group.)
#[derive(Debug)]
pub(crate) struct Hold {
    holds: Arc<Holds>,
    thread: ThreadId,
}

impl Drop for Hold {
    fn drop(&mut self) {
        let thread = self.thread;
        self.holds.with(|list| {
            if let Some(i) = list.iter().position(|&t| t == thread) {
                list.swap_remove(i);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_of_another_thread_are_seen_until_dropped() {
        let holds = Arc::new(Holds::default());
        let mine = holds.hold();
        assert!(
            !holds.elsewhere(),
            "this thread's own calls do not block it"
        );
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let other = {
            let holds = Arc::clone(&holds);
            std::thread::spawn(move || {
                let theirs = holds.hold();
                tx.send(()).expect("send");
                done_rx.recv().expect("recv");
                drop(theirs);
            })
        };
        rx.recv().expect("the other thread holds");
        assert!(holds.elsewhere());
        done_tx.send(()).expect("send");
        other.join().expect("join");
        assert!(!holds.elsewhere());
        drop(mine);
        assert!(holds.is_empty());
    }
}
