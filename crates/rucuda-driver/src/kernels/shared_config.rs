//! Shared-memory bank configuration (PyCUDA's `shared_config`) of contexts and
//! functions.

use rucuda_driver_sys::CUsharedconfig;

use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::kernels::function::Function;

/// Shared-memory bank width (PyCUDA's `shared_config`).
///
/// Only Kepler GPUs had a configurable bank width. CUDA deprecated
/// `cuCtxSetSharedMemConfig`/`cuFuncSetSharedMemConfig` in 12.x: on every GPU CUDA 13
/// supports, banks are 4 bytes wide, setting is a no-op and reading returns
/// `FourByteBankSize`. The calls are kept for PyCUDA code while the driver still exports
/// them; where it does not, they fail with [`Error::MissingFunction`].
///
/// ```
/// use rucuda_driver::SharedConfig;
/// assert_eq!(SharedConfig::from_raw(SharedConfig::EightByteBankSize.raw()), Some(SharedConfig::EightByteBankSize));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SharedConfig {
    /// The device's default width.
    DefaultBankSize,
    /// Four-byte banks.
    FourByteBankSize,
    /// Eight-byte banks (Kepler only).
    EightByteBankSize,
}

impl SharedConfig {
    /// The `CUsharedconfig` value.
    pub fn raw(self) -> CUsharedconfig {
        match self {
            SharedConfig::DefaultBankSize => CUsharedconfig::CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE,
            SharedConfig::FourByteBankSize => {
                CUsharedconfig::CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE
            }
            SharedConfig::EightByteBankSize => {
                CUsharedconfig::CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE
            }
        }
    }

    /// The configuration of a `CUsharedconfig` value, `None` when unknown.
    pub fn from_raw(raw: CUsharedconfig) -> Option<SharedConfig> {
        [
            SharedConfig::DefaultBankSize,
            SharedConfig::FourByteBankSize,
            SharedConfig::EightByteBankSize,
        ]
        .into_iter()
        .find(|c| c.raw() == raw)
    }
}

impl Context {
    /// Sets the shared-memory bank width (PyCUDA's `Context.set_shared_config`); a no-op
    /// on current GPUs, see [`SharedConfig`].
    ///
    /// ```no_run
    /// use rucuda_driver::{Device, SharedConfig};
    /// let ctx = Device::get(0)?.primary_context()?;
    /// ctx.set_shared_config(SharedConfig::FourByteBankSize)?;
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn set_shared_config(&self, config: SharedConfig) -> Result<()> {
        self.bind()?;
        // SAFETY: a plain value; the context is current.
        unsafe { call!(cuCtxSetSharedMemConfig(config.raw())) }
    }

    /// The shared-memory bank width (PyCUDA's `Context.get_shared_config`).
    ///
    /// ```no_run
    /// use rucuda_driver::Device;
    /// let ctx = Device::get(0)?.primary_context()?;
    /// println!("{:?}", ctx.shared_config()?);
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn shared_config(&self) -> Result<SharedConfig> {
        self.bind()?;
        let mut raw = CUsharedconfig(0);
        // SAFETY: writes one value; the context is current.
        unsafe { call!(cuCtxGetSharedMemConfig(&mut raw))? };
        SharedConfig::from_raw(raw)
            .ok_or_else(|| Error::invalid(format!("unknown shared memory config {}", raw.0)))
    }
}

impl Function {
    /// Sets this kernel's shared-memory bank width (PyCUDA's `Function.set_shared_config`);
    /// a no-op on current GPUs, see [`SharedConfig`].
    ///
    /// ```no_run
    /// # use rucuda_driver::*;
    /// # let ctx = Device::get(0)?.primary_context()?;
    /// # let kernel = Module::load_data(&ctx, b"")?.function("k")?;
    /// kernel.set_shared_config(SharedConfig::DefaultBankSize)?;
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn set_shared_config(&self, config: SharedConfig) -> Result<()> {
        self.context().bind()?;
        // SAFETY: a plain value; the function is alive.
        unsafe { call!(cuFuncSetSharedMemConfig(self.raw(), config.raw())) }
    }
}
