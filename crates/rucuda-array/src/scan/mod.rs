//! PyCUDA's `InclusiveScanKernel` and `ExclusiveScanKernel`: prefix scans with any
//! associative operator, in one pass over the data with decoupled look-back (see
//! [`render`] for the design), in place or into an output; `cumsum` on arrays uses them.
//!
//! - [`ScanSpec`]: the definition (element type, operator, neutral, preamble, name,
//!   inclusive or exclusive).
//! - [`ScanVariant`] and [`ScanSpec::render`]: the source of each variant.
//! - [`ScanKernel`], [`InclusiveScanKernel`], [`ExclusiveScanKernel`]: checked calls.
//!
//! ```no_run
//! use rucuda_array::{DType, GpuArray, scan::ExclusiveScanKernel};
//! # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
//! let k = unsafe { ExclusiveScanKernel::new(DType::U32, "a + b", "0") }?;
//! let mut counts = GpuArray::from_slice(&stream, &[2u32, 2, 3])?;
//! k.call_in_place(&stream, &mut counts)?;
//! assert_eq!(counts.to_vec()?, vec![0, 2, 4]);
//! # Ok::<(), rucuda_array::ArrayError>(())
//! ```

mod device_tuning;
mod kernel;
pub mod render;
mod spec;

#[cfg(test)]
mod render_tests;

pub(crate) use device_tuning::parse_prefetch;
pub use device_tuning::{DeviceFacts, DEFAULT_LEAD_NS, FAST_MEMORY_PER_SM};
pub(crate) use kernel::cumsum_kernel;
pub use kernel::{ExclusiveScanKernel, InclusiveScanKernel, ScanKernel};
pub use render::{
    block_shape, L2Prefetch, RenderedScan, ScanTuning, Variant as ScanVariant, BLOCK_SIZE,
    FAST_MEMORY_VECTORS, VECTORS_PER_THREAD,
};
pub use spec::{ScanBuilder, ScanKind, ScanSpec};
