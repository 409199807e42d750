//! Entry points for the fuzz targets under `fuzz/` (feature `fuzzing`; not a public
//! API): pure pieces of the driver layer that take user input, reachable without a GPU.

use crate::kernels::module::JitOptions;

/// The `(CUjit_option code, value)` pairs
/// [`Module::load_data_with_options`](crate::Module::load_data_with_options) passes for
/// `opts` besides the log buffers, or the error it returns before calling the driver.
pub fn jit_option_pairs(opts: &JitOptions) -> crate::error::Result<Vec<(u32, usize)>> {
    Ok(opts
        .raw_options()?
        .into_iter()
        .map(|(k, v)| (k.0, v))
        .collect())
}
