//! PyCUDA's tools: the default context, device metadata, per-context memoization and
//! memory pools.

mod default_context;
mod device_data;
mod memoize;
mod occupancy;
mod pool;

#[allow(deprecated)]
pub use default_context::get_default_device;
pub use default_context::{autoinit, autoprimaryctx, make_default_context, AutoContext};
pub use device_data::DeviceData;
pub use memoize::{clear_context_caches, context_dependent_memoize};
pub use occupancy::{OccupancyLimit, OccupancyRecord};
pub use pool::{DeviceMemoryPool, PooledDeviceAllocation};
