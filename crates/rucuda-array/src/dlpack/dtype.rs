//! Element types as DLPack's [`DLDataType`] and back.

use super::ffi::{type_code, DLDataType};
use crate::dtype::DType;

const fn dl(code: u8, bits: u8) -> DLDataType {
    DLDataType {
        code,
        bits,
        lanes: 1,
    }
}

/// Every element type with its DLPack type (NumPy's and CuPy's mapping: `bool` is
/// `kDLBool` of 8 bits, complex counts the bits of both parts).
const TABLE: [(DType, DLDataType); 15] = [
    (DType::Bool, dl(type_code::BOOL, 8)),
    (DType::I8, dl(type_code::INT, 8)),
    (DType::I16, dl(type_code::INT, 16)),
    (DType::I32, dl(type_code::INT, 32)),
    (DType::I64, dl(type_code::INT, 64)),
    (DType::U8, dl(type_code::UINT, 8)),
    (DType::U16, dl(type_code::UINT, 16)),
    (DType::U32, dl(type_code::UINT, 32)),
    (DType::U64, dl(type_code::UINT, 64)),
    (DType::F16, dl(type_code::FLOAT, 16)),
    (DType::BF16, dl(type_code::BFLOAT, 16)),
    (DType::F32, dl(type_code::FLOAT, 32)),
    (DType::F64, dl(type_code::FLOAT, 64)),
    (DType::C64, dl(type_code::COMPLEX, 64)),
    (DType::C128, dl(type_code::COMPLEX, 128)),
];

/// The DLPack type of `dtype`, or `None` for a type DLPack cannot name.
///
/// ```
/// use rucuda_array::{dlpack::{dl_data_type, ffi::type_code}, DType};
/// let t = dl_data_type(DType::C64).unwrap();
/// assert_eq!((t.code, t.bits, t.lanes), (type_code::COMPLEX, 64, 1));
/// ```
pub fn dl_data_type(dtype: DType) -> Option<DLDataType> {
    TABLE.iter().find(|(d, _)| *d == dtype).map(|(_, t)| *t)
}

/// The element type of a DLPack type, or `None` when rucuda has none.
///
/// ```
/// use rucuda_array::{dlpack::{dtype_of, ffi::{type_code, DLDataType}}, DType};
/// let t = DLDataType { code: type_code::BFLOAT, bits: 16, lanes: 1 };
/// assert_eq!(dtype_of(t), Some(DType::BF16));
/// assert_eq!(dtype_of(DLDataType { lanes: 4, ..t }), None);
/// ```
pub fn dtype_of(t: DLDataType) -> Option<DType> {
    TABLE.iter().find(|(_, x)| *x == t).map(|(d, _)| *d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_type_maps_both_ways() {
        for d in DType::ALL {
            let t = dl_data_type(d).unwrap();
            assert_eq!(usize::from(t.bits) / 8, d.size_bytes(), "{d}");
            assert_eq!(dtype_of(t), Some(d));
        }
        assert_eq!(dtype_of(dl(type_code::FLOAT, 8)), None);
        assert_eq!(dtype_of(dl(type_code::OPAQUE_HANDLE, 64)), None);
    }
}
