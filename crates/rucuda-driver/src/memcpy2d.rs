//! Structured copies: [`Memcpy2D`], [`Memcpy3D`] and [`Memcpy3DPeer`] (PyCUDA's classes of
//! the same names) between host memory, device memory, unified addresses and arrays,
//! with pitches and offsets, checked against every size they can know before the driver
//! sees them.
//!
//! Field names follow PyCUDA: `src_x_in_bytes`, `src_y`, `src_z`, `src_pitch`,
//! `src_height` (rows per slice of linear memory), the same for `dst_`, and
//! `width_in_bytes`, `height`, `depth` for the copied box. A pitch left unset is the
//! tight one (`width_in_bytes`); a slice height left unset is `height`. Offsets and
//! pitches of an array side are in the array's own layout (pitches are ignored).

use std::ffi::c_void;
use std::marker::PhantomData;

use rucuda_driver_sys::{
    CUarray, CUdeviceptr, CUmemorytype, CUDA_MEMCPY2D, CUDA_MEMCPY3D, CUDA_MEMCPY3D_PEER,
};

use crate::array::{ArrayDescriptor3D, CudaArray};
use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::memory::tracking::finish_legacy_stream;
use crate::memory::{Access, DeviceBuffer, DevicePtr, DeviceViewMut, InUse, UseLog};
use crate::repr::DeviceRepr;
use crate::stream::Stream;

/// Device memory a copy may write: owned buffers and mutable views (read-only
/// [`crate::DeviceView`]s are not).
pub trait DeviceWritable: DevicePtr {}
impl<T: DeviceRepr> DeviceWritable for DeviceBuffer<T> {}
impl<T> DeviceWritable for DeviceViewMut<'_, T> {}

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
    fn describe(&self) -> &'static str {
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
    const UNSET: Side<'static> = Side {
        end: Endpoint::Unset,
        x_in_bytes: 0,
        y: 0,
        z: 0,
        pitch: None,
        height: None,
    };
}

/// The raw form of one side, common to the three driver structs.
struct RawSide {
    memory_type: CUmemorytype,
    host: *mut c_void,
    device: CUdeviceptr,
    array: CUarray,
    pitch: usize,
    height: usize,
}

/// The box to copy and its two sides.
#[derive(Clone, Copy)]
pub(crate) struct Geometry<'a> {
    pub(crate) src: Side<'a>,
    pub(crate) dst: Side<'a>,
    pub(crate) width_in_bytes: usize,
    pub(crate) height: usize,
    pub(crate) depth: usize,
}

impl<'a> Geometry<'a> {
    pub(crate) const fn new() -> Self {
        Geometry {
            src: Side::UNSET,
            dst: Side::UNSET,
            width_in_bytes: 0,
            height: 0,
            depth: 1,
        }
    }

    fn is_empty(&self) -> bool {
        self.width_in_bytes == 0 || self.height == 0 || self.depth == 0
    }

    /// Checks both sides against the box; `three_d` allows z offsets and 3D arrays.
    pub(crate) fn check(&self, op: &str, three_d: bool) -> Result<()> {
        for (which, side) in [("src", &self.src), ("dst", &self.dst)] {
            if let Endpoint::Unset = side.end {
                let verb = if which == "src" {
                    "source"
                } else {
                    "destination"
                };
                return Err(Error::invalid(format!(
                    "{op}: no {verb} set (call {which}_host, {which}_device, {which}_unified \
                     or {which}_array)"
                )));
            }
        }
        if self.is_empty() {
            return Ok(());
        }
        self.check_side(op, "src", &self.src, three_d)?;
        self.check_side(op, "dst", &self.dst, three_d)
    }

    fn check_side(&self, op: &str, which: &str, side: &Side<'_>, three_d: bool) -> Result<()> {
        let len = match side.end {
            Endpoint::Unset => return Ok(()),
            Endpoint::Array(a) => {
                return check_array_box(op, which, a.desc(), side, self, three_d);
            }
            Endpoint::Host { len, .. }
            | Endpoint::Device { len, .. }
            | Endpoint::Unified { len, .. } => len,
        };
        check_linear_box(op, which, side, len, self)
    }

    /// Orders a copy on `stream` after conflicting work on the device sides and records
    /// its use.
    /// Keep the returned uses until the copy is queued.
    fn use_sides_on(&self, stream: &Stream) -> Result<[Option<InUse<'a>>; 2]> {
        let mut uses = [None, None];
        for (used, (side, access)) in uses
            .iter_mut()
            .zip([(&self.src, Access::Read), (&self.dst, Access::Write)])
        {
            if let Endpoint::Device {
                ptr,
                log: Some(log),
                ..
            } = side.end
            {
                *used = Some(log.note(stream, access, ptr)?);
            }
        }
        Ok(uses)
    }

