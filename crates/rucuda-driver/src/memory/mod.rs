//! Device and host memory: allocations, copies and memsets.

mod device_buffer;

pub use device_buffer::{DeviceBuffer, DevicePtr, DeviceView, DeviceViewMut};

// Host memory kinds, managed/pitched/IPC memory, copies, memsets, pointer attributes.
mod aligned;
mod pinned;
pub(crate) mod pointer;
mod registered;
pub use aligned::{
    aligned_empty, aligned_empty_like, aligned_zeros, aligned_zeros_like, AlignedHostBuffer,
    DEFAULT_HOST_ALIGNMENT,
};
pub use pinned::{
    pagelocked_empty, pagelocked_empty_like, pagelocked_zeros, pagelocked_zeros_like,
    HostAllocFlags, PinnedHostBuffer,
};
pub use pointer::{
    pointer_attributes, pointer_memory_type, DevicePtrMut, ExternalDevicePtr, MemoryType,
    PointerAttributes,
};
pub use registered::{register_host_memory, HostRegisterFlags, RegisteredHostMemory};
