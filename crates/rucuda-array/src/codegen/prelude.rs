//! The C++ definitions generated kernels put before their own code (`cuda/*.cuh`): our
//! half, bfloat16 and complex types, so that no kernel needs CUDA's headers (NVRTC then
//! compiles them with no include path, and the cache key is the source alone), and the
//! warp shuffles of the reduction and scan generators.
//!
//! - `rucuda_half`: IEEE binary16 bits; converts to and from `float` (and from any
//!   arithmetic type) with PTX `cvt` instructions, so arithmetic happens in `float`.
//! - `rucuda_bfloat16`: bfloat16 bits; round-to-nearest-even from `float` in software
//!   (the same bits as `half::bf16::from_f32`, NaNs kept quiet), any architecture.
//! - `rucuda_complex<T>` with `rucuda_complex64`/`rucuda_complex128`: `{re, im}` with the
//!   component's alignment (Rust's `Complex<T>` layout); `+ - * /` (Smith's division),
//!   `==`, `!=` with complex or real operands of the same precision; `real`, `imag`,
//!   `conj`, `abs`, `norm`, `arg`.
//! - your struct element types ([`crate::struct_element!`]): their definitions
//!   ([`crate::dtype::RecordType::c_definition`]), after the types their fields use
//!   (CUDA's vector types need none: CUDA defines them).

use crate::dtype::{DType, RecordType};

const HALF: &str = include_str!("cuda/half.cuh");
const BFLOAT16: &str = include_str!("cuda/bfloat16.cuh");
const COMPLEX: &str = include_str!("cuda/complex.cuh");
/// Shuffles for any type `T` (default-constructible and trivially copyable), moved as
/// 32-bit words with `__shfl_*_sync` (so structs, complex numbers, half types and bytes
/// all shuffle): `rucuda_shfl_down(v, d)`, `rucuda_shfl_up(v, d)`, `rucuda_shfl_idx(v,
/// lane)`. Used by the reduction and scan generators; warp-level steps use only `*_sync`
/// shuffles and ballots with the full mask, never the pre-Volta `volatile` idiom.
pub(crate) const SHUFFLES: &str = include_str!("cuda/shuffles.cuh");
/// `rucuda_prefetch_l2(p, bytes, threads)`: a block asks L2 for a range, one prefetch per
/// 128-byte line (the scan's and the compaction's look-ahead).
pub(crate) const PREFETCH_L2: &str = include_str!("cuda/prefetch_l2.cuh");

/// Which prelude blocks a set of types needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PreludeBlocks {
    /// Struct definitions, each after those its fields use.
    pub records: Vec<&'static RecordType>,
    /// `rucuda_half`.
    pub half: bool,
    /// `rucuda_bfloat16`.
    pub bfloat16: bool,
    /// `rucuda_complex<T>`.
    pub complex: bool,
}

impl PreludeBlocks {
    /// The blocks values of `dtypes` need.
    pub(crate) fn of(dtypes: impl IntoIterator<Item = DType>) -> PreludeBlocks {
        let mut b = PreludeBlocks::default();
        for d in dtypes {
            b.add(d);
        }
        b
    }

    fn add(&mut self, d: DType) {
        match d {
            DType::F16 => self.half = true,
            DType::BF16 => self.bfloat16 = true,
            DType::C64 | DType::C128 => self.complex = true,
            DType::Record(r) => {
                if self.records.contains(&r) {
                    return;
                }
                // Fields first (their blocks and nested structs), then the struct.
                for f in r.fields {
                    self.add(f.dtype);
                }
                if !r.builtin && !self.records.contains(&r) {
                    self.records.push(r);
                }
            }
            _ => {}
        }
    }

    /// These blocks but those `other` has.
    pub(crate) fn without(&self, other: &PreludeBlocks) -> PreludeBlocks {
        PreludeBlocks {
            records: self
                .records
                .iter()
                .copied()
                .filter(|r| !other.records.contains(r))
                .collect(),
            half: self.half && !other.half,
            bfloat16: self.bfloat16 && !other.bfloat16,
            complex: self.complex && !other.complex,
        }
    }

    /// Their text, in a fixed order.
    pub(crate) fn text(&self) -> String {
        let mut s = String::new();
        if self.half {
            s.push_str(HALF);
        }
        if self.bfloat16 {
            s.push_str(BFLOAT16);
        }
        if self.complex {
            s.push_str(COMPLEX);
        }
        for r in &self.records {
            s.push_str(&r.c_definition());
        }
        s
    }
}

/// The prelude a kernel over `dtypes` needs (empty when only built-in C types occur).
///
/// ```
/// use rucuda_array::{codegen::prelude_for, DType};
/// assert!(prelude_for([DType::F32, DType::I64]).is_empty());
/// assert!(prelude_for([DType::C64]).contains("rucuda_complex64"));
/// assert!(prelude_for([DType::F16]).contains("struct rucuda_half"));
/// ```
pub fn prelude_for(dtypes: impl IntoIterator<Item = DType>) -> String {
    PreludeBlocks::of(dtypes).text()
}

/// The whole prelude (every type), for users who write kernels by hand.
pub fn full_prelude() -> String {
    prelude_for([DType::F16, DType::BF16, DType::C64])
}
