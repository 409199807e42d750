//! [`Replay`]: the automatic mode, a loop body run eagerly until it is seen to repeat,
//! then captured once and replayed.

use rucuda_driver::{Access, CapturedGraph, Error, Observed, Stream, UseObserver};

use crate::error::{ArrayError, Result};

/// Eager iterations that must do the same work before one is captured, by default.
const DEFAULT_WARMUP: usize = 2;

/// Eager iterations observed, beyond the warm-up, before giving up waiting for a repeat.
const PATIENCE: usize = 8;

/// Memory in an iteration's signature: memory that outlives the iteration (by the
/// address of its log), or the `k`-th buffer the iteration allocated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Memory {
    Outside(usize),
    Allocated(usize),
}

/// What an iteration did, as far as the use tracking sees it: each use in order (the
/// memory, the stream, read or write).
type Signature = Vec<(Memory, usize, Access)>;

fn signature(seen: &Observed) -> Signature {
    seen.uses
        .iter()
        .map(|&(log, stream, access)| {
            let memory = match seen.allocated.iter().position(|&a| a == log) {
                Some(k) => Memory::Allocated(k),
                None => Memory::Outside(log),
            };
            (memory, stream, access)
        })
        .collect()
}

/// Where a [`Replay`] stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayState {
    /// Running eagerly, watching for `warmup` iterations in a row that do the same work;
    /// `repeats` in a row so far.
    Observing {
        /// Identical iterations in a row so far.
        repeats: usize,
    },
    /// Captured: each [`Replay::run`] replays the graph without running the body.
    Replaying,
    /// Running eagerly for good, for the reason given (an operation the capture refused,
    /// or iterations that never repeated).
    Eager {
        /// Why.
        reason: String,
    },
}

/// The automatic graph mode over a loop body (opt-in): the first iterations run eagerly
/// while rucuda watches which memory each one uses and allocates; once `warmup`
/// iterations in a row did the same work, the next one is captured into a graph (and
/// replayed at once, so it still runs), and every later [`Replay::run`] replays it
/// without calling the body. Where capture is refused (a host read, a synchronization,
/// work on another stream, memory it cannot keep alive) or the iterations never repeat,
/// it stays eager, and [`Replay::state`] says why.
///
/// The body must do the same GPU work every iteration, on arrays that live across
/// iterations (state updated in place), with the same scalars: once replaying, the body
/// is no longer called, so neither its host-side effects nor changed scalars are seen.
/// Inputs change by writing into the arrays it reads. It should work on arrays whose
/// stream is the replay stream, and have been run once before (kernels compiled).
///
/// ```no_run
/// use rucuda_array::{graph::{Replay, ReplayState}, GpuArray};
/// use rucuda_driver::{Device, Stream, StreamFlags};
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
/// let mut x = GpuArray::<f32>::ones(&stream, &[4096])?;
/// let v = GpuArray::<f32>::full(&stream, &[4096], 0.5)?;
/// let mut replay = Replay::new(&stream);
/// for _ in 0..100 {
///     replay.run(|_s| {
///         let dx = (&v * 0.01f32)?;
///         x.try_add_assign(&dx)
///     })?;
/// }
/// assert_eq!(replay.state(), ReplayState::Replaying);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
#[derive(Debug)]
pub struct Replay {
    stream: Stream,
    warmup: usize,
    repeats: usize,
    observed: usize,
    last: Option<Signature>,
    graph: Option<CapturedGraph>,
    eager_reason: Option<String>,
}

impl Replay {
    /// Replays on `stream` after 2 identical eager iterations.
    pub fn new(stream: &Stream) -> Replay {
        Replay::with_warmup(stream, DEFAULT_WARMUP)
    }

    /// Replays on `stream` after `warmup` identical eager iterations (at least 2).
    pub fn with_warmup(stream: &Stream, warmup: usize) -> Replay {
        Replay {
            stream: stream.clone(),
            warmup: warmup.max(2),
            repeats: 0,
            observed: 0,
            last: None,
            graph: None,
            eager_reason: None,
        }
    }

    /// Where it stands.
    pub fn state(&self) -> ReplayState {
        if self.graph.is_some() {
            ReplayState::Replaying
        } else if let Some(reason) = &self.eager_reason {
            ReplayState::Eager {
                reason: reason.clone(),
            }
        } else {
            ReplayState::Observing {
                repeats: self.repeats,
            }
        }
    }

    /// The graph, once captured.
    pub fn graph(&self) -> Option<&CapturedGraph> {
        self.graph.as_ref()
    }

    /// Runs one iteration: `body` eagerly, or its capture, or a replay (see the type's
    /// docs).
    pub fn run(&mut self, mut body: impl FnMut(&Stream) -> Result<()>) -> Result<()> {
        if let Some(graph) = &self.graph {
            return Ok(graph.replay(&self.stream)?);
        }
        if self.eager_reason.is_some() {
            return body(&self.stream);
        }
        if self.repeats >= self.warmup {
            return self.capture_and_run(body);
        }
        let watch = UseObserver::begin();
        let ran = body(&self.stream);
        let seen = watch.finish();
        ran?;
        let sig = signature(&seen);
        self.repeats = match &self.last {
            Some(last) if *last == sig => self.repeats + 1,
            _ => 1,
        };
        self.last = Some(sig);
        self.observed += 1;
        if self.repeats < self.warmup && self.observed >= self.warmup + PATIENCE {
            self.eager_reason = Some(format!(
                "no {} iterations in a row did the same work in the first {} (the body \
                 allocates memory it keeps, or changes what it works on)",
                self.warmup, self.observed
            ));
        }
        Ok(())
    }

    /// Captures this iteration and replays it; falls back to running it eagerly when
    /// the capture is refused.
    fn capture_and_run(&mut self, mut body: impl FnMut(&Stream) -> Result<()>) -> Result<()> {
        match super::capture(&self.stream, |s| body(s)) {
            Ok(graph) => {
                graph.replay(&self.stream)?;
                self.graph = Some(graph);
                Ok(())
            }
            Err(ArrayError::Driver(e @ Error::Uncapturable { .. })) => {
                self.eager_reason = Some(e.to_string());
                // The captured work never ran: run the iteration eagerly.
                body(&self.stream)
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_name_allocations_by_their_order() {
        let a = Observed {
            uses: vec![
                (10, 5, Access::Read),
                (77, 5, Access::Write),
                (10, 5, Access::Read),
            ],
            allocated: vec![77],
        };
        let b = Observed {
            uses: vec![
                (10, 5, Access::Read),
                (99, 5, Access::Write),
                (10, 5, Access::Read),
            ],
            allocated: vec![99],
        };
        assert_eq!(signature(&a), signature(&b));
        let c = Observed {
            uses: vec![
                (11, 5, Access::Read),
                (99, 5, Access::Write),
                (10, 5, Access::Read),
            ],
            allocated: vec![99],
        };
        assert_ne!(signature(&a), signature(&c), "other memory outside");
        let d = Observed {
            uses: vec![
                (10, 6, Access::Read),
                (99, 6, Access::Write),
                (10, 6, Access::Read),
            ],
            allocated: vec![99],
        };
        assert_ne!(signature(&b), signature(&d), "another stream");
        assert_eq!(signature(&a)[1].0, Memory::Allocated(0));
    }
}