    fn raw_side(&self, side: &Side<'_>) -> RawSide {
        let (pitch, height) = (
            side.pitch.unwrap_or(self.width_in_bytes),
            side.height.unwrap_or(self.height),
        );
        let mut raw = RawSide {
            memory_type: CUmemorytype(0),
            host: std::ptr::null_mut(),
            device: 0,
            array: std::ptr::null_mut(),
            pitch,
            height,
        };
        match side.end {
            Endpoint::Unset => {}
            Endpoint::Host { ptr, .. } => {
                raw.memory_type = CUmemorytype::CU_MEMORYTYPE_HOST;
                raw.host = ptr;
            }
            Endpoint::Device { ptr, .. } => {
                raw.memory_type = CUmemorytype::CU_MEMORYTYPE_DEVICE;
                raw.device = ptr;
            }
            Endpoint::Unified { ptr, .. } => {
                raw.memory_type = CUmemorytype::CU_MEMORYTYPE_UNIFIED;
                raw.device = ptr;
            }
            Endpoint::Array(a) => {
                raw.memory_type = CUmemorytype::CU_MEMORYTYPE_ARRAY;
                raw.array = a.raw();
                raw.pitch = 0;
                raw.height = 0;
            }
        }
        raw
    }

    fn raw_2d(&self) -> CUDA_MEMCPY2D {
        let (s, d) = (self.raw_side(&self.src), self.raw_side(&self.dst));
        CUDA_MEMCPY2D {
            srcXInBytes: self.src.x_in_bytes,
            srcY: self.src.y,
            srcMemoryType: s.memory_type,
            srcHost: s.host.cast_const(),
            srcDevice: s.device,
            srcArray: s.array,
            srcPitch: s.pitch,
            dstXInBytes: self.dst.x_in_bytes,
            dstY: self.dst.y,
            dstMemoryType: d.memory_type,
            dstHost: d.host,
            dstDevice: d.device,
            dstArray: d.array,
            dstPitch: d.pitch,
            WidthInBytes: self.width_in_bytes,
            Height: self.height,
        }
    }

    fn raw_3d(&self) -> CUDA_MEMCPY3D {
        let (s, d) = (self.raw_side(&self.src), self.raw_side(&self.dst));
        CUDA_MEMCPY3D {
            srcXInBytes: self.src.x_in_bytes,
            srcY: self.src.y,
            srcZ: self.src.z,
            srcLOD: 0,
            srcMemoryType: s.memory_type,
            srcHost: s.host.cast_const(),
            srcDevice: s.device,
            srcArray: s.array,
            reserved0: std::ptr::null_mut(),
            srcPitch: s.pitch,
            srcHeight: s.height,
            dstXInBytes: self.dst.x_in_bytes,
            dstY: self.dst.y,
            dstZ: self.dst.z,
            dstLOD: 0,
            dstMemoryType: d.memory_type,
            dstHost: d.host,
            dstDevice: d.device,
            dstArray: d.array,
            reserved1: std::ptr::null_mut(),
            dstPitch: d.pitch,
            dstHeight: d.height,
            WidthInBytes: self.width_in_bytes,
            Height: self.height,
            Depth: self.depth,
        }
    }

    fn raw_peer(&self, src_ctx: &Context, dst_ctx: &Context) -> CUDA_MEMCPY3D_PEER {
        let (s, d) = (self.raw_side(&self.src), self.raw_side(&self.dst));
        CUDA_MEMCPY3D_PEER {
            srcXInBytes: self.src.x_in_bytes,
            srcY: self.src.y,
            srcZ: self.src.z,
            srcLOD: 0,
            srcMemoryType: s.memory_type,
            srcHost: s.host.cast_const(),
            srcDevice: s.device,
            srcArray: s.array,
            srcContext: src_ctx.raw(),
            srcPitch: s.pitch,
            srcHeight: s.height,
            dstXInBytes: self.dst.x_in_bytes,
            dstY: self.dst.y,
            dstZ: self.dst.z,
            dstLOD: 0,
            dstMemoryType: d.memory_type,
            dstHost: d.host,
            dstDevice: d.device,
            dstArray: d.array,
            dstContext: dst_ctx.raw(),
            dstPitch: d.pitch,
            dstHeight: d.height,
            WidthInBytes: self.width_in_bytes,
            Height: self.height,
            Depth: self.depth,
        }
    }

    /// Arrays on either side must belong to `src_ctx` / `dst_ctx`.
    fn check_contexts(&self, op: &str, src_ctx: &Context, dst_ctx: &Context) -> Result<()> {
        for (which, side, ctx) in [
            ("source", &self.src, src_ctx),
            ("destination", &self.dst, dst_ctx),
        ] {
            if let Endpoint::Array(a) = side.end {
                if a.context() != ctx {
                    return Err(Error::invalid(format!(
                        "{op}: the {which} array belongs to another context than the copy's \
                         {which} context"
                    )));
                }
            }
        }
        Ok(())
    }
}

fn overflow(op: &str) -> Error {
    Error::invalid(format!("{op}: copy extent overflows usize"))
}

