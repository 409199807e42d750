//! The two ends of a structured copy: host, device, unified or array memory, with the
//! offsets, pitch and rows per slice of each side.

use std::ffi::c_void;

use rucuda_driver_sys::CUdeviceptr;

use crate::arrays::cuda_array::CudaArray;
use crate::error::{Error, Result};
use crate::memory::tracking::{DevicePtr, UseLog};
use crate::repr::DeviceRepr;

/// One end of a copy.
#[derive(Clone, Copy)]
pub(crate) enum Endpoint<'a> {
    Unset,
    Host {
        ptr: *mut c_void,
        len: usize,
    },
    /// Device memory with the log of its uses (`None`: untracked, from `unsafe` code).
    Device {
        ptr: CUdeviceptr,
        len: usize,
        log: Option<&'a UseLog>,
    },
    Unified {
        ptr: CUdeviceptr,
        len: usize,
    },
    Array(&'a CudaArray),
}

impl Endpoint<'_> {
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Endpoint::Unset => "nothing",
            Endpoint::Host { .. } => "host memory",
            Endpoint::Device { .. } => "device memory",
            Endpoint::Unified { .. } => "unified memory",
            Endpoint::Array(_) => "an array",
        }
    }

    /// The same linear memory starting `bytes` later (crate use: copies in pieces).
    pub(crate) fn advanced(self, bytes: usize) -> Result<Self> {
        let short = |len: usize| {
            Error::invalid(format!(
                "offset {bytes} lies past the end of {len} bytes of memory"
            ))
        };
        Ok(match self {
            Endpoint::Host { ptr, len } => Endpoint::Host {
                len: len.checked_sub(bytes).ok_or_else(|| short(len))?,
                ptr: ptr.cast::<u8>().wrapping_add(bytes).cast(),
            },
            Endpoint::Device { ptr, len, log } => Endpoint::Device {
                len: len.checked_sub(bytes).ok_or_else(|| short(len))?,
                ptr: ptr.wrapping_add(bytes as u64),
                log,
            },
            Endpoint::Unified { ptr, len } => Endpoint::Unified {
                len: len.checked_sub(bytes).ok_or_else(|| short(len))?,
                ptr: ptr.wrapping_add(bytes as u64),
            },
            other => other,
        })
    }
}

/// One side of a copy: the memory and where in it the box starts.
#[derive(Clone, Copy)]
pub(crate) struct Side<'a> {
    pub(crate) end: Endpoint<'a>,
    pub(crate) x_in_bytes: usize,
    pub(crate) y: usize,
    pub(crate) z: usize,
    pub(crate) pitch: Option<usize>,
    pub(crate) height: Option<usize>,
}

impl Side<'_> {
    pub(crate) const UNSET: Side<'static> = Side {
        end: Endpoint::Unset,
        x_in_bytes: 0,
        y: 0,
        z: 0,
        pitch: None,
        height: None,
    };
}

pub(crate) fn host_endpoint<T: DeviceRepr>(data: &[T]) -> Endpoint<'static> {
    Endpoint::Host {
        ptr: data.as_ptr().cast_mut().cast(),
        len: std::mem::size_of_val(data),
    }
}

pub(crate) fn host_endpoint_mut<T: DeviceRepr>(data: &mut [T]) -> Endpoint<'static> {
    Endpoint::Host {
        ptr: data.as_mut_ptr().cast(),
        len: std::mem::size_of_val(data),
    }
}

pub(crate) fn unified_endpoint<T: DeviceRepr>(data: &[T]) -> Endpoint<'static> {
    Endpoint::Unified {
        ptr: data.as_ptr() as CUdeviceptr,
        len: std::mem::size_of_val(data),
    }
}

pub(crate) fn unified_endpoint_mut<T: DeviceRepr>(data: &mut [T]) -> Endpoint<'static> {
    Endpoint::Unified {
        ptr: data.as_mut_ptr() as CUdeviceptr,
        len: std::mem::size_of_val(data),
    }
}

pub(crate) fn device_endpoint<P: DevicePtr + ?Sized>(mem: &P) -> Endpoint<'_> {
    let range = mem.device_range();
    Endpoint::Device {
        ptr: range.address(),
        len: range.byte_len(),
        log: range.log(),
    }
}
