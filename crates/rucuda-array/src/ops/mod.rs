//! NumPy-style operations on [`GpuArray`](crate::GpuArray)s, each a built-in kernel
//! memoized per (context, kernel signature).

mod device_code;
pub(crate) mod engine;
mod key;
mod params;

pub use device_code::{BinaryOp, MathFn, UnaryOp};
pub use engine::{clear_kernel_memo, memoized_kernel_count};
pub use key::{IndexMode, MathSpecial, OpKey};
mod promote;
pub use promote::{Promote, PromoteWeak, RealPart, TrueDivide};
