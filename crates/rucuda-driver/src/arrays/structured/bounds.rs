//! Checks that a copy's box lies inside each end: linear memory in bytes, rows and
//! slices; arrays in elements, rows and slices.

use crate::arrays::descriptor::ArrayDescriptor3D;
use crate::arrays::structured::endpoint::Side;
use crate::error::{Error, Result};

fn overflow(op: &str) -> Error {
    Error::invalid(format!("{op}: copy extent overflows usize"))
}

/// Checks a box in linear memory of `len` bytes.
pub(crate) fn check_linear_box(
    op: &str,
    which: &str,
    side: &Side<'_>,
    len: usize,
    extent: (usize, usize, usize),
) -> Result<()> {
    let (w, h, d) = extent;
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
    extent: (usize, usize, usize),
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
    let (w, h, d) = extent;
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
