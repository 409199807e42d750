//! An array's memory as the operations hand it to queued work: the whole buffer as a
//! [`DeviceRange`] (which carries the allocation's use log) and the byte offset of
//! element 0. Addresses come only from [`ArrayMemory::use_on`], which records the use.

use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::{Access, DeviceRange, InUse, Stream};

use crate::error::Result;

/// The memory of one array operand.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ArrayMemory<'a> {
    /// The whole buffer behind the array and its views.
    pub(crate) range: DeviceRange<'a>,
    /// Bytes from the buffer's start to element 0 (elements at negative strides lie
    /// below it, inside the buffer).
    pub(crate) offset: usize,
}

impl<'a> ArrayMemory<'a> {
    /// The address of element 0 for work about to be queued on `stream`, recording the
    /// use in the allocation's log.
    #[inline]
    pub(crate) fn use_on(&self, stream: &Stream, access: Access) -> Result<InUse<'a>> {
        Ok(self
            .range
            .use_on(stream, access)?
            .offset(self.offset as u64))
    }

    /// `bytes` bytes from element 0 (a contiguous array's elements), checked against the
    /// buffer.
    pub(crate) fn elements(&self, bytes: usize) -> Result<DeviceRange<'a>> {
        Ok(self.range.sub(self.offset, bytes)?)
    }

    /// The address of element 0, for alignment and identity checks only (work takes it
    /// from [`ArrayMemory::use_on`]).
    fn element0(&self) -> CUdeviceptr {
        self.range.address() + self.offset as u64
    }

    /// True when element 0 sits at a multiple of `align` bytes.
    pub(crate) fn is_aligned(&self, align: usize) -> bool {
        align == 0 || self.element0() % align as u64 == 0
    }

    /// True when both have element 0 at the same address.
    pub(crate) fn same_start(&self, other: &ArrayMemory<'_>) -> bool {
        self.element0() == other.element0()
    }

    /// True when the two buffers share a byte.
    pub(crate) fn overlaps(&self, other: &ArrayMemory<'_>) -> bool {
        self.range.overlaps(&other.range)
    }
}
