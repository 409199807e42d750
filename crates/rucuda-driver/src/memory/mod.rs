//! Device and host memory: allocations, copies and memsets.
//!
//! # When memory is freed, read and reused
//!
//! The rule: safe code never frees, reuses or reads on the host memory that queued work
//! may still use, and never queues work that races other queued work on the same memory.
//! One structure keeps it, [`tracking`]: every owner of memory (device buffers, pitched,
//! managed and IPC memory, page-locked and registered host memory, pool blocks) holds a
//! [`UseLog`], hands its memory out only as a [`DeviceRange`] carrying that log, and
//! [`DeviceRange::use_on`] is the only way to an address for queued work. Launches, copies
//! of every kind, memsets, rucuda-array's kernels, NCCL collectives and GL mappings all go
//! through it; no call site records a use by hand.
//!
//! - Work on another stream than the last writer (or, for a write, than any reader since)
//!   waits for that work through an event recorded then.
//! - A stream-ordered free (`cuMemFreeAsync` on the home stream) is a write on the home
//!   stream: it waits for every other stream's recorded use. A synchronous free
//!   (`cuMemFree`) first waits on the host for every recorded use.
//! - Host access to page-locked memory, and the synchronous copies and memsets, wait on
//!   the host for the conflicting recorded uses first; synchronous calls have run when
//!   they return.
//! - Views share their owner's log; safe code cannot make a view without an owner.
//! - Only `unsafe` calls can break the rule: kernel launches (whose kernels may touch
//!   memory they were not given), graph launches, [`DeviceRange::untracked`], `from_raw`.

pub(crate) mod device_buffer;
pub(crate) mod kernel_arg;

pub use device_buffer::{DeviceBuffer, DeviceView, DeviceViewMut};
pub use kernel_arg::{DevicePointerArg, KernelArg, Param};

pub mod tracking;
pub use tracking::{keep_alive_for_capture, Access, DevicePtr, DeviceRange, InUse, UseLog};

// Host memory kinds, managed/pitched/IPC memory, copies, memsets, pointer attributes.
mod aligned;
mod async_host;
mod copy;
mod graph_capture;
mod graph_pool;
mod ipc;
mod managed;
mod memset;
mod page_locked;
mod parallel_copy;
mod pinned;
mod pitched;
pub(crate) mod pointer;
pub(crate) mod pointer_attribute;
pub(crate) mod pointer_query;
mod pool;
mod registered;
mod staged;
mod staging_config;

pub use aligned::{
    aligned_empty, aligned_empty_like, aligned_zeros, aligned_zeros_like, AlignedHostBuffer,
    DEFAULT_HOST_ALIGNMENT,
};
pub use async_host::PageLockedHost;
pub use copy::{
    from_device, from_device_like, memcpy_dtod, memcpy_dtod_async, memcpy_dtoh, memcpy_dtoh_async,
    memcpy_htod, memcpy_htod_async, memcpy_peer, memcpy_peer_async, to_device,
};
pub use graph_capture::{CaptureSession, CapturedGraph, Observed, UseObserver};
pub use ipc::{IpcMemFlags, IpcMemHandle, IpcMemory, IPC_HANDLE_SIZE};
pub use managed::{
    managed_empty, managed_empty_like, managed_zeros, managed_zeros_like, ManagedBuffer, MemAdvice,
    MemAttachFlags, MemLocation,
};
pub use memset::{
    memset_d16, memset_d16_async, memset_d2d16, memset_d2d16_async, memset_d2d32,
    memset_d2d32_async, memset_d2d8, memset_d2d8_async, memset_d32, memset_d32_async, memset_d8,
    memset_d8_async,
};
pub use pinned::{
    pagelocked_empty, pagelocked_empty_like, pagelocked_zeros, pagelocked_zeros_like,
    HostAllocFlags, PinnedHostBuffer,
};
pub use pitched::{mem_alloc_pitch, PitchedDeviceBuffer};
pub use pointer::{DevicePtrMut, ExternalDevicePtr};
pub use pointer_query::{pointer_attributes, pointer_memory_type, MemoryType, PointerAttributes};
pub use pool::MemPool;
pub use registered::{register_host_memory, HostRegisterFlags, RegisteredHostMemory};
pub use staged::release_staging_buffers;
pub use staging_config::{set_staging_config, staging_config, StagingConfig};