/// Checks a box in linear memory of `len` bytes.
pub(crate) fn check_linear_box(
    op: &str,
    which: &str,
    side: &Side<'_>,
    len: usize,
    g: &Geometry<'_>,
) -> Result<()> {
    let (w, h, d) = (g.width_in_bytes, g.height, g.depth);
    let (x, y, z) = (side.x_in_bytes, side.y, side.z);
    let pitch = side.pitch.unwrap_or(w);
    let row_end = x.checked_add(w).ok_or_else(|| overflow(op))?;
    if row_end > pitch {
        return Err(Error::invalid(format!(
            "{op}: {which}_pitch {pitch}{} is less than {which}_x_in_bytes + width_in_bytes = \
             {x} + {w} = {row_end}",
            if side.pitch.is_none() {
                " (unset, so width_in_bytes)"
            } else {
                ""
            }
        )));
    }
    let slice_rows = side.height.unwrap_or(h);
    if (d > 1 || z > 0) && y.checked_add(h).ok_or_else(|| overflow(op))? > slice_rows {
        return Err(Error::invalid(format!(
            "{op}: {which}_y + height = {y} + {h} exceeds {which}_height {slice_rows}{} \
             (rows per slice of linear memory)",
            if side.height.is_none() {
                " (unset, so height)"
            } else {
                ""
            }
        )));
    }
    // Byte just past the last one the box touches.
    let last_row = (|| {
        let row = z
            .checked_add(d - 1)?
            .checked_mul(slice_rows)?
            .checked_add(y)?
            .checked_add(h - 1)?;
        row.checked_mul(pitch)?.checked_add(row_end)
    })()
    .ok_or_else(|| overflow(op))?;
    if last_row > len {
        return Err(Error::invalid(format!(
            "{op}: the copy reaches byte {last_row} of the {} {}, which has {len} bytes \
             ({which}_x_in_bytes {x}, {which}_y {y}, {which}_z {z}, {which}_pitch {pitch}, \
             {which}_height {slice_rows}, width_in_bytes {w}, height {h}, depth {d})",
            if which == "src" {
                "source"
            } else {
                "destination"
            },
            side.end.describe()
        )));
    }
    Ok(())
}

/// Checks a box inside an array of shape `desc`.
pub(crate) fn check_array_box(
    op: &str,
    which: &str,
    desc: &ArrayDescriptor3D,
    side: &Side<'_>,
    g: &Geometry<'_>,
    three_d: bool,
) -> Result<()> {
    if !three_d && desc.depth != 0 {
        return Err(Error::invalid(format!(
            "{op}: the {which} array has depth {} (3D, layered or cubemap); use Memcpy3D",
            desc.depth
        )));
    }
    let elem = desc.element_bytes()?;
    let row = desc.row_bytes()?;
    let (w, h, d) = (g.width_in_bytes, g.height, g.depth);
    let (x, y, z) = (side.x_in_bytes, side.y, side.z);
    if x % elem != 0 {
        return Err(Error::invalid(format!(
            "{op}: {which}_x_in_bytes {x} is not a multiple of the array's element size {elem}"
        )));
    }
    if w % elem != 0 {
        return Err(Error::invalid(format!(
            "{op}: width_in_bytes {w} is not a multiple of the {which} array's element size {elem}"
        )));
    }
    if x.checked_add(w).ok_or_else(|| overflow(op))? > row {
        return Err(Error::invalid(format!(
            "{op}: {which}_x_in_bytes + width_in_bytes = {x} + {w} exceeds the {which} array's \
             row of {row} bytes ({} elements of {elem} bytes)",
            desc.width
        )));
    }
    if y.checked_add(h).ok_or_else(|| overflow(op))? > desc.rows() {
        return Err(Error::invalid(format!(
            "{op}: {which}_y + height = {y} + {h} exceeds the {which} array's {} rows",
            desc.rows()
        )));
    }
    if z.checked_add(d).ok_or_else(|| overflow(op))? > desc.slices() {
        return Err(Error::invalid(format!(
            "{op}: {which}_z + depth = {z} + {d} exceeds the {which} array's {} slices",
            desc.slices()
        )));
    }
    Ok(())
}

fn host_endpoint<T: DeviceRepr>(data: &[T]) -> Endpoint<'static> {
    Endpoint::Host {
        ptr: data.as_ptr().cast_mut().cast(),
        len: std::mem::size_of_val(data),
    }
}

fn host_endpoint_mut<T: DeviceRepr>(data: &mut [T]) -> Endpoint<'static> {
    Endpoint::Host {
        ptr: data.as_mut_ptr().cast(),
        len: std::mem::size_of_val(data),
    }
}

fn unified_endpoint<T: DeviceRepr>(data: &[T]) -> Endpoint<'static> {
    Endpoint::Unified {
        ptr: data.as_ptr() as CUdeviceptr,
        len: std::mem::size_of_val(data),
    }
}

fn unified_endpoint_mut<T: DeviceRepr>(data: &mut [T]) -> Endpoint<'static> {
    Endpoint::Unified {
        ptr: data.as_mut_ptr() as CUdeviceptr,
        len: std::mem::size_of_val(data),
    }
}

fn device_endpoint<P: DevicePtr + ?Sized>(mem: &P) -> Endpoint<'_> {
    let range = mem.device_range();
    Endpoint::Device {
        ptr: range.address(),
        len: range.byte_len(),
        log: range.log(),
    }
}

