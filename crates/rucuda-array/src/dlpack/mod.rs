//! DLPack, the zero-copy exchange of arrays between libraries (CuPy, PyTorch, JAX,
//! NumPy...): [`GpuArray::to_dlpack`] exports an array as a `DLManagedTensor` whose
//! deleter keeps the array's memory alive, and [`GpuArray::from_dlpack`] imports one as
//! a `GpuArray` whose owner calls the tensor's deleter. Both have versioned forms
//! (`DLManagedTensorVersioned`, DLPack 1.x). Device `kDLCUDA` with the context's device
//! ordinal; strides in elements; every element type maps ([`dl_data_type`]).
//!
//! Passing the pointers across a language boundary (a Python `PyCapsule` named
//! `"dltensor"` or `"dltensor_versioned"`) is the caller's business; this module only
//! makes and consumes the C structs ([`ffi`]).
//!
//! [`GpuArray::to_dlpack`]: crate::GpuArray::to_dlpack
//! [`GpuArray::from_dlpack`]: crate::GpuArray::from_dlpack

mod dtype;
mod export;
pub mod ffi;
mod import;

pub use dtype::{dl_data_type, dtype_of};
