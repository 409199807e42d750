//! [`PitchedDeviceBuffer`]: a 2D device allocation whose rows are padded to a pitch the
//! driver chooses for coalesced access (`cuMemAllocPitch`, PyCUDA's `mem_alloc_pitch`).

use rucuda_driver_sys::CUdeviceptr;

use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::memory::kernel_arg::memory_kernel_arg;
use crate::memory::memset::{
    memset_d2d16, memset_d2d16_async, memset_d2d32, memset_d2d32_async, memset_d2d8,
    memset_d2d8_async,
};
use crate::memory::pointer::DevicePtrMut;
use crate::memory::tracking::DevicePtr;
use crate::memory::tracking::{Access, DeviceRange, UseLog};
use crate::streams::stream::Stream;

/// `height` rows of `width_bytes` bytes, each starting `pitch` bytes after the previous
/// (PyCUDA's `(DeviceAllocation, pitch)` pair). Kernels take it as a pointer to row 0
/// (`&buf`, `&mut buf`); pass the pitch alongside. Freed with `cuMemFree` when dropped.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let mut img = mem_alloc_pitch(&ctx, 1000, 600, 4)?;
/// assert!(img.pitch() >= 1000);
/// img.fill_d32(0x3f80_0000)?; // 1.0f32 in every 4-byte cell of every row
/// # Ok::<(), Error>(())
/// ```
pub struct PitchedDeviceBuffer {
    ptr: CUdeviceptr,
    pitch: usize,
    width_bytes: usize,
    height: usize,
    ctx: Context,
    uses: UseLog,
}

impl std::fmt::Debug for PitchedDeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PitchedDeviceBuffer")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("pitch", &self.pitch)
            .field("width_bytes", &self.width_bytes)
            .field("height", &self.height)
            .finish()
    }
}

/// Allocates `height` rows of at least `width_bytes` bytes, padded so that elements of
/// `element_size` bytes (4, 8 or 16) are accessed coalesced (PyCUDA's `mem_alloc_pitch`).
pub fn mem_alloc_pitch(
    ctx: &Context,
    width_bytes: usize,
    height: usize,
    element_size: u32,
) -> Result<PitchedDeviceBuffer> {
    if !matches!(element_size, 4 | 8 | 16) {
        return Err(Error::invalid(format!(
            "pitched allocations take an element size of 4, 8 or 16 bytes, not {element_size}"
        )));
    }
    if width_bytes == 0 || height == 0 {
        return Err(Error::invalid(format!(
            "pitched allocation of {width_bytes} x {height} bytes is empty"
        )));
    }
    ctx.bind_verified()?;
    let (mut ptr, mut pitch): (CUdeviceptr, usize) = (0, 0);
    // SAFETY: writes one pointer and one size; freed on drop.
    unsafe {
        call!(cuMemAllocPitch_v2(
            &mut ptr,
            &mut pitch,
            width_bytes,
            height,
            element_size
        ))?
    };
    let buf = PitchedDeviceBuffer {
        ptr,
        pitch,
        width_bytes,
        height,
        ctx: ctx.clone(),
        uses: UseLog::new(),
    };
    if pitch < width_bytes || pitch.checked_mul(height).is_none() {
        return Err(Error::invalid(format!(
            "cuMemAllocPitch returned pitch {pitch} for rows of {width_bytes} bytes"
        )));
    }
    Ok(buf)
}

impl PitchedDeviceBuffer {
    /// Bytes from the start of one row to the start of the next.
    #[inline]
    pub fn pitch(&self) -> usize {
        self.pitch
    }

    /// The usable bytes of each row (as asked).
    #[inline]
    pub fn width_bytes(&self) -> usize {
        self.width_bytes
    }

    /// Number of rows.
    #[inline]
    pub fn height(&self) -> usize {
        self.height
    }

    /// The context it belongs to.
    #[inline]
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The device address of row `row`.
    pub fn row_ptr(&self, row: usize) -> Result<CUdeviceptr> {
        if row >= self.height {
            return Err(Error::invalid(format!(
                "row {row} of a pitched buffer of {} rows",
                self.height
            )));
        }
        Ok(self.ptr + (row * self.pitch) as u64)
    }

