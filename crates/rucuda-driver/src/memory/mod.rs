//! Device and host memory: allocations, copies and memsets.

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
