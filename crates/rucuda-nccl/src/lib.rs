//! Beyond one GPU: collectives across GPUs and hosts through NVIDIA's NCCL, loaded at run
//! time (nothing links against it; a machine without NCCL builds and runs everything
//! else, and gets a clear error naming what to install).
//!
//! - [`Nccl`]: the library (`libnccl.so.2`, found through `RUCUDA_NCCL`, the loader path,
//!   or NVIDIA's `nvidia-nccl-cu13` pip wheel), its version and raw function table;
//! - [`UniqueId`]: the name of a communicator, made by one rank and sent to the others
//!   (bytes, hex text, serde, a file);
//! - [`Communicator`]: one rank on one GPU — [`init_rank`](Communicator::init_rank)
//!   (one process or thread per GPU), [`init_all`](Communicator::init_all) (one process
//!   for every GPU), [`split`](Communicator::split), [`abort`](Communicator::abort),
//!   [`wait`](Communicator::wait) with a time limit, asynchronous errors;
//! - collectives on [`GpuArray`](rucuda_array::GpuArray)s, [`DeviceBuffer`](rucuda_driver::DeviceBuffer)s
//!   and views: all-reduce, broadcast, reduce, all-gather, reduce-scatter (with sum,
//!   prod, max, min, avg), send and receive; [`group`] to issue several as one (on
//!   `GpuArray`s: its recorded calls keep their memory alive until issued, and plain
//!   buffers and views are refused inside it);
//! - checks before NCCL sees a call (types, sizes, devices, ranks, a communicator that
//!   was aborted), groups that launch nothing when one of their calls fails, and
//!   agreement checks between ranks (in one group of this thread, or across processes
//!   with [`Communicator::set_checked`]) — so a mistake is an error, not a hang.
//!
//! ```no_run
//! use rucuda_array::GpuArray;
//! use rucuda_driver::{Device, Stream};
//! use rucuda_nccl::{group, Communicator, ReduceOp};
//! // One process drives every GPU: one communicator, one group per step.
//! let ctxs: Vec<_> = Device::all()?.into_iter()
//!     .map(Device::primary_context).collect::<Result<_, _>>()?;
//! let comms = Communicator::init_all(&ctxs)?;
//! let streams: Vec<Stream> = ctxs.iter().map(Stream::null).collect();
//! let mut grads = streams.iter().enumerate()
//!     .map(|(i, s)| GpuArray::<f32>::full(s, &[1 << 20], i as f32))
//!     .collect::<Result<Vec<_>, _>>()?;
//! group(|| {
//!     for ((comm, g), s) in comms.iter().zip(&mut grads).zip(&streams) {
//!         comm.all_reduce_in_place(g, ReduceOp::Avg, s)?;
//!     }
//!     Ok(())
//! })?;
//! for (comm, s) in comms.iter().zip(&streams) {
//!     comm.wait(s, std::time::Duration::from_secs(60))?;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! NVLink multicast (NVLS, `NCCL_NVLS_ENABLE`) is left to NCCL's default here; rucuda's
//! own tests, examples and benchmarks set `NCCL_NVLS_ENABLE=0` because the machines they
//! run on must not use it (see the guide's chapter on scaling out).

// The modules, bottom up; each uses only those on lines above its own:
//   sys (the library: bindings, table, loader, getters)
//   error
//   dtype, id, current (the current context kept across NCCL calls), hold
//   buffers (SendBuffer, RecvBuffer, Region)
//   signature (an operation as every rank sees it)
//   plan (the checks of one operation, and its NCCL call)
//   pending (a call recorded in a group)
//   agreement (the ranks of a group compared), issue (NCCL group start, calls, end)
//   group (the recording state of this thread, `group`)
//   comm (Communicator), create (its constructors)
//   collective (the operations)
mod agreement;
mod buffers;
mod collective;
mod comm;
mod create;
mod current;
mod dtype;
mod error;
mod group;
mod hold;
mod id;
mod issue;
mod pending;
mod plan;
mod signature;
pub mod sys;

pub use buffers::{RecvBuffer, Region, SendBuffer};
pub use comm::{take_drop_errors, Communicator, CHECK_ENV};
pub use dtype::{DataType, ElementLayout, ReduceOp, Reductions};
pub use error::{result_name, Error, NcclError, Result};
pub use group::group;
pub use id::{UniqueId, UNIQUE_ID_BYTES};
pub use sys::loader::{
    LoadError, MissingFunction, Nccl, NcclVersion, NCCL_ENV, NCCL_SPEC, NCCL_WHEEL,
};

/// NCCL's version as the loaded library reports it, or why there is no NCCL.
///
/// ```no_run
/// println!("NCCL {}", rucuda_nccl::version()?);
/// # Ok::<(), rucuda_nccl::Error>(())
/// ```
pub fn version() -> Result<NcclVersion> {
    Ok(Nccl::get()?.version())
}
