//! Kernel argument buffers packed in Rust: the fast path of `prepared_call` (a `struct`
//! format string parsed once, at `prepare`) and of `Function.__call__` (NumPy scalars,
//! allocations and arrays).
//!
//! Python's `struct.pack` plus the argument conversions around it cost several
//! microseconds a launch; here the same bytes come from one pass over the arguments.
//! Anything this path does not handle (strings, byte-order prefixes, `In`/`Out`
//! handlers, structured scalars...) makes it answer `None`, and the caller takes the
//! Python path, which handles and reports everything as PyCUDA does.

use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt, PyTuple, PyType};

use crate::memory::DeviceAllocation;

/// One value of a format, by how it is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Code {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
    /// A device address (`P`): an integer, an allocation, or an object with `gpudata`.
    Ptr,
}

impl Code {
    fn size(self) -> usize {
        match self {
            Code::Bool | Code::I8 | Code::U8 => 1,
            Code::I16 | Code::U16 => 2,
            Code::I32 | Code::U32 | Code::F32 => 4,
            Code::I64 | Code::U64 | Code::F64 | Code::Ptr => 8,
        }
    }

    /// The code of a `struct` character in native mode (`l`/`L` are 64-bit, as on
    /// Linux x86-64 and aarch64), or None for one this path leaves to Python.
    fn of_char(c: char) -> Option<Code> {
        Some(match c {
            '?' => Code::Bool,
            'b' => Code::I8,
            'B' => Code::U8,
            'h' => Code::I16,
            'H' => Code::U16,
            'i' => Code::I32,
            'I' => Code::U32,
            'l' | 'q' | 'n' => Code::I64,
            'L' | 'Q' | 'N' => Code::U64,
            'f' => Code::F32,
            'd' => Code::F64,
            'P' => Code::Ptr,
            _ => return None,
        })
    }
}

/// A parsed format: each value's code and byte offset, and the buffer's size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Format {
    items: Vec<(Code, usize)>,
    size: usize,
}

impl Format {
    /// `fmt` in `struct`'s native mode (no prefix or `@`), or None where this path does
    /// not handle it (another byte order, strings, half floats, complex values).
    pub(crate) fn parse(fmt: &str) -> Option<Format> {
        let body = fmt.strip_prefix('@').unwrap_or(fmt);
        let mut items = Vec::new();
        let mut offset = 0usize;
        let mut count: Option<usize> = None;
        for c in body.chars() {
            if c.is_ascii_whitespace() {
                continue;
            }
            if let Some(d) = c.to_digit(10) {
                count = Some(
                    count
                        .unwrap_or(0)
                        .checked_mul(10)?
                        .checked_add(d as usize)?,
                );
                continue;
            }
            let n = count.take().unwrap_or(1);
            if c == 'x' {
                offset = offset.checked_add(n)?;
                continue;
            }
            let code = Code::of_char(c)?;
            for _ in 0..n {
                let size = code.size();
                offset = offset.div_ceil(size) * size;
                items.push((code, offset));
                offset += size;
            }
        }
        if count.is_some() {
            return None;
        }
        Some(Format {
            items,
            size: offset,
        })
    }

    /// Number of values it takes.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.items.len()
    }

    /// `args` packed as the format says, in 8-byte words, or None where an argument needs
    /// the Python path (which converts or refuses it as PyCUDA does).
    pub(crate) fn pack(&self, args: &Bound<'_, PyTuple>) -> Option<Vec<u64>> {
        if args.len() != self.items.len() {
            return None;
        }
        let mut buf = Buffer::new(self.size);
        for ((code, offset), arg) in self.items.iter().zip(args.iter()) {
            buf.put(*offset, value_of(*code, &arg)?);
        }
        Some(buf.words)
    }

    /// The bytes it packs.
    pub(crate) fn byte_size(&self) -> usize {
        self.size
    }
}

/// A value ready to store: its bytes (little-endian) and how many.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Raw {
    bits: u64,
    size: usize,
}

fn int_in(code: Code, v: i128) -> Option<Raw> {
    let (lo, hi): (i128, i128) = match code {
        Code::I8 => (i8::MIN.into(), i8::MAX.into()),
        Code::U8 => (0, u8::MAX.into()),
        Code::I16 => (i16::MIN.into(), i16::MAX.into()),
        Code::U16 => (0, u16::MAX.into()),
        Code::I32 => (i32::MIN.into(), i32::MAX.into()),
        Code::U32 => (0, u32::MAX.into()),
        Code::I64 => (i64::MIN.into(), i64::MAX.into()),
        Code::U64 | Code::Ptr => (0, u64::MAX.into()),
        _ => return None,
    };
    if v < lo || v > hi {
        return None;
    }
    Some(Raw {
        // Two's complement (the low 64 bits), truncated to the size by `put`.
        bits: v as u64,
        size: code.size(),
    })
}

