//! `init`, versions and `Device`.

use pyo3::prelude::*;
use rucuda_driver::DeviceAttribute;

use crate::context::Context;
use crate::errors::{raise, OrRaise};

/// `pycuda.driver.init(flags=0)`: loads the driver and initialises it.
#[pyfunction]
#[pyo3(signature = (flags = 0))]
pub fn init(flags: u32) -> PyResult<()> {
    if flags != 0 {
        return Err(raise(
            "LogicError",
            format!("init: flags must be 0, got {flags}"),
        ));
    }
    rucuda_driver::init().or_raise()
}

/// The CUDA version rucuda was built against, `(major, minor, 0)`.
#[pyfunction]
pub fn get_version() -> (i32, i32, i32) {
    rucuda_driver::get_version()
}

/// The driver's CUDA version as an integer (13000 for 13.0).
#[pyfunction]
pub fn get_driver_version() -> PyResult<i32> {
    rucuda_driver::driver_version().or_raise()
}

/// Every device attribute as `(NAME, value)`: the members of `device_attribute`.
#[pyfunction]
pub fn device_attribute_members() -> Vec<(&'static str, u32)> {
    DeviceAttribute::ALL
        .iter()
        .map(|a| (a.name(), a.raw().0))
        .collect()
}

/// A CUDA device (PyCUDA's `Device`).
#[pyclass(module = "rucuda._native", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Device {
    pub(crate) inner: rucuda_driver::Device,
}

#[pymethods]
impl Device {
    /// `Device(ordinal)` or `Device(pci_bus_id)`.
    #[new]
    fn new(which: &Bound<'_, PyAny>) -> PyResult<Device> {
        let inner = if let Ok(id) = which.extract::<String>() {
            rucuda_driver::Device::by_pci_bus_id(&id).or_raise()?
        } else {
            let ordinal: i64 = which.extract()?;
            let ordinal = usize::try_from(ordinal)
                .map_err(|_| raise("LogicError", format!("Device({ordinal}): negative ordinal")))?;
            rucuda_driver::Device::get(ordinal).or_raise()?
        };
        Ok(Device { inner })
    }

    /// Number of devices.
    #[staticmethod]
    fn count() -> PyResult<usize> {
        rucuda_driver::Device::count().or_raise()
    }

    fn name(&self) -> PyResult<String> {
        self.inner.name().or_raise()
    }

    fn pci_bus_id(&self) -> PyResult<String> {
        self.inner.pci_bus_id().or_raise()
    }

    fn compute_capability(&self) -> PyResult<(i32, i32)> {
        self.inner.compute_capability().or_raise()
    }

    fn total_memory(&self) -> PyResult<usize> {
        self.inner.total_memory().or_raise()
    }

    /// One attribute by its driver number.
    fn get_attribute(&self, attr: u32) -> PyResult<i32> {
        let a = DeviceAttribute::ALL
            .iter()
            .find(|a| a.raw().0 == attr)
            .ok_or_else(|| raise("LogicError", format!("unknown device attribute {attr}")))?;
        self.inner.attribute(*a).or_raise()
    }

    /// Every attribute the driver knows, by name.
    fn get_attributes_by_name(&self) -> PyResult<Vec<(&'static str, i32)>> {
        Ok(self.inner.attributes().or_raise()?.into_iter().collect())
    }

    fn can_access_peer(&self, other: &Device) -> PyResult<bool> {
        self.inner.can_access_peer(other.inner).or_raise()
    }

    /// A new context, pushed on this thread's stack.
    #[pyo3(signature = (flags = 0))]
    fn make_context(&self, flags: u32) -> PyResult<Context> {
        let flags = rucuda_driver::ContextFlags::from_bits(flags).ok_or_else(|| {
            raise(
                "LogicError",
                format!("make_context: unknown flags {flags:#x}"),
            )
        })?;
        Ok(Context::wrap(self.inner.make_context(flags).or_raise()?))
    }

    /// The device's primary context, retained (not pushed).
    fn retain_primary_context(&self) -> PyResult<Context> {
        Ok(Context::wrap(self.inner.primary_context().or_raise()?))
    }

    fn __int__(&self) -> usize {
        self.inner.ordinal()
    }

    fn __repr__(&self) -> String {
        format!("<pycuda.driver.Device {}>", self.inner.ordinal())
    }
}
