//! PyCUDA's tools: the default context, device metadata, per-context memoization,
//! memory pools (device and page-locked host), and [`cuda_test!`](crate::cuda_test)
//! (PyCUDA's `mark_cuda_test`).

mod bins;
mod bitlog;
mod default_context;
mod device_data;
mod host_alloc;
mod host_block;
mod host_pool;
mod host_pool_copy;
mod memoize;
#[cfg(feature = "ndarray")]
mod ndarray_arrays;
mod occupancy;
mod pool;

pub use bins::{alloc_size, bin_number};
pub use bitlog::bitlog2;
#[allow(deprecated)]
pub use default_context::get_default_device;
pub use default_context::{
    autoinit, autoprimaryctx, make_default_context, AutoContext, DefaultContextError, DeviceOrigin,
};
pub use device_data::DeviceData;
pub use host_alloc::PageLockedAllocator;
pub use host_block::PooledHostAllocation;
pub use host_pool::PageLockedMemoryPool;
pub use memoize::{clear_context_caches, context_dependent_memoize};
#[cfg(feature = "ndarray")]
pub use ndarray_arrays::{
    ndarray_matrix_to_array, ndarray_to_array, ndarray_to_multichannel_2d_array,
};
pub use occupancy::{OccupancyLimit, OccupancyRecord};
pub use pool::{DeviceMemoryPool, PooledDeviceAllocation};