/// An integer argument (a Python int or anything with `__index__`: NumPy integers,
/// allocations) as an i128, or None.
fn index_of(arg: &Bound<'_, PyAny>) -> Option<i128> {
    if let Ok(v) = arg.extract::<i64>() {
        return Some(v.into());
    }
    arg.extract::<u64>().ok().map(i128::from)
}

fn value_of(code: Code, arg: &Bound<'_, PyAny>) -> Option<Raw> {
    match code {
        Code::Bool => Some(Raw {
            bits: u64::from(arg.is_truthy().ok()?),
            size: 1,
        }),
        Code::F32 => Some(Raw {
            bits: u64::from((arg.extract::<f64>().ok()? as f32).to_bits()),
            size: 4,
        }),
        Code::F64 => Some(Raw {
            bits: arg.extract::<f64>().ok()?.to_bits(),
            size: 8,
        }),
        Code::Ptr => {
            if let Some(v) = index_of(arg) {
                return int_in(code, v);
            }
            // A GPUArray (or anything with `gpudata`): its allocation's address.
            let data = arg.getattr(pyo3::intern!(arg.py(), "gpudata")).ok()?;
            int_in(code, index_of(&data)?)
        }
        _ => {
            // struct refuses floats for integer codes; so does index_of.
            if arg.is_instance_of::<PyFloat>() {
                return None;
            }
            int_in(code, index_of(arg)?)
        }
    }
}

/// An argument buffer being filled, in 8-byte words (the alignment the driver needs).
struct Buffer {
    words: Vec<u64>,
}

impl Buffer {
    fn new(size: usize) -> Buffer {
        Buffer {
            words: vec![0u64; size.div_ceil(8).max(1)],
        }
    }

    /// Stores `v` at byte `offset` (inside the buffer: the format placed it).
    fn put(&mut self, offset: usize, v: Raw) {
        let bytes = v.bits.to_le_bytes();
        for (i, b) in bytes.iter().take(v.size).enumerate() {
            let at = offset + i;
            let word = &mut self.words[at / 8];
            let shift = (at % 8) * 8;
            *word = (*word & !(0xffu64 << shift)) | (u64::from(*b) << shift);
        }
    }
}

/// `numpy.generic`, looked up once.
fn numpy_generic(py: Python<'_>) -> Option<&Bound<'_, PyType>> {
    static GENERIC: GILOnceCell<Py<PyType>> = GILOnceCell::new();
    GENERIC
        .get_or_try_init(py, || -> PyResult<Py<PyType>> {
            Ok(py
                .import("numpy")?
                .getattr("generic")?
                .downcast_into::<PyType>()?
                .unbind())
        })
        .ok()
        .map(|t| t.bind(py))
}

/// `Function.__call__`'s arguments packed by PyCUDA's rules — NumPy scalars by value in
/// their own type, allocations and arrays (`gpudata`) by address — with each one's size
/// (for the launch check), or None where one needs the Python path (`In`/`Out`
/// handlers, host arrays and structured values by value, Python numbers, which PyCUDA
/// refuses with a message the Python path gives).
pub(crate) fn pack_call(args: &Bound<'_, PyTuple>) -> Option<(Vec<u64>, Vec<usize>)> {
    let py = args.py();
    let mut items: Vec<Raw> = Vec::with_capacity(args.len());
    for arg in args.iter() {
        if let Ok(a) = arg.downcast::<DeviceAllocation>() {
            items.push(Raw {
                bits: a.borrow().address(),
                size: 8,
            });
            continue;
        }
        // Before Python's numbers: numpy.float64 is a float, numpy.int_ was an int.
        if arg.is_instance(numpy_generic(py)?).ok()? {
            let ch: char = arg
                .getattr(pyo3::intern!(py, "dtype"))
                .ok()?
                .getattr(pyo3::intern!(py, "char"))
                .ok()?
                .extract()
                .ok()?;
            let code = Code::of_char(ch).filter(|c| *c != Code::Ptr)?;
            items.push(value_of(code, &arg)?);
            continue;
        }
        if arg.is_instance_of::<PyInt>()
            || arg.is_instance_of::<PyFloat>()
            || arg.is_instance_of::<PyBool>()
            || arg.is_instance_of::<PyComplex>()
        {
            return None;
        }
        if let Ok(data) = arg.getattr(pyo3::intern!(py, "gpudata")) {
            items.push(int_in(Code::Ptr, index_of(&data)?)?);
            continue;
        }
        return None;
    }
    let mut offset = 0usize;
    let mut placed = Vec::with_capacity(items.len());
    for v in &items {
        offset = offset.div_ceil(v.size) * v.size;
        placed.push(offset);
        offset += v.size;
    }
    let mut buf = Buffer::new(offset);
    for (v, at) in items.iter().zip(&placed) {
        buf.put(*at, *v);
    }
    let sizes = items.iter().map(|v| v.size).collect();
    Some((buf.words, sizes))
}

/// The bytes `pack_call` packs for values of these sizes (each aligned to its size).
pub(crate) fn packed_size(sizes: &[usize]) -> usize {
    sizes
        .iter()
        .fold(0, |offset, s| offset.div_ceil(*s) * s + s)
}

/// `_pack_format(fmt, args)`: the bytes `prepared_call` packs in Rust for `fmt`, or
/// None where it leaves them to Python (for the tests: they compare with `struct.pack`).
#[pyfunction]
pub fn _pack_format<'py>(
    py: Python<'py>,
    fmt: &str,
    args: &Bound<'py, PyTuple>,
) -> Option<Bound<'py, pyo3::types::PyBytes>> {
    let f = Format::parse(fmt)?;
    let words = f.pack(args)?;
    Some(pyo3::types::PyBytes::new(
        py,
        &bytes_of(&words, f.byte_size()),
    ))
}

