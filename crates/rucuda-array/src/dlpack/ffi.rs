//! DLPack's C types (`dlpack.h`, ABI version 1.x), `#[repr(C)]` as the header declares
//! them.
//!
//! Our own rather than the `dlpark` crate's: dlpark 0.10 (the maintained one, which does
//! have CUDA device types) needs Rust 1.88 against our 1.85, brings `snafu` and `bitflags`
//! and an ownership model of its own, where all we need are these five plain structs,
//! which the DLPack ABI keeps stable.

use std::os::raw::c_void;

/// The DLPack ABI version these types follow (`DLPACK_MAJOR_VERSION`).
pub const DLPACK_MAJOR_VERSION: u32 = 1;
/// `DLPACK_MINOR_VERSION` of the header these types were written from.
pub const DLPACK_MINOR_VERSION: u32 = 1;
/// `DLPACK_FLAG_BITMASK_READ_ONLY`: the consumer must not write the tensor.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1;
/// `DLPACK_FLAG_BITMASK_IS_COPIED`: the producer copied the data for this export.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 2;

/// `DLPackVersion`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLPackVersion {
    /// Major version (ABI-breaking changes).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

/// `DLDeviceType`, a C enum (an `int`): a newtype so that an unknown value from another
/// library is a value, not undefined behaviour.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLDeviceType(pub i32);

impl DLDeviceType {
    /// `kDLCPU`.
    pub const CPU: DLDeviceType = DLDeviceType(1);
    /// `kDLCUDA`: CUDA device memory.
    pub const CUDA: DLDeviceType = DLDeviceType(2);
    /// `kDLCUDAHost`: pinned host memory (`cudaMallocHost`).
    pub const CUDA_HOST: DLDeviceType = DLDeviceType(3);
    /// `kDLCUDAManaged`: CUDA managed memory.
    pub const CUDA_MANAGED: DLDeviceType = DLDeviceType(13);
}

/// `DLDevice`: where the data lies.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLDevice {
    /// The kind of device.
    pub device_type: DLDeviceType,
    /// The device's ordinal (CUDA's device number).
    pub device_id: i32,
}

/// `DLDataTypeCode` values (the `code` of a [`DLDataType`]).
pub mod type_code {
    /// `kDLInt`: signed integer.
    pub const INT: u8 = 0;
    /// `kDLUInt`: unsigned integer.
    pub const UINT: u8 = 1;
    /// `kDLFloat`: IEEE floating point.
    pub const FLOAT: u8 = 2;
    /// `kDLOpaqueHandle`.
    pub const OPAQUE_HANDLE: u8 = 3;
    /// `kDLBfloat`: bfloat16.
    pub const BFLOAT: u8 = 4;
    /// `kDLComplex`: complex (bits count both parts).
    pub const COMPLEX: u8 = 5;
    /// `kDLBool`.
    pub const BOOL: u8 = 6;
}

/// `DLDataType`: an element type.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLDataType {
    /// One of [`type_code`].
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes (1 for scalars; vector types have more).
    pub lanes: u16,
}

/// `DLTensor`: a borrowed n-dimensional array.
#[repr(C)]
#[derive(Debug)]
pub struct DLTensor {
    /// The data's base address (for CUDA, a device pointer).
    pub data: *mut c_void,
    /// Where it lies.
    pub device: DLDevice,
    /// Number of dimensions.
    pub ndim: i32,
    /// The element type.
    pub dtype: DLDataType,
    /// `ndim` lengths.
    pub shape: *mut i64,
    /// `ndim` strides in elements, or null for row-major contiguous.
    pub strides: *mut i64,
    /// Bytes from `data` to element 0.
    pub byte_offset: u64,
}

/// `DLManagedTensor`: a [`DLTensor`] with the deleter that releases it (the legacy,
/// unversioned ABI that `"dltensor"` capsules carry).
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    /// The tensor.
    pub dl_tensor: DLTensor,
    /// The producer's context for the deleter.
    pub manager_ctx: *mut c_void,
    /// Called by the consumer once, when done with the tensor (may be null).
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `DLManagedTensorVersioned`: the versioned ABI (`"dltensor_versioned"` capsules),
/// with flags.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    /// The ABI version of the producer.
    pub version: DLPackVersion,
    /// The producer's context for the deleter.
    pub manager_ctx: *mut c_void,
    /// Called by the consumer once, when done with the tensor (may be null).
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    /// `DLPACK_FLAG_BITMASK_*`.
    pub flags: u64,
    /// The tensor.
    pub dl_tensor: DLTensor,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn layouts_match_the_c_header_on_64_bit_targets() {
        assert_eq!(size_of::<DLDevice>(), 8);
        assert_eq!(size_of::<DLDataType>(), 4);
        // data 8, device 8, ndim 4, dtype 4, shape 8, strides 8, byte_offset 8.
        assert_eq!(size_of::<DLTensor>(), 48);
        assert_eq!(offset_of!(DLTensor, ndim), 16);
        assert_eq!(offset_of!(DLTensor, dtype), 20);
        assert_eq!(offset_of!(DLTensor, shape), 24);
        assert_eq!(offset_of!(DLTensor, byte_offset), 40);
        assert_eq!(size_of::<DLManagedTensor>(), 64);
        assert_eq!(offset_of!(DLManagedTensor, deleter), 56);
        assert_eq!(offset_of!(DLManagedTensorVersioned, flags), 24);
        assert_eq!(offset_of!(DLManagedTensorVersioned, dl_tensor), 32);
        assert_eq!(size_of::<DLManagedTensorVersioned>(), 80);
        assert_eq!(align_of::<DLManagedTensor>(), 8);
    }
}
