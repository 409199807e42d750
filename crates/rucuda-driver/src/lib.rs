//! A safe layer over the CUDA driver API: all of PyCUDA's `pycuda.driver`, in current
//! CUDA terms.
//!
//! - [`Device`], [`Context`] (primary by default, or created with [`ContextFlags`]),
//!   [`Stream`], [`Event`];
//! - memory: [`DeviceBuffer`] and views;
//! - [`CudaArray`]s, [`TextureObject`]s, [`SurfaceObject`]s, [`Memcpy2D`] / [`Memcpy3D`] copies;
//! - host and special memory: [`PinnedHostBuffer`], [`AlignedHostBuffer`],
//!   [`RegisteredHostMemory`], [`ManagedBuffer`], [`PitchedDeviceBuffer`], [`IpcMemory`];
//!   copies (`memcpy_*`, fast staged pageable copies), memsets (`memset_*`), pointer
//!   attributes;
//! - [`Module`] and [`Function`]: loading PTX/cubin/fatbin, launching with typed argument
//!   tuples that are checked against the kernel's parameters before the driver sees them.
//!
//! Every driver result is checked; errors are [`Error`] values that name the failing call
//! ([`Error::kind`] gives PyCUDA's classes). Nothing panics. Objects hold their parents
//! (memory its context, a kernel its module), so drop order never frees a context under
//! live memory.
//!
//! ```no_run
//! use rucuda_driver::*;
//! let ctx = Device::get(0)?.primary_context()?;
//! let ptx = r#"
//! .version 8.0
//! .target sm_90
//! .address_size 64
//! .visible .entry twice(.param .u64 x, .param .u32 n) {
//!   .reg .pred %p; .reg .b32 %r<5>; .reg .f32 %f<3>; .reg .b64 %rd<4>;
//!   ld.param.u64 %rd1, [x]; ld.param.u32 %r1, [n];
//!   mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x;
//!   mad.lo.s32 %r2, %r2, %r3, %r4;
//!   setp.ge.u32 %p, %r2, %r1; @%p ret;
//!   cvta.to.global.u64 %rd2, %rd1; mul.wide.u32 %rd3, %r2, 4; add.s64 %rd2, %rd2, %rd3;
//!   ld.global.f32 %f1, [%rd2]; add.f32 %f2, %f1, %f1; st.global.f32 [%rd2], %f2;
//!   ret;
//! }"#;
//! let twice = Module::load_data(&ctx, ptx.as_bytes())?.function("twice")?;
//! let mut x = DeviceBuffer::from_slice(&ctx, &[1.0f32, 2.0, 3.0])?;
//! // SAFETY: twice(float* x, unsigned n) touches x[0..n).
//! unsafe { twice.launch(LaunchConfig::for_elements(3, 128), &Stream::null(&ctx), (&mut x, 3u32))? };
//! assert_eq!(x.to_vec()?, vec![2.0, 4.0, 6.0]);
//! # Ok::<(), Error>(())
//! ```

#[macro_use]
mod raw_enum;

mod arrays;
pub mod constants;
mod context;
mod device;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod kernels;
pub mod legacy;
pub mod memory;
mod repr;
mod streams;

pub use arrays::{
    array_extent, array_to_host, host_to_array, make_multichannel_2d_array, matrix_to_array,
    memcpy_atoa, memcpy_atod, memcpy_atoh, memcpy_dtoa, memcpy_htoa, texel_helpers_include_dir,
    write_texel_helpers, AddressMode, Array3DFlags, ArrayDescriptor, ArrayDescriptor3D,
    ArrayElement, ArrayFormat, CubemapFace, CudaArray, DeviceWritable, FilterMode, Memcpy2D,
    Memcpy3D, Memcpy3DPeer, Order, ReadMode, SurfaceHandle, SurfaceObject, TextureDescriptor,
    TextureHandle, TextureObject, TEXEL_HELPERS_CUH, TEXEL_HELPERS_NAME,
};
pub use context::profiler::{start_profiler, stop_profiler};
pub use context::{CacheConfig, Context, ContextFlags, Limit, WeakContext};
pub use device::attribute::DeviceAttribute;
pub use device::compute_mode::ComputeMode;
pub use device::peer::{P2PAttribute, P2PInfo};
pub use device::{driver_version, get_version, init, Device};
pub use error::{check, driver, DriverError, Error, ErrorKind, Result};
pub use kernels::function::{Function, FunctionAttribute};
pub use kernels::global::DeviceGlobal;
pub use kernels::host_args::HostArgs;
pub use kernels::jit_constants::{JitFallback, JitInputType, JitOption, JitTarget};
pub use kernels::launch::{ArgBuffer, KernelArgs, LaunchConfig, PreparedLaunch};
pub use kernels::module::{JitLog, JitOptions, Module};
pub use kernels::occupancy::{Occupancy, OccupancyFlags, SuggestedBlockSize};
pub use kernels::programmatic::ProgrammaticPolicy;
pub use kernels::shared_config::SharedConfig;
pub use memory::{
    aligned_empty, aligned_empty_like, aligned_zeros, aligned_zeros_like, from_device,
    from_device_like, managed_empty, managed_empty_like, managed_zeros, managed_zeros_like,
    mem_alloc_pitch, memcpy_dtod, memcpy_dtod_async, memcpy_dtoh, memcpy_dtoh_async, memcpy_htod,
    memcpy_htod_async, memcpy_peer, memcpy_peer_async, memset_d16, memset_d16_async, memset_d2d16,
    memset_d2d16_async, memset_d2d32, memset_d2d32_async, memset_d2d8, memset_d2d8_async,
    memset_d32, memset_d32_async, memset_d8, memset_d8_async, pagelocked_empty,
    pagelocked_empty_like, pagelocked_zeros, pagelocked_zeros_like, pointer_attributes,
    pointer_memory_type, register_host_memory, release_staging_buffers, to_device,
    AlignedHostBuffer, DevicePtrMut, ExternalDevicePtr, HostAllocFlags, HostRegisterFlags,
    IpcMemFlags, IpcMemHandle, IpcMemory, ManagedBuffer, MemAdvice, MemAttachFlags, MemLocation,
    MemPool, MemoryType, PageLockedHost, PinnedHostBuffer, PitchedDeviceBuffer, PointerAttributes,
    RegisteredHostMemory, DEFAULT_HOST_ALIGNMENT, IPC_HANDLE_SIZE,
};
pub use memory::{
    keep_alive_for_capture, tracking, Access, CaptureSession, CapturedGraph, DeviceBuffer,
    DevicePointerArg, DevicePtr, DeviceRange, DeviceView, DeviceViewMut, InUse, KernelArg,
    Observed, Param, UseLog, UseObserver,
};
#[doc(hidden)]
pub use repr::__private;
pub use repr::{vector, DeviceRepr};
pub use streams::event::{Event, EventFlags, IpcEventHandle};
pub use streams::graph::{
    CaptureMode, CaptureStatus, Graph, GraphExec, GraphInstantiateFlags, GraphUpdate,
};
pub use streams::stream::{Stream, StreamFlags};

/// The raw bindings this crate is built on.
pub use rucuda_driver_sys as sys;