/// `_pack_call(args)`: `(bytes, sizes)` as `Function.__call__` packs them in Rust, or
/// None where it leaves them to Python.
#[pyfunction]
pub fn _pack_call<'py>(
    py: Python<'py>,
    args: &Bound<'py, PyTuple>,
) -> Option<(Bound<'py, pyo3::types::PyBytes>, Vec<usize>)> {
    let (words, sizes) = pack_call(args)?;
    let bytes = bytes_of(&words, packed_size(&sizes));
    Some((pyo3::types::PyBytes::new(py, &bytes), sizes))
}

/// The bytes of a packed buffer of `size` bytes.
fn bytes_of(words: &[u64], size: usize) -> Vec<u8> {
    words
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .take(size)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_alignment_matches_struct() {
        // struct.calcsize("iPfdx?h") == 4 + 4(pad) + 8 + 4 + 4(pad) + 8 + 1 + 1 + 2 = 36
        let f = Format::parse("iPfdx?h").unwrap();
        assert_eq!(f.len(), 6);
        assert_eq!(f.byte_size(), 36);
        assert_eq!(
            f.items.iter().map(|(_, o)| *o).collect::<Vec<_>>(),
            vec![0, 8, 16, 24, 33, 34]
        );
        let f = Format::parse("@3i2x").unwrap();
        assert_eq!((f.len(), f.byte_size()), (3, 14));
        assert_eq!(Format::parse("").unwrap().byte_size(), 0);
    }

    #[test]
    fn formats_left_to_python_are_refused() {
        for fmt in ["<i", "=i", "!i", ">i", "4s", "p", "e", "F", "3"] {
            assert!(Format::parse(fmt).is_none(), "{fmt}");
        }
    }

    #[test]
    fn integers_out_of_range_are_left_to_python() {
        assert!(int_in(Code::U32, -1).is_none());
        assert!(int_in(Code::I8, 128).is_none());
        assert_eq!(int_in(Code::I8, -1).unwrap().bits & 0xff, 0xff);
        assert_eq!(int_in(Code::U64, u64::MAX as i128).unwrap().bits, u64::MAX);
    }

    #[test]
    fn put_places_little_endian_bytes() {
        let mut b = Buffer::new(12);
        b.put(
            0,
            Raw {
                bits: 0x0102_0304,
                size: 4,
            },
        );
        b.put(
            4,
            Raw {
                bits: 0xAABB_CCDD_EEFF_0011,
                size: 8,
            },
        );
        assert_eq!(
            bytes_of(&b.words, 12),
            vec![4, 3, 2, 1, 0x11, 0, 0xFF, 0xEE, 0xDD, 0xCC, 0xBB, 0xAA]
        );
    }
}