/// The setters every copy has (PyCUDA's `set_src_*`, `set_dst_*` and attributes).
macro_rules! copy_setters {
    () => {
        /// Copies from host memory (PyCUDA's `set_src_host`).
        pub fn src_host<T: DeviceRepr>(mut self, data: &'a [T]) -> Self {
            self.g.src.end = host_endpoint(data);
            self
        }

        /// Copies from device memory: a buffer or a view (PyCUDA's `set_src_device`).
        pub fn src_device<P: DevicePtr + ?Sized>(mut self, mem: &'a P) -> Self {
            self.g.src.end = device_endpoint(mem);
            self
        }

        /// Copies from memory named by its unified address: pinned, managed or ordinary
        /// host memory, the driver finds out which (PyCUDA's `set_src_unified`).
        pub fn src_unified<T: DeviceRepr>(mut self, data: &'a [T]) -> Self {
            self.g.src.end = unified_endpoint(data);
            self
        }

        /// Copies from an array (PyCUDA's `set_src_array`).
        pub fn src_array(mut self, array: &'a CudaArray) -> Self {
            self.g.src.end = Endpoint::Array(array);
            self
        }

        /// Copies into host memory (PyCUDA's `set_dst_host`).
        pub fn dst_host<T: DeviceRepr>(mut self, data: &'a mut [T]) -> Self {
            self.g.dst.end = host_endpoint_mut(data);
            self
        }

        /// Copies into device memory: a buffer or a mutable view (PyCUDA's `set_dst_device`).
        pub fn dst_device<P: DeviceWritable + ?Sized>(mut self, mem: &'a mut P) -> Self {
            self.g.dst.end = device_endpoint(&*mem);
            self
        }

        /// Copies into memory named by its unified address (PyCUDA's `set_dst_unified`).
        pub fn dst_unified<T: DeviceRepr>(mut self, data: &'a mut [T]) -> Self {
            self.g.dst.end = unified_endpoint_mut(data);
            self
        }

        /// Copies into an array (PyCUDA's `set_dst_array`).
        pub fn dst_array(mut self, array: &'a mut CudaArray) -> Self {
            self.g.dst.end = Endpoint::Array(&*array);
            self
        }

        /// Byte offset of the box in each source row (default 0).
        pub fn src_x_in_bytes(mut self, x: usize) -> Self {
            self.g.src.x_in_bytes = x;
            self
        }

        /// Row offset of the box in the source (default 0).
        pub fn src_y(mut self, y: usize) -> Self {
            self.g.src.y = y;
            self
        }

        /// Bytes from one source row to the next (linear memory only; default
        /// `width_in_bytes`).
        pub fn src_pitch(mut self, pitch: usize) -> Self {
            self.g.src.pitch = Some(pitch);
            self
        }

        /// Byte offset of the box in each destination row (default 0).
        pub fn dst_x_in_bytes(mut self, x: usize) -> Self {
            self.g.dst.x_in_bytes = x;
            self
        }

        /// Row offset of the box in the destination (default 0).
        pub fn dst_y(mut self, y: usize) -> Self {
            self.g.dst.y = y;
            self
        }

        /// Bytes from one destination row to the next (linear memory only; default
        /// `width_in_bytes`).
        pub fn dst_pitch(mut self, pitch: usize) -> Self {
            self.g.dst.pitch = Some(pitch);
            self
        }

        /// Bytes copied from each row.
        pub fn width_in_bytes(mut self, bytes: usize) -> Self {
            self.g.width_in_bytes = bytes;
            self
        }

        /// Rows copied (per slice).
        pub fn height(mut self, rows: usize) -> Self {
            self.g.height = rows;
            self
        }
    };
}

/// The setters of the 3D copies.
macro_rules! copy_setters_3d {
    () => {
        /// Slice offset of the box in the source (default 0).
        pub fn src_z(mut self, z: usize) -> Self {
            self.g.src.z = z;
            self
        }

        /// Rows per slice of linear source memory (default `height`; ignored for arrays).
        pub fn src_height(mut self, rows: usize) -> Self {
            self.g.src.height = Some(rows);
            self
        }

        /// Slice offset of the box in the destination (default 0).
        pub fn dst_z(mut self, z: usize) -> Self {
            self.g.dst.z = z;
            self
        }

        /// Rows per slice of linear destination memory (default `height`; ignored for
        /// arrays).
        pub fn dst_height(mut self, rows: usize) -> Self {
            self.g.dst.height = Some(rows);
            self
        }

        /// Slices copied (default 1).
        pub fn depth(mut self, slices: usize) -> Self {
            self.g.depth = slices;
            self
        }
    };
}

fn check_stream(op: &str, ctx: &Context, stream: &Stream) -> Result<()> {
    if stream.context() != ctx {
        return Err(Error::invalid(format!(
            "{op}: the stream belongs to another context than the copy"
        )));
    }
    Ok(())
}

/// A 2D copy of `height` rows of `width_in_bytes` bytes (PyCUDA's `Memcpy2D`).
///
/// ```no_run
/// use rucuda_driver::{ArrayDescriptor, ArrayFormat, CudaArray, Device, Memcpy2D};
/// let ctx = Device::get(0)?.primary_context()?;
/// // A 16 x 8 block of f32 out of a host image 100 floats wide, at column 4, row 2.
/// let image = vec![0.5f32; 100 * 50];
/// let mut tile = CudaArray::new(&ctx, &ArrayDescriptor::new(16, 8, ArrayFormat::F32, 1))?;
/// Memcpy2D::new(&ctx)
///     .src_host(&image).src_pitch(100 * 4).src_x_in_bytes(4 * 4).src_y(2)
///     .dst_array(&mut tile)
///     .width_in_bytes(16 * 4).height(8)
///     .execute()?;
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub struct Memcpy2D<'a> {
    ctx: Context,
    g: Geometry<'a>,
    _borrows: PhantomData<&'a mut ()>,
}

