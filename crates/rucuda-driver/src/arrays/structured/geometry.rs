//! What every structured copy holds: its two ends (host, device, unified or array
//! memory, with offsets and pitches) and the copied box; the driver structs made from
//! them; the uses of device ends for the work that copies.

use std::ffi::c_void;

use rucuda_driver_sys::{
    CUarray, CUdeviceptr, CUmemorytype, CUDA_MEMCPY2D, CUDA_MEMCPY3D, CUDA_MEMCPY3D_PEER,
};

use crate::arrays::structured::bounds::{check_array_box, check_linear_box};
use crate::arrays::structured::endpoint::{Endpoint, Side};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::memory::tracking::finish_legacy_stream;
use crate::memory::tracking::Access;
use crate::memory::tracking::InUse;
use crate::streams::stream::Stream;

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
    /// The copied box: bytes per row, rows, slices.
    pub(crate) fn extent(&self) -> (usize, usize, usize) {
        (self.width_in_bytes, self.height, self.depth)
    }

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
                return check_array_box(op, which, a.desc(), side, self.extent(), three_d);
            }
            Endpoint::Host { len, .. }
            | Endpoint::Device { len, .. }
            | Endpoint::Unified { len, .. } => len,
        };
        check_linear_box(op, which, side, len, self.extent())
    }

    /// Orders a copy on `stream` after conflicting work on the device sides and records
    /// its use.
    /// Runs a synchronous copy (`copy`, a driver call on the legacy stream of `ctx`):
    /// ordered after conflicting work on the device ends, finished when this returns.
    pub(crate) fn run_sync(&self, ctx: &Context, copy: impl FnOnce() -> Result<()>) -> Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        ctx.bind()?;
        let _uses = self.use_sides_on(&Stream::null(ctx))?;
        copy()?;
        finish_legacy_stream(ctx)
    }

    /// Queues an asynchronous copy (`copy`, a driver call on `stream`) after conflicting
    /// work on the device ends, recording its use of them.
    pub(crate) fn run_async(
        &self,
        stream: &Stream,
        copy: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        stream.context().bind()?;
        let _uses = self.use_sides_on(stream)?;
        copy()
    }

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

    pub(crate) fn raw_2d(&self) -> CUDA_MEMCPY2D {
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

    pub(crate) fn raw_3d(&self) -> CUDA_MEMCPY3D {
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

    pub(crate) fn raw_peer(&self, src_ctx: &Context, dst_ctx: &Context) -> CUDA_MEMCPY3D_PEER {
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
    pub(crate) fn check_contexts(
        &self,
        op: &str,
        src_ctx: &Context,
        dst_ctx: &Context,
    ) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrays::descriptor::ArrayDescriptor3D;

    use crate::arrays::format::ArrayFormat;

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
        assert!(check_array_box("Memcpy2D", "dst", &desc, &side, g.extent(), false).is_ok());
        side.x_in_bytes = 68;
        let e = check_array_box("Memcpy2D", "dst", &desc, &side, g.extent(), false).unwrap_err();
        assert!(e
            .to_string()
            .contains("multiple of the array's element size 8"));
        side.x_in_bytes = 72;
        let e = check_array_box("Memcpy2D", "dst", &desc, &side, g.extent(), false).unwrap_err();
        assert!(e.to_string().contains("row of 80 bytes"), "{e}");
        side.x_in_bytes = 0;
        side.y = 5;
        let e = check_array_box("Memcpy2D", "dst", &desc, &side, g.extent(), false).unwrap_err();
        assert!(e.to_string().contains("6 rows"));
        side.y = 0;
        g.width_in_bytes = 12;
        let e = check_array_box("Memcpy2D", "dst", &desc, &side, g.extent(), false).unwrap_err();
        assert!(e.to_string().contains("width_in_bytes 12"));

        let cube = ArrayDescriptor3D::cubemap(4, ArrayFormat::U8, 1);
        let mut g = geometry(0, 0, 4, 4, 1);
        let e = check_array_box("Memcpy2D", "src", &cube, &side, g.extent(), false).unwrap_err();
        assert!(e.to_string().contains("use Memcpy3D"));
        side.z = 5;
        assert!(check_array_box("Memcpy3D", "src", &cube, &side, g.extent(), true).is_ok());
        g.depth = 2;
        let e = check_array_box("Memcpy3D", "src", &cube, &side, g.extent(), true).unwrap_err();
        assert!(e.to_string().contains("6 slices"));
        // A 1D array has one row and one slice.
        let line = ArrayDescriptor3D::d1(16, ArrayFormat::U8, 1);
        let g = geometry(0, 0, 16, 1, 1);
        assert!(check_array_box("Memcpy3D", "src", &line, &Side::UNSET, g.extent(), true).is_ok());
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
