//! What an address refers to: pointer attributes (`cuPointerGetAttribute`, PyCUDA's
//! `memory_type` and friends).

use std::ffi::c_void;

use rucuda_driver_sys::{CUcontext, CUdeviceptr, CUpointer_attribute};

use crate::context::Context;
use crate::error::{call, Result};

/// The kind of memory an address refers to (PyCUDA's `memory_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryType {
    /// Host memory (page-locked or registered).
    Host,
    /// Device memory.
    Device,
    /// A CUDA array.
    Array,
    /// Unified device or host memory.
    Unified,
    /// A value this version of rucuda does not know.
    Unknown(u32),
}

impl MemoryType {
    /// The type for a raw `CUmemorytype` value.
    ///
    /// ```
    /// use rucuda_driver::MemoryType;
    /// assert_eq!(MemoryType::from_raw(2), MemoryType::Device);
    /// assert_eq!(MemoryType::from_raw(99), MemoryType::Unknown(99));
    /// ```
    pub fn from_raw(raw: u32) -> MemoryType {
        match raw {
            1 => MemoryType::Host,
            2 => MemoryType::Device,
            3 => MemoryType::Array,
            4 => MemoryType::Unified,
            v => MemoryType::Unknown(v),
        }
    }

    /// The raw `CUmemorytype` value.
    pub fn raw(self) -> u32 {
        match self {
            MemoryType::Host => 1,
            MemoryType::Device => 2,
            MemoryType::Array => 3,
            MemoryType::Unified => 4,
            MemoryType::Unknown(v) => v,
        }
    }
}

/// What the driver knows about an address (`cuPointerGetAttribute`). Attributes that do
/// not apply to this kind of memory are `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointerAttributes {
    /// Where the memory lives. Managed memory may report [`MemoryType::Host`] or
    /// [`MemoryType::Device`] whatever its current location; see `is_managed`.
    pub memory_type: MemoryType,
    /// The context it was allocated or registered in (raw handle).
    pub context: Option<CUcontext>,
    /// The address kernels of the current context use for it.
    pub device_pointer: Option<CUdeviceptr>,
    /// The address the host uses for it (host and managed memory).
    pub host_pointer: Option<*mut c_void>,
    /// Whether it is managed (unified) memory.
    pub is_managed: bool,
    /// A process-wide unique id of the allocation.
    pub buffer_id: Option<u64>,
    /// The first address of the allocation containing it.
    pub range_start: Option<CUdeviceptr>,
    /// The size in bytes of the allocation containing it.
    pub range_size: Option<usize>,
    /// The ordinal of the device it was allocated on or registered with.
    pub device_ordinal: Option<i32>,
}

/// One attribute, read into an 8-byte zeroed slot (attributes are at most 8 bytes:
/// pointers, `size_t`, `unsigned long long`, `int`, `unsigned int` or `bool`; on this
/// little-endian 64-bit target the value's low bytes land first, the rest stay zero).
fn attribute(attr: CUpointer_attribute, ptr: CUdeviceptr) -> Result<u64> {
    let mut slot = 0u64;
    // SAFETY: every pointer attribute this module reads is at most 8 bytes, and `slot` is
    // 8 writable bytes.
    unsafe {
        call!(cuPointerGetAttribute(
            (&mut slot as *mut u64).cast(),
            attr,
            ptr
        ))?
    };
    Ok(slot)
}

/// The memory type of `ptr` (device or host address): PyCUDA's `memory_type`. Fails
/// with `CUDA_ERROR_INVALID_VALUE` for memory CUDA does not know (plain pageable memory).
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let buf = DeviceBuffer::<f32>::zeros(&ctx, 16)?;
/// let ptr = buf.device_range().address(); // a query queues no work
/// assert_eq!(pointer_memory_type(&ctx, ptr)?, MemoryType::Device);
/// # Ok::<(), Error>(())
/// ```
pub fn pointer_memory_type(ctx: &Context, ptr: CUdeviceptr) -> Result<MemoryType> {
    ctx.bind()?;
    attribute(CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr)
        .map(|v| MemoryType::from_raw(v as u32))
}

/// Every attribute of `ptr` that applies to it, with `ctx` current (device pointers are
/// those of `ctx`). Host addresses are passed as `p as CUdeviceptr`.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let buf = DeviceBuffer::<f32>::zeros(&ctx, 16)?;
/// let ptr = buf.device_range().address(); // a query queues no work
/// let attrs = pointer_attributes(&ctx, ptr)?;
/// assert_eq!(attrs.context, Some(ctx.raw()));
/// assert!(!attrs.is_managed);
/// # Ok::<(), Error>(())
/// ```
pub fn pointer_attributes(ctx: &Context, ptr: CUdeviceptr) -> Result<PointerAttributes> {
    use CUpointer_attribute as A;
    let memory_type = pointer_memory_type(ctx, ptr)?;
    let opt = |a: A| attribute(a, ptr).ok();
    Ok(PointerAttributes {
        memory_type,
        context: opt(A::CU_POINTER_ATTRIBUTE_CONTEXT)
            .filter(|&v| v != 0)
            .map(|v| v as usize as CUcontext),
        device_pointer: opt(A::CU_POINTER_ATTRIBUTE_DEVICE_POINTER),
        host_pointer: opt(A::CU_POINTER_ATTRIBUTE_HOST_POINTER)
            .filter(|&v| v != 0)
            .map(|v| v as usize as *mut c_void),
        is_managed: opt(A::CU_POINTER_ATTRIBUTE_IS_MANAGED).is_some_and(|v| v != 0),
        buffer_id: opt(A::CU_POINTER_ATTRIBUTE_BUFFER_ID),
        range_start: opt(A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR),
        range_size: opt(A::CU_POINTER_ATTRIBUTE_RANGE_SIZE).map(|v| v as usize),
        device_ordinal: opt(A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL).map(|v| v as u32 as i32),
    })
}

/// True when CUDA knows the host range starting at `ptr` (page-locked, registered or
/// managed memory: it has an owning context or is managed), so copies from it need no
/// staging. Needs a current context.
pub(crate) fn host_memory_is_known(ptr: *const u8) -> bool {
    use CUpointer_attribute as A;
    let ptr = ptr as usize as CUdeviceptr;
    attribute(A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr).is_ok()
        && (attribute(A::CU_POINTER_ATTRIBUTE_CONTEXT, ptr).is_ok_and(|c| c != 0)
            || attribute(A::CU_POINTER_ATTRIBUTE_IS_MANAGED, ptr).is_ok_and(|m| m != 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_type_round_trips_known_and_unknown_values() {
        for raw in 0..8 {
            assert_eq!(MemoryType::from_raw(raw).raw(), raw);
        }
        assert_eq!(MemoryType::from_raw(1), MemoryType::Host);
        assert_eq!(MemoryType::from_raw(4), MemoryType::Unified);
        assert_eq!(
            MemoryType::from_raw(rucuda_driver_sys::CUmemorytype::CU_MEMORYTYPE_ARRAY.0),
            MemoryType::Array
        );
    }
}