impl std::fmt::Debug for Memcpy2D<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memcpy2D")
            .field("src", &self.g.src.end.describe())
            .field("dst", &self.g.dst.end.describe())
            .field("width_in_bytes", &self.g.width_in_bytes)
            .field("height", &self.g.height)
            .finish()
    }
}

impl<'a> Memcpy2D<'a> {
    /// An empty copy made in `ctx`: set a source, a destination and the box.
    pub fn new(ctx: &Context) -> Self {
        Memcpy2D {
            ctx: ctx.clone(),
            g: Geometry::new(),
            _borrows: PhantomData,
        }
    }

    copy_setters!();

    /// The checked driver struct.
    pub fn to_raw(&self) -> Result<CUDA_MEMCPY2D> {
        self.g.check("Memcpy2D", false)?;
        self.g.check_contexts("Memcpy2D", &self.ctx, &self.ctx)?;
        Ok(self.g.raw_2d())
    }

    /// Copies and waits (`cuMemcpy2D`; PyCUDA's `__call__()`).
    pub fn execute(&self) -> Result<()> {
        let raw = self.to_raw()?;
        if self.g.is_empty() {
            return Ok(());
        }
        self.ctx.bind()?;
        let _uses = self.g.use_sides_on(&Stream::null(&self.ctx))?;
        // SAFETY: every side was checked to lie inside memory the builder borrows; the
        // legacy stream runs the copy after conflicting work (ordered above).
        unsafe { call!(cuMemcpy2D_v2(&raw))? };
        finish_legacy_stream(&self.ctx)
    }

    /// Copies and waits, tolerating device-side misalignment at a cost in bandwidth
    /// (`cuMemcpy2DUnaligned`; PyCUDA's `__call__(aligned=False)`).
    pub fn execute_unaligned(&self) -> Result<()> {
        let raw = self.to_raw()?;
        if self.g.is_empty() {
            return Ok(());
        }
        self.ctx.bind()?;
        let _uses = self.g.use_sides_on(&Stream::null(&self.ctx))?;
        // SAFETY: as for `execute`.
        unsafe { call!(cuMemcpy2DUnaligned_v2(&raw))? };
        finish_legacy_stream(&self.ctx)
    }

    /// Queues the copy on `stream` (`cuMemcpy2DAsync`; PyCUDA's `__call__(stream)`).
    /// Host memory should be page-locked for the copy to overlap other work.
    ///
    /// # Safety
    /// The copy may still run after this returns, when the borrows have ended: every
    /// side must stay alive, and host memory unread and unwritten by the host (for the
    /// destination) or unwritten (for the source), until the work queued on `stream` so
    /// far has finished.
    pub unsafe fn execute_async(&self, stream: &Stream) -> Result<()> {
        let raw = self.to_raw()?;
        check_stream("Memcpy2D", &self.ctx, stream)?;
        if self.g.is_empty() {
            return Ok(());
        }
        self.ctx.bind()?;
        let _uses = self.g.use_sides_on(stream)?;
        // SAFETY: sides checked; device sides record the use (above); the caller keeps
        // host sides alive and untouched until the stream is done.
        unsafe { call!(cuMemcpy2DAsync_v2(&raw, stream.raw())) }
    }
}

/// A 3D copy of `depth` slices of `height` rows of `width_in_bytes` bytes (PyCUDA's
/// `Memcpy3D`): everything [`Memcpy2D`] has, plus z offsets, rows per slice of linear
/// memory (`src_height`, `dst_height`) and `depth`. It addresses 3D, layered and cubemap
/// arrays (z is the slice, layer or face).
///
/// ```no_run
/// use rucuda_driver::{ArrayDescriptor3D, ArrayFormat, CudaArray, Device, Memcpy3D};
/// let ctx = Device::get(0)?.primary_context()?;
/// let volume = vec![1u16; 32 * 32 * 16];
/// let mut a = CudaArray::new_3d(&ctx, &ArrayDescriptor3D::d3(32, 32, 16, ArrayFormat::U16, 1))?;
/// Memcpy3D::new(&ctx)
///     .src_host(&volume).src_pitch(32 * 2).src_height(32)
///     .dst_array(&mut a)
///     .width_in_bytes(32 * 2).height(32).depth(16)
///     .execute()?;
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub struct Memcpy3D<'a> {
    ctx: Context,
    g: Geometry<'a>,
    _borrows: PhantomData<&'a mut ()>,
}

impl std::fmt::Debug for Memcpy3D<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memcpy3D")
            .field("src", &self.g.src.end.describe())
            .field("dst", &self.g.dst.end.describe())
            .field("width_in_bytes", &self.g.width_in_bytes)
            .field("height", &self.g.height)
            .field("depth", &self.g.depth)
            .finish()
    }
}

