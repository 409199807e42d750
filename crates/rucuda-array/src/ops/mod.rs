//! NumPy-style operations on [`GpuArray`](crate::GpuArray)s, each a built-in kernel
//! memoized per (context, kernel signature).

pub(crate) mod device_code;
pub(crate) mod engine;
mod key;
mod params;

pub use device_code::{kernel_helpers, BinaryOp, MathFn, UnaryOp};
pub use engine::{clear_kernel_memo, memoized_kernel_count};
pub use key::{IndexMode, MathSpecial, OpKey};
mod promote;
pub use promote::{Promote, PromoteWeak, RealPart, TrueDivide};
pub(crate) mod apply;
pub(crate) mod operand;
pub use operand::BinaryOperand;
mod arith;
mod compare;
mod select;
pub use select::{if_positive, where_, where_scalars};
mod index;
pub use index::{multi_put, multi_take};
mod complex;
mod join;
pub use join::{concatenate, stack};
