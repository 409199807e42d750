//! Names of struct and vector element types for PyCUDA's C argument strings
//! (`"float3 *x"`): CUDA's vector types are always known; your own structs once given to
//! [`register_dtype`] (PyCUDA's `register_dtype` / `get_or_register_dtype`).

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use super::{DType, StructElement};
use crate::error::{ArrayError, Result};

fn registry() -> &'static RwLock<HashMap<&'static str, DType>> {
    static NAMES: OnceLock<RwLock<HashMap<&'static str, DType>>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let map = crate::vec::VECTOR_DTYPES
            .iter()
            .map(|&d| (d.c_type(), d))
            .collect();
        RwLock::new(map)
    })
}

/// Makes the struct element `T` known by its C name to the C argument-string parser
/// ([`crate::codegen::parse_arguments`], `ElementwiseKernel::new`, `ReductionKernel::new`)
/// and to [`DType::from_name`] (PyCUDA's `register_dtype`). Registering the same type
/// again is fine; another type under a name already taken is refused.
///
/// ```
/// #[repr(C)]
/// #[derive(Debug, Clone, Copy, PartialEq)]
/// struct Rgb { r: u8, g: u8, b: u8 }
/// rucuda_array::struct_element!(Rgb as "rgb" { r: u8, g: u8, b: u8 });
///
/// let d = rucuda_array::dtype::register_dtype::<Rgb>()?;
/// let args = rucuda_array::codegen::parse_arguments("const rgb *img, float gain")?;
/// assert_eq!(args[0].dtype(), d);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn register_dtype<T: StructElement>() -> Result<DType> {
    let d = DType::Record(T::RECORD);
    let mut map = registry().write().unwrap_or_else(|p| p.into_inner());
    match map.get(T::RECORD.name) {
        Some(&have) if have != d => Err(ArrayError::InvalidArgument(format!(
            "register_dtype: the C name `{}` is taken by another type ({have:?})",
            T::RECORD.name
        ))),
        _ => {
            map.insert(T::RECORD.name, d);
            Ok(d)
        }
    }
}

/// The struct or vector type registered under the C name `name`, if any.
pub fn registered_dtype(name: &str) -> Option<DType> {
    registry()
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(name)
        .copied()
}