impl<'a> Memcpy3D<'a> {
    /// An empty copy made in `ctx` (depth 1): set a source, a destination and the box.
    pub fn new(ctx: &Context) -> Self {
        Memcpy3D {
            ctx: ctx.clone(),
            g: Geometry::new(),
            _borrows: PhantomData,
        }
    }

    copy_setters!();
    copy_setters_3d!();

    /// Copies into `len` bytes of host memory at `ptr` (crate use: filling a `Vec`'s
    /// spare capacity).
    ///
    /// # Safety
    /// `ptr` must be valid for writes of `len` bytes for as long as the copy lives.
    pub(crate) unsafe fn dst_host_raw(mut self, ptr: *mut c_void, len: usize) -> Self {
        self.g.dst.end = Endpoint::Host { ptr, len };
        self
    }

    /// Moves the start of a linear source `bytes` further (crate use: copies in pieces).
    pub(crate) fn advance_src(mut self, bytes: usize) -> Result<Self> {
        self.g.src.end = self.g.src.end.advanced(bytes)?;
        Ok(self)
    }

    /// Moves the start of a linear destination `bytes` further.
    pub(crate) fn advance_dst(mut self, bytes: usize) -> Result<Self> {
        self.g.dst.end = self.g.dst.end.advanced(bytes)?;
        Ok(self)
    }

    /// Turns this copy into a peer copy between `src_ctx` and `dst_ctx`.
    pub fn peer(self, src_ctx: &Context, dst_ctx: &Context) -> Memcpy3DPeer<'a> {
        Memcpy3DPeer {
            src_ctx: src_ctx.clone(),
            dst_ctx: dst_ctx.clone(),
            g: self.g,
            _borrows: PhantomData,
        }
    }

    /// The checked driver struct.
    pub fn to_raw(&self) -> Result<CUDA_MEMCPY3D> {
        self.g.check("Memcpy3D", true)?;
        self.g.check_contexts("Memcpy3D", &self.ctx, &self.ctx)?;
        Ok(self.g.raw_3d())
    }

    /// Copies and waits (`cuMemcpy3D`).
    pub fn execute(&self) -> Result<()> {
        let raw = self.to_raw()?;
        if self.g.is_empty() {
            return Ok(());
        }
        self.ctx.bind()?;
        let _uses = self.g.use_sides_on(&Stream::null(&self.ctx))?;
        // SAFETY: every side was checked to lie inside memory the builder borrows; the
        // legacy stream runs the copy after conflicting work (ordered above).
        unsafe { call!(cuMemcpy3D_v2(&raw))? };
        finish_legacy_stream(&self.ctx)
    }

    /// Queues the copy on `stream` (`cuMemcpy3DAsync`).
    ///
    /// # Safety
    /// As for [`Memcpy2D::execute_async`]: every side must stay alive and untouched by
    /// the host until the work queued on `stream` so far has finished.
    pub unsafe fn execute_async(&self, stream: &Stream) -> Result<()> {
        let raw = self.to_raw()?;
        check_stream("Memcpy3D", &self.ctx, stream)?;
        if self.g.is_empty() {
            return Ok(());
        }
        self.ctx.bind()?;
        let _uses = self.g.use_sides_on(stream)?;
        // SAFETY: sides checked; device sides record the use (above); the caller keeps
        // host sides alive and untouched until the stream is done.
        unsafe { call!(cuMemcpy3DAsync_v2(&raw, stream.raw())) }
    }
}

/// A 3D copy between memory of two contexts, possibly on two devices (PyCUDA's
/// `Memcpy3DPeer`, `cuMemcpy3DPeer`): the members of [`Memcpy3D`] plus the source and
/// destination contexts.
///
/// ```no_run
/// use rucuda_driver::{Device, DeviceBuffer, Memcpy3DPeer};
/// let (c0, c1) = (Device::get(0)?.primary_context()?, Device::get(1)?.primary_context()?);
/// let src = DeviceBuffer::from_slice(&c0, &[1.0f32; 64 * 64])?;
/// let mut dst = DeviceBuffer::<f32>::uninit(&c1, 64 * 64)?;
/// Memcpy3DPeer::new(&c0, &c1)
///     .src_device(&src).dst_device(&mut dst)
///     .width_in_bytes(64 * 4).height(64)
///     .execute()?;
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub struct Memcpy3DPeer<'a> {
    src_ctx: Context,
    dst_ctx: Context,
    g: Geometry<'a>,
    _borrows: PhantomData<&'a mut ()>,
}

impl std::fmt::Debug for Memcpy3DPeer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memcpy3DPeer")
            .field("src", &self.g.src.end.describe())
            .field("dst", &self.g.dst.end.describe())
            .field("src_ctx", &self.src_ctx)
            .field("dst_ctx", &self.dst_ctx)
            .finish()
    }
}

impl<'a> Memcpy3DPeer<'a> {
    /// An empty copy from memory of `src_ctx` to memory of `dst_ctx`.
    pub fn new(src_ctx: &Context, dst_ctx: &Context) -> Self {
        Memcpy3DPeer {
            src_ctx: src_ctx.clone(),
            dst_ctx: dst_ctx.clone(),
            g: Geometry::new(),
            _borrows: PhantomData,
        }
    }

