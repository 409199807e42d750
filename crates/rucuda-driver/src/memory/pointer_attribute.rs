//! The keys of `cuPointerGetAttribute` (PyCUDA's `pointer_attribute`).

use rucuda_driver_sys::CUpointer_attribute;

raw_enum! {
    /// A pointer attribute (PyCUDA's `pointer_attribute`): the keys of
    /// `cuPointerGetAttribute`, for code that queries pointers through [`crate::sys`].
    /// Typed pointer queries belong with the memory types in [`crate::memory`].
    ///
    /// ```
    /// use rucuda_driver::constants::PointerAttribute;
    /// assert_eq!(PointerAttribute::MemoryType.raw().0, 2);
    /// ```
    PointerAttribute(CUpointer_attribute) {
        /// The context of the allocation (PyCUDA's `CONTEXT`).
        Context = CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT, "CU_POINTER_ATTRIBUTE_CONTEXT";
        /// Host, device, array or unified (PyCUDA's `MEMORY_TYPE`).
        MemoryType = CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, "CU_POINTER_ATTRIBUTE_MEMORY_TYPE";
        /// The device address (PyCUDA's `DEVICE_POINTER`).
        DevicePointer = CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_POINTER, "CU_POINTER_ATTRIBUTE_DEVICE_POINTER";
        /// The host address (PyCUDA's `HOST_POINTER`).
        HostPointer = CUpointer_attribute::CU_POINTER_ATTRIBUTE_HOST_POINTER, "CU_POINTER_ATTRIBUTE_HOST_POINTER";
        /// Whether the memory is managed (unified).
        IsManaged = CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED, "CU_POINTER_ATTRIBUTE_IS_MANAGED";
        /// The device ordinal of the allocation.
        DeviceOrdinal = CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, "CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL";
        /// Start address of the whole allocation.
        RangeStartAddr = CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, "CU_POINTER_ATTRIBUTE_RANGE_START_ADDR";
        /// Size of the whole allocation.
        RangeSize = CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_SIZE, "CU_POINTER_ATTRIBUTE_RANGE_SIZE";
        /// Whether the memory is mapped.
        Mapped = CUpointer_attribute::CU_POINTER_ATTRIBUTE_MAPPED, "CU_POINTER_ATTRIBUTE_MAPPED";
        /// The memory pool the allocation came from.
        MempoolHandle = CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, "CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE";
    }
}
