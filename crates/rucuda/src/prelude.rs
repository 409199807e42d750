//! The names most programs use, in one import: `use rucuda::prelude::*;`.
//!
//! Types and traits only, plus the default-context functions; no `Error` or `Result`, so
//! that the glob import does not shadow `std`'s `Result`: use
//! [`rucuda::Result`](crate::Result), whose [`rucuda::Error`](crate::Error) takes every
//! crate's error through `?`.
//!
//! ```no_run
//! use rucuda::prelude::*;
//! let ctx = autoprimaryctx()?;
//! let stream = Stream::null(ctx);
//! let x = GpuArray::from_slice(&stream, &[1.0f32, 2.0, 3.0])?;
//! let mut y = GpuArray::<f32>::empty_like(&x)?;
//! let twice = unsafe { ElementwiseKernel::new("const float *x, float *y", "y[i] = 2.0f * x[i]", "twice") }?;
//! twice.call(&stream, &[(&x).into(), (&mut y).into()])?;
//! assert_eq!(y.to_vec()?, [2.0, 4.0, 6.0]);
//! # Ok::<(), rucuda::Error>(())
//! ```

pub use rucuda_driver::{
    Context, ContextFlags, CudaArray, Device, DeviceBuffer, DevicePtr, DeviceRepr, Event,
    EventFlags, Function, HostAllocFlags, LaunchConfig, Module, PinnedHostBuffer, PreparedLaunch,
    Stream, StreamFlags, TextureDescriptor, TextureObject,
};

pub use rucuda_jit::{CompileOptions, SourceModule};

pub use rucuda_array::elementwise::ElementwiseKernel;
pub use rucuda_array::{Element, GpuArray, SliceArg};

pub use crate::tools::{
    autoinit, autoprimaryctx, make_default_context, AutoContext, DeviceData, DeviceMemoryPool,
    PageLockedMemoryPool,
};
