//! Ordering work: streams, events and graphs.

pub(crate) mod event;
pub(crate) mod graph;
pub(crate) mod stream;
