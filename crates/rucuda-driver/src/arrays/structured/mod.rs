//! Structured copies: [`Memcpy2D`], [`Memcpy3D`] and [`Memcpy3DPeer`] (PyCUDA's classes of
//! the same names) between host memory, device memory, unified addresses and arrays,
//! with pitches and offsets, checked against every size they can know before the driver
//! sees them.
//!
//! Field names follow PyCUDA: `src_x_in_bytes`, `src_y`, `src_z`, `src_pitch`,
//! `src_height` (rows per slice of linear memory), the same for `dst_`, and
//! `width_in_bytes`, `height`, `depth` for the copied box. A pitch left unset is the
//! tight one (`width_in_bytes`); a slice height left unset is `height`. Offsets and
//! pitches of an array side are in the array's own layout (pitches are ignored).
//!
//! `geometry.rs` holds the ends and the box, `bounds.rs` checks them, `setters.rs` writes
//! the builder methods once for the three copies of `copies.rs`.

mod bounds;
mod endpoint;
mod geometry;
#[macro_use]
mod setters;
mod copies;

pub use copies::{Memcpy2D, Memcpy3D, Memcpy3DPeer};

/// The old name of [`DevicePtrMut`](crate::DevicePtrMut) (device memory a copy may
/// write), kept so that code naming it still compiles.
pub use crate::memory::pointer::DevicePtrMut as DeviceWritable;
