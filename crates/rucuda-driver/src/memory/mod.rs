//! Device and host memory: allocations, copies and memsets.

mod device_buffer;

pub use device_buffer::{DeviceBuffer, DevicePtr, DeviceView, DeviceViewMut};