    copy_setters!();
    copy_setters_3d!();

    /// Sets the source's context (PyCUDA's `set_src_context`).
    pub fn src_context(mut self, ctx: &Context) -> Self {
        self.src_ctx = ctx.clone();
        self
    }

    /// Sets the destination's context (PyCUDA's `set_dst_context`).
    pub fn dst_context(mut self, ctx: &Context) -> Self {
        self.dst_ctx = ctx.clone();
        self
    }

    /// The checked driver struct.
    pub fn to_raw(&self) -> Result<CUDA_MEMCPY3D_PEER> {
        self.g.check("Memcpy3DPeer", true)?;
        self.g
            .check_contexts("Memcpy3DPeer", &self.src_ctx, &self.dst_ctx)?;
        Ok(self.g.raw_peer(&self.src_ctx, &self.dst_ctx))
    }

    /// Copies and waits (`cuMemcpy3DPeer`).
    pub fn execute(&self) -> Result<()> {
        let raw = self.to_raw()?;
        if self.g.is_empty() {
            return Ok(());
        }
        self.dst_ctx.bind()?;
        let _uses = self.g.use_sides_on(&Stream::null(&self.dst_ctx))?;
        // SAFETY: every side was checked to lie inside memory the builder borrows; both
        // contexts are alive (held); the legacy stream runs the copy after conflicting
        // work (ordered above).
        unsafe { call!(cuMemcpy3DPeer(&raw))? };
        finish_legacy_stream(&self.dst_ctx)?;
        finish_legacy_stream(&self.src_ctx)
    }

    /// Queues the copy on `stream` (`cuMemcpy3DPeerAsync`).
    ///
    /// # Safety
    /// As for [`Memcpy2D::execute_async`].
    pub unsafe fn execute_async(&self, stream: &Stream) -> Result<()> {
        let raw = self.to_raw()?;
        if self.g.is_empty() {
            return Ok(());
        }
        stream.context().bind()?;
        let _uses = self.g.use_sides_on(stream)?;
        // SAFETY: sides checked; device sides record the use (above); the caller keeps
        // host sides alive and untouched until the stream is done.
        unsafe { call!(cuMemcpy3DPeerAsync(&raw, stream.raw())) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::ArrayFormat;

    fn host(len: usize) -> Endpoint<'static> {
        Endpoint::Host {
            ptr: std::ptr::null_mut(),
            len,
        }
    }

    fn geometry(src_len: usize, dst_len: usize, w: usize, h: usize, d: usize) -> Geometry<'static> {
        let mut g = Geometry::new();
        g.src.end = host(src_len);
        g.dst.end = Endpoint::Device {
            ptr: 0,
            len: dst_len,
            log: None,
        };
        g.width_in_bytes = w;
        g.height = h;
        g.depth = d;
        g
    }

    fn err(g: &Geometry<'_>, three_d: bool) -> String {
        g.check("Memcpy", three_d).unwrap_err().to_string()
    }

    #[test]
    fn unset_sides_are_named() {
        let g = Geometry::new();
        assert!(err(&g, false).contains("no source"));
        let mut g = Geometry::new();
        g.src.end = host(8);
        assert!(err(&g, false).contains("dst_array"));
    }

    #[test]
    fn tight_2d_copy_fits_exactly() {
        let g = geometry(12 * 5, 12 * 5, 12, 5, 1);
        assert!(g.check("Memcpy2D", false).is_ok());
        let g = geometry(12 * 5 - 1, 12 * 5, 12, 5, 1);
        let e = err(&g, false);
        assert!(
            e.contains("byte 60") && e.contains("59 bytes") && e.contains("src"),
            "{e}"
        );
        let g = geometry(12 * 5, 12 * 5 - 1, 12, 5, 1);
        assert!(err(&g, false).contains("dst_pitch 12"));
    }

    #[test]
    fn pitched_offset_copy_bounds() {
        // 3 rows of 8 bytes at (x 4, y 2) in rows of 16 bytes: last byte is 4*16 + 4 + 8.
        let mut g = geometry(76, 24, 8, 3, 1);
        g.src.pitch = Some(16);
        g.src.x_in_bytes = 4;
        g.src.y = 2;
        assert!(g.check("Memcpy2D", false).is_ok());
        g.src.end = host(75);
        assert!(err(&g, false).contains("byte 76"));
        // The row must fit in the pitch.
        g.src.end = host(1000);
        g.src.x_in_bytes = 9;
        let e = err(&g, false);
        assert!(
            e.contains("src_pitch 16") && e.contains("9 + 8 = 17"),
            "{e}"
        );
        // An unset pitch is the width.
        g.src.pitch = None;
        g.src.x_in_bytes = 1;
        assert!(err(&g, false).contains("unset, so width_in_bytes"));
    }

