//! [`KernelValue`]: one argument of a generated-kernel call, with its type erased so that
//! a call can mix element types; checked against the kernel's [`ArgSpec`]s at the call.

use rucuda_driver::{ArgBuffer, Stream};

use crate::array::GpuArray;
use crate::dtype::{DType, Element};
use crate::layout::Layout;
use crate::memory::ArrayMemory;

/// A scalar argument: its type and stored bytes (inline up to 16 bytes; larger struct
/// and vector values are kept in a shared allocation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalarValue {
    dtype: DType,
    bytes: ScalarBytes,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum ScalarBytes {
    Inline([u8; 16]),
    Shared(std::sync::Arc<[u8]>),
}

impl ScalarValue {
    /// A scalar of type `T`.
    ///
    /// ```
    /// use rucuda_array::elementwise::ScalarValue;
    /// let v = ScalarValue::new(2.5f32);
    /// assert_eq!(v.dtype(), rucuda_array::DType::F32);
    /// assert_eq!(v.bytes(), &2.5f32.to_ne_bytes());
    /// ```
    pub fn new<T: Element>(value: T) -> ScalarValue {
        let stored = value.to_storage();
        let src = bytemuck::bytes_of(&stored);
        let bytes = if src.len() <= 16 {
            let mut inline = [0u8; 16];
            inline[..src.len()].copy_from_slice(src);
            ScalarBytes::Inline(inline)
        } else {
            ScalarBytes::Shared(src.into())
        };
        ScalarValue {
            dtype: T::DTYPE,
            bytes,
        }
    }

    /// `value` converted to `dtype` as a C cast would (complex: zero imaginary part).
    ///
    /// ```
    /// use rucuda_array::{elementwise::ScalarValue, DType};
    /// assert_eq!(ScalarValue::from_f64(3.7, DType::I32), ScalarValue::new(3i32));
    /// ```
    pub fn from_f64(value: f64, dtype: DType) -> ScalarValue {
        use half::{bf16, f16};
        use num_complex::Complex;
        match dtype {
            DType::Bool => ScalarValue::new(bool::from_f64(value)),
            DType::I8 => ScalarValue::new(i8::from_f64(value)),
            DType::I16 => ScalarValue::new(i16::from_f64(value)),
            DType::I32 => ScalarValue::new(i32::from_f64(value)),
            DType::I64 => ScalarValue::new(i64::from_f64(value)),
            DType::U8 => ScalarValue::new(u8::from_f64(value)),
            DType::U16 => ScalarValue::new(u16::from_f64(value)),
            DType::U32 => ScalarValue::new(u32::from_f64(value)),
            DType::U64 => ScalarValue::new(u64::from_f64(value)),
            DType::F16 => ScalarValue::new(f16::from_f64(value)),
            DType::BF16 => ScalarValue::new(bf16::from_f64(value)),
            DType::F32 => ScalarValue::new(value as f32),
            DType::F64 => ScalarValue::new(value),
            DType::C64 => ScalarValue::new(Complex::<f32>::from_f64(value)),
            DType::C128 => ScalarValue::new(Complex::<f64>::from_f64(value)),
            // Not a number: all-zero bytes of the struct's size.
            DType::Record(_) => ScalarValue {
                dtype,
                bytes: if dtype.size_bytes() <= 16 {
                    ScalarBytes::Inline([0; 16])
                } else {
                    ScalarBytes::Shared(vec![0u8; dtype.size_bytes()].into())
                },
            },
        }
    }

    /// Its type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Its bytes as the kernel parameter holds them.
    pub fn bytes(&self) -> &[u8] {
        match &self.bytes {
            ScalarBytes::Inline(b) => &b[..self.dtype.size_bytes().min(16)],
            ScalarBytes::Shared(b) => b,
        }
    }

    /// Appends the value to `buf` as one kernel parameter of its size.
    pub(crate) fn push_to(&self, buf: &mut ArgBuffer) {
        buf.push_bytes(self.bytes());
    }
}

