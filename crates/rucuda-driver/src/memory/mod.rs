//! Device and host memory: allocations, copies and memsets.

mod device_buffer;

pub use device_buffer::{DeviceBuffer, DevicePtr, DeviceView, DeviceViewMut};

// Host memory kinds, managed/pitched/IPC memory, copies, memsets, pointer attributes.
pub(crate) mod pointer;
pub use pointer::{
    pointer_attributes, pointer_memory_type, DevicePtrMut, ExternalDevicePtr, MemoryType,
    PointerAttributes,
};