    #[test]
    fn three_d_linear_bounds_use_rows_per_slice() {
        // Box 8 x 3 x 2 at (0, 1, 1) in slices of 4 rows of 10 bytes.
        let mut g = geometry(10 * 4 * 3, 8 * 3 * 2, 8, 3, 2);
        g.src.pitch = Some(10);
        g.src.height = Some(4);
        g.src.y = 1;
        g.src.z = 1;
        // Last row: (1 + 1) * 4 + 1 + 2 = 11 -> end 11 * 10 + 8 = 118 <= 120.
        assert!(g.check("Memcpy3D", true).is_ok());
        g.src.end = host(117);
        assert!(err(&g, true).contains("byte 118"));
        g.src.end = host(1000);
        g.src.y = 2;
        let e = err(&g, true);
        assert!(
            e.contains("src_y + height = 2 + 3") && e.contains("src_height 4"),
            "{e}"
        );
        // Depth 1 with z 0 ignores the slice height.
        let mut g = geometry(30, 30, 10, 3, 1);
        g.src.height = Some(1);
        assert!(g.check("Memcpy3D", true).is_ok());
    }

    #[test]
    fn empty_copies_pass_once_both_sides_are_set() {
        let g = geometry(0, 0, 0, 5, 1);
        assert!(g.check("Memcpy2D", false).is_ok());
        let g = geometry(0, 0, 4, 0, 1);
        assert!(g.check("Memcpy2D", false).is_ok());
    }

    #[test]
    fn array_boxes_are_checked_in_elements_rows_and_slices() {
        let desc = ArrayDescriptor3D::d2(10, 6, ArrayFormat::F32, 2); // 8-byte elements
        let mut g = geometry(0, 0, 16, 2, 1);
        let mut side = Side::UNSET;
        side.x_in_bytes = 64;
        side.y = 4;
        assert!(check_array_box("Memcpy2D", "dst", &desc, &side, &g, false).is_ok());
        side.x_in_bytes = 68;
        let e = check_array_box("Memcpy2D", "dst", &desc, &side, &g, false).unwrap_err();
        assert!(e
            .to_string()
            .contains("multiple of the array's element size 8"));
        side.x_in_bytes = 72;
        let e = check_array_box("Memcpy2D", "dst", &desc, &side, &g, false).unwrap_err();
        assert!(e.to_string().contains("row of 80 bytes"), "{e}");
        side.x_in_bytes = 0;
        side.y = 5;
        let e = check_array_box("Memcpy2D", "dst", &desc, &side, &g, false).unwrap_err();
        assert!(e.to_string().contains("6 rows"));
        side.y = 0;
        g.width_in_bytes = 12;
        let e = check_array_box("Memcpy2D", "dst", &desc, &side, &g, false).unwrap_err();
        assert!(e.to_string().contains("width_in_bytes 12"));

        let cube = ArrayDescriptor3D::cubemap(4, ArrayFormat::U8, 1);
        let mut g = geometry(0, 0, 4, 4, 1);
        let e = check_array_box("Memcpy2D", "src", &cube, &side, &g, false).unwrap_err();
        assert!(e.to_string().contains("use Memcpy3D"));
        side.z = 5;
        assert!(check_array_box("Memcpy3D", "src", &cube, &side, &g, true).is_ok());
        g.depth = 2;
        let e = check_array_box("Memcpy3D", "src", &cube, &side, &g, true).unwrap_err();
        assert!(e.to_string().contains("6 slices"));
        // A 1D array has one row and one slice.
        let line = ArrayDescriptor3D::d1(16, ArrayFormat::U8, 1);
        let g = geometry(0, 0, 16, 1, 1);
        assert!(check_array_box("Memcpy3D", "src", &line, &Side::UNSET, &g, true).is_ok());
    }

    #[test]
    fn advancing_linear_memory() {
        let e = host(100).advanced(40).ok();
        assert!(matches!(e, Some(Endpoint::Host { len: 60, .. })));
        let e = Endpoint::Device {
            ptr: 0x1000,
            len: 8,
            log: None,
        }
        .advanced(8)
        .ok();
        assert!(matches!(
            e,
            Some(Endpoint::Device {
                ptr: 0x1008,
                len: 0,
                ..
            })
        ));
        assert!(host(4).advanced(5).is_err());
    }

    #[test]
    fn raw_structs_carry_the_geometry() {
        let mut g = geometry(1000, 1000, 8, 3, 2);
        g.src.pitch = Some(16);
        g.src.x_in_bytes = 4;
        g.dst.y = 1;
        g.dst.height = Some(7);
        let r = g.raw_3d();
        assert_eq!(r.srcMemoryType, CUmemorytype::CU_MEMORYTYPE_HOST);
        assert_eq!(r.dstMemoryType, CUmemorytype::CU_MEMORYTYPE_DEVICE);
        assert_eq!((r.srcPitch, r.srcHeight, r.srcXInBytes), (16, 3, 4));
        assert_eq!((r.dstPitch, r.dstHeight, r.dstY), (8, 7, 1));
        assert_eq!((r.WidthInBytes, r.Height, r.Depth), (8, 3, 2));
        let r = g.raw_2d();
        assert_eq!(
            (r.srcPitch, r.dstPitch, r.WidthInBytes, r.Height),
            (16, 8, 8, 3)
        );
        g.src.end = Endpoint::Unified {
            ptr: 0x42,
            len: 1000,
        };
        let r = g.raw_2d();
        assert_eq!(r.srcMemoryType, CUmemorytype::CU_MEMORYTYPE_UNIFIED);
        assert_eq!(r.srcDevice, 0x42);
    }
}
