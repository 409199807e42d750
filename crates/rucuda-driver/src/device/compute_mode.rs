//! How a device may be shared between processes (PyCUDA's `compute_mode`).

use rucuda_driver_sys::CUcomputemode;

use crate::device::attribute::DeviceAttribute;
use crate::device::Device;
use crate::error::Result;

/// How a device may be shared between processes (PyCUDA's `compute_mode`), as read
/// from the device with [`Device::compute_mode`].
///
/// Read from the driver, so values this crate does not know (such as the exclusive-thread
/// mode CUDA 8 removed, 1) come back as `Unknown` rather than failing.
///
/// ```
/// use rucuda_driver::ComputeMode;
/// assert_eq!(ComputeMode::from_raw(3), ComputeMode::ExclusiveProcess);
/// assert_eq!(ComputeMode::from_raw(1), ComputeMode::Unknown(1));
/// assert_eq!(ComputeMode::Prohibited.raw(), 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComputeMode {
    /// Any number of contexts from any number of processes.
    Default,
    /// No context may be created.
    Prohibited,
    /// One context, from one process, at a time.
    ExclusiveProcess,
    /// A value this crate does not know.
    Unknown(i32),
}

impl ComputeMode {
    /// The mode for a `CUcomputemode` value.
    pub fn from_raw(raw: i32) -> ComputeMode {
        match raw {
            0 => ComputeMode::Default,
            2 => ComputeMode::Prohibited,
            3 => ComputeMode::ExclusiveProcess,
            v => ComputeMode::Unknown(v),
        }
    }

    /// The `CUcomputemode` value.
    pub fn raw(self) -> i32 {
        let v = match self {
            ComputeMode::Default => CUcomputemode::CU_COMPUTEMODE_DEFAULT,
            ComputeMode::Prohibited => CUcomputemode::CU_COMPUTEMODE_PROHIBITED,
            ComputeMode::ExclusiveProcess => CUcomputemode::CU_COMPUTEMODE_EXCLUSIVE_PROCESS,
            ComputeMode::Unknown(v) => return v,
        };
        v.0 as i32
    }
}

impl Device {
    /// The device's compute mode (the `COMPUTE_MODE` attribute, typed).
    ///
    /// ```no_run
    /// use rucuda_driver::{ComputeMode, Device};
    /// if Device::get(0)?.compute_mode()? == ComputeMode::Prohibited {
    ///     println!("device 0 accepts no contexts");
    /// }
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn compute_mode(self) -> Result<ComputeMode> {
        Ok(ComputeMode::from_raw(
            self.attribute(DeviceAttribute::ComputeMode)?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_mode_round_trips() {
        for v in -1..8 {
            assert_eq!(ComputeMode::from_raw(v).raw(), v);
        }
        assert_eq!(ComputeMode::from_raw(0), ComputeMode::Default);
        assert_eq!(ComputeMode::from_raw(2), ComputeMode::Prohibited);
    }
}