    fn cells(&self, width: usize) -> Result<usize> {
        if self.width_bytes % width != 0 {
            return Err(Error::invalid(format!(
                "rows of {} bytes are not a whole number of {width}-byte values",
                self.width_bytes
            )));
        }
        Ok(self.width_bytes / width)
    }

    /// Sets every usable byte of every row to `value` (padding untouched).
    pub fn fill_d8(&mut self, value: u8) -> Result<()> {
        let ctx = self.ctx.clone();
        let (pitch, w, h) = (self.pitch, self.width_bytes, self.height);
        memset_d2d8(&ctx, self, pitch, value, w, h)
    }

    /// Sets every 16-bit cell of every row to `value`; the width must be even.
    pub fn fill_d16(&mut self, value: u16) -> Result<()> {
        let ctx = self.ctx.clone();
        let (pitch, w, h) = (self.pitch, self.cells(2)?, self.height);
        memset_d2d16(&ctx, self, pitch, value, w, h)
    }

    /// Sets every 32-bit cell of every row to `value`; the width must be a multiple of 4.
    pub fn fill_d32(&mut self, value: u32) -> Result<()> {
        let ctx = self.ctx.clone();
        let (pitch, w, h) = (self.pitch, self.cells(4)?, self.height);
        memset_d2d32(&ctx, self, pitch, value, w, h)
    }

    /// [`PitchedDeviceBuffer::fill_d8`] ordered on `stream`.
    pub fn fill_d8_async(&mut self, value: u8, stream: &Stream) -> Result<()> {
        let (pitch, w, h) = (self.pitch, self.width_bytes, self.height);
        memset_d2d8_async(self, pitch, value, w, h, stream)
    }

    /// [`PitchedDeviceBuffer::fill_d16`] ordered on `stream`.
    pub fn fill_d16_async(&mut self, value: u16, stream: &Stream) -> Result<()> {
        let (pitch, w, h) = (self.pitch, self.cells(2)?, self.height);
        memset_d2d16_async(self, pitch, value, w, h, stream)
    }

    /// [`PitchedDeviceBuffer::fill_d32`] ordered on `stream`.
    pub fn fill_d32_async(&mut self, value: u32, stream: &Stream) -> Result<()> {
        let (pitch, w, h) = (self.pitch, self.cells(4)?, self.height);
        memset_d2d32_async(self, pitch, value, w, h, stream)
    }

    fn release(&self) -> Result<()> {
        // Where the wait fails the memory is leaked rather than freed under queued work.
        self.uses.wait_on_host(Access::Write)?;
        self.ctx.make_current()?;
        // SAFETY: allocated with cuMemAllocPitch, freed once; no recorded use is pending.
        unsafe { call!(cuMemFree_v2(self.ptr)) }
    }

    /// Frees now and returns any error (instead of queueing it on the context).
    pub fn free(self) -> Result<()> {
        let mut me = std::mem::ManuallyDrop::new(self);
        let r = me.release();
        // SAFETY: `me` is never dropped, so the context handle is dropped exactly once.
        unsafe {
            std::ptr::drop_in_place(&mut me.ctx);
            std::ptr::drop_in_place(&mut me.uses);
        }
        r
    }
}

impl Drop for PitchedDeviceBuffer {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            self.ctx.defer_error(e);
        }
    }
}

impl DevicePtr for PitchedDeviceBuffer {
    #[inline]
    fn device_range(&self) -> DeviceRange<'_> {
        // SAFETY: the memory lives as long as `self`; `uses` is its one log.
        unsafe { DeviceRange::new(self.ptr, self.pitch * self.height, &self.uses) }
    }
}

impl DevicePtrMut for PitchedDeviceBuffer {}

memory_kernel_arg!(Read; [] &PitchedDeviceBuffer);
memory_kernel_arg!(Write; [] &mut PitchedDeviceBuffer);
