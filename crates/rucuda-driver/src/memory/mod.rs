//! Device and host memory: allocations, copies and memsets.
//!
//! # When memory is freed
//!
//! The rule: safe code never frees device memory while work queued on a stream may still
//! use it. Only `unsafe` calls can break it: [`Function::launch`](crate::Function::launch)
//! and friends (whose contract is that the buffers a kernel touches outlive its work),
//! `from_raw`/`into_raw`, and raw driver calls.
//!
//! How each kind of memory keeps it:
//!
//! - [`DeviceBuffer`] allocated **synchronously** (`cuMemAlloc`: `uninit`, `zeros`,
//!   `from_slice`) is freed with `cuMemFree`, which synchronizes with the device before
//!   it frees memory of this kind (the CUDA documentation: for pointers not from the
//!   stream-ordered allocator, `cuMemFree` "may perform implicit synchronization"). The
//!   same holds for [`PitchedDeviceBuffer`] and [`ManagedBuffer`].
//! - [`DeviceBuffer`] allocated **stream-ordered** (`cuMemAllocAsync`: `uninit_async`,
//!   every `GpuArray`) is freed with `cuMemFreeAsync` on its own stream, which does not
//!   synchronize: the free is ordered after the work of that stream only. Work on
//!   *other* streams that uses the buffer is recorded: [`DeviceBuffer::record_use`] records
//!   an event on the other stream (one per stream, re-recorded on later uses), and the
//!   free first makes its stream wait for every recorded event. rucuda records every use
//!   it queues: kernel launches with buffer or view arguments (tuples), the async copies
//!   (`memcpy_*_async`) and memsets (`memset_*_async`), and rucuda-array's generated
//!   kernels. Code that hands a raw address to other streams (an
//!   [`ArgBuffer`](crate::ArgBuffer), [`Memcpy2D`](crate::Memcpy2D) and
//!   [`Memcpy3D`](crate::Memcpy3D) copies, raw driver calls) calls `record_use` itself.
//!   Uses queued while a stream captures a graph are not recorded: the work runs when
//!   the graph is launched, an `unsafe` call whose contract keeps its buffers alive.
//! - [`PinnedHostBuffer`] waits for the copies queued on it before `cuMemFreeHost`
//!   (and before host access through `Deref`).
//! - Views ([`DeviceView`], [`DeviceViewMut`]) borrow their buffer, so it cannot be
//!   dropped while they exist; a view of a stream-ordered buffer records its uses on the
//!   buffer.
//! - A pool block (`rucuda::tools::DeviceMemoryPool`) that goes back to its pool is
//!   handed out again at once, like PyCUDA's pool: blocks are not stream-aware, so
//!   synchronize the stream that used a block before dropping it when another thread or
//!   stream may take it next.

mod device_buffer;

pub use device_buffer::{DeviceBuffer, DevicePtr, DeviceView, DeviceViewMut};

// Host memory kinds, managed/pitched/IPC memory, copies, memsets, pointer attributes.
mod aligned;
mod copy;
mod ipc;
mod managed;
mod memset;
mod parallel_copy;
mod pinned;
mod pitched;
pub(crate) mod pointer;
mod pool;
mod registered;
mod staged;

pub use aligned::{
    aligned_empty, aligned_empty_like, aligned_zeros, aligned_zeros_like, AlignedHostBuffer,
    DEFAULT_HOST_ALIGNMENT,
};
pub use copy::{
    from_device, from_device_like, memcpy_dtod, memcpy_dtod_async, memcpy_dtoh, memcpy_dtoh_async,
    memcpy_htod, memcpy_htod_async, memcpy_peer, memcpy_peer_async, to_device,
};
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
pub use pointer::{
    pointer_attributes, pointer_memory_type, DevicePtrMut, ExternalDevicePtr, MemoryType,
    PointerAttributes,
};
pub use pool::MemPool;
pub use registered::{register_host_memory, HostRegisterFlags, RegisteredHostMemory};
pub use staged::release_staging_buffers;