/// An array argument: where its element 0 is, its type and layout, and whether the
/// caller lent it mutably.
#[derive(Debug, Clone)]
pub struct ArrayValue<'a> {
    /// The array's memory; the launch takes its address through the use log.
    pub(crate) mem: ArrayMemory<'a>,
    pub(crate) dtype: DType,
    pub(crate) layout: &'a Layout,
    pub(crate) stream: &'a Stream,
    pub(crate) mutable: bool,
}

impl<'a> ArrayValue<'a> {
    /// The address of element 0 for a launch on `stream`, recording the use (a write for
    /// arrays passed as `&mut`).
    pub(crate) fn use_on(&self, stream: &Stream) -> crate::Result<rucuda_driver::InUse<'a>> {
        let access = if self.mutable {
            rucuda_driver::Access::Write
        } else {
            rucuda_driver::Access::Read
        };
        self.mem.use_on(stream, access)
    }
}

/// One argument of an [`super::ElementwiseKernel`] call: a scalar (`2.0f32.into()`) or an
/// array (`(&x).into()` to read, `(&mut z).into()` to write).
#[derive(Debug, Clone)]
pub enum KernelValue<'a> {
    /// A value passed by value.
    Scalar(ScalarValue),
    /// An array passed by pointer (and strides, where needed).
    Array(ArrayValue<'a>),
}

/// The arguments with every scalar converted to the type its declaration gives
/// ([`ScalarValue::convert_to`]); borrowed unchanged when no scalar needs converting.
/// Kinds are checked later; a scalar passed for an array stays as it is.
pub(crate) fn convert_scalars<'a, 'v>(
    kernel: &str,
    specs: &[crate::codegen::ArgSpec],
    args: &'a [KernelValue<'v>],
) -> crate::Result<std::borrow::Cow<'a, [KernelValue<'v>]>> {
    let needs = specs.iter().zip(args).any(|(spec, v)| {
        matches!(v, KernelValue::Scalar(s) if !spec.is_vector() && s.dtype() != spec.dtype())
    });
    if !needs {
        return Ok(std::borrow::Cow::Borrowed(args));
    }
    let mut out = args.to_vec();
    for (spec, v) in specs.iter().zip(out.iter_mut()) {
        if let KernelValue::Scalar(s) = v {
            if !spec.is_vector() && s.dtype() != spec.dtype() {
                let converted = s.convert_to(spec.dtype()).map_err(|reason| {
                    crate::codegen::CodegenError::ScalarConversion {
                        kernel: kernel.to_string(),
                        name: spec.name().to_string(),
                        reason,
                    }
                })?;
                *s = converted;
            }
        }
    }
    Ok(std::borrow::Cow::Owned(out))
}

impl KernelValue<'_> {
    /// What it is, for error messages (`"float32 scalar"`, `"int8 array of shape [3]"`).
    pub fn describe(&self) -> String {
        match self {
            KernelValue::Scalar(s) => format!("{} scalar", s.dtype),
            KernelValue::Array(a) => format!(
                "{}{} array of shape {:?}",
                if a.mutable { "mutable " } else { "" },
                a.dtype,
                a.layout.shape()
            ),
        }
    }
}

impl<T: Element> From<T> for KernelValue<'_> {
    fn from(value: T) -> Self {
        KernelValue::Scalar(ScalarValue::new(value))
    }
}

impl From<ScalarValue> for KernelValue<'_> {
    fn from(value: ScalarValue) -> Self {
        KernelValue::Scalar(value)
    }
}

impl<'a, T: Element> From<&'a GpuArray<T>> for KernelValue<'a> {
    fn from(a: &'a GpuArray<T>) -> Self {
        KernelValue::Array(ArrayValue {
            mem: a.memory(),
            dtype: T::DTYPE,
            layout: a.layout(),
            stream: a.stream(),
            mutable: false,
        })
    }
}

impl<'a, T: Element> From<&'a mut GpuArray<T>> for KernelValue<'a> {
    fn from(a: &'a mut GpuArray<T>) -> Self {
        KernelValue::Array(ArrayValue {
            mem: a.memory(),
            dtype: T::DTYPE,
            layout: a.layout(),
            stream: a.stream(),
            mutable: true,
        })
    }
}
