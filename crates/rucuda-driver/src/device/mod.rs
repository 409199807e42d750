//! Driver initialisation, versions and devices.

pub(crate) mod attribute;
pub(crate) mod compute_mode;
pub(crate) mod peer;

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, CStr};
use std::sync::OnceLock;

use rucuda_driver_sys::CUdevice;

use crate::device::attribute::DeviceAttribute;
use crate::error::{call, Error, Result};

static INIT: OnceLock<Result<()>> = OnceLock::new();

/// Initialises the driver (`cuInit`) once per process; every entry point of this crate
/// calls it, so users need not (PyCUDA's `init`).
///
/// ```no_run
/// rucuda_driver::init()?;
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub fn init() -> Result<()> {
    INIT.get_or_init(|| {
        // SAFETY: cuInit takes a flags word that must be 0.
        unsafe { call!(cuInit(0)) }
    })
    .clone()
}

/// The CUDA version of the installed driver (`cuDriverGetVersion`): 13000 is 13.0.
pub fn driver_version() -> Result<i32> {
    Ok(crate::error::driver()?.version())
}

/// The CUDA version of the headers rucuda was built from, as `(major, minor, 0)` like
/// PyCUDA's `get_version()`.
pub fn get_version() -> (i32, i32, i32) {
    let v = rucuda_driver_sys::HEADER_CUDA_VERSION;
    (v / 1000, (v % 1000) / 10, 0)
}

/// A CUDA device (an ordinal), cheap to copy, compared and hashed by ordinal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Device {
    raw: CUdevice,
}

impl Device {
    /// How many devices the driver sees.
    ///
    /// ```no_run
    /// println!("{} CUDA devices", rucuda_driver::Device::count()?);
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn count() -> Result<usize> {
        init()?;
        let mut n: c_int = 0;
        // SAFETY: writes one int.
        unsafe { call!(cuDeviceGetCount(&mut n))? };
        Ok(n.max(0) as usize)
    }

    /// The device with this ordinal.
    pub fn get(ordinal: usize) -> Result<Device> {
        init()?;
        let ordinal =
            c_int::try_from(ordinal).map_err(|_| Error::invalid("device ordinal too large"))?;
        let mut raw: CUdevice = 0;
        // SAFETY: writes one CUdevice.
        unsafe { call!(cuDeviceGet(&mut raw, ordinal))? };
        Ok(Device { raw })
    }

    /// The device at a PCI bus id such as `0000:1b:00.0`.
    pub fn by_pci_bus_id(bus_id: &str) -> Result<Device> {
        init()?;
        let c = std::ffi::CString::new(bus_id)
            .map_err(|_| Error::invalid("PCI bus id contains NUL"))?;
        let mut raw: CUdevice = 0;
        // SAFETY: reads a NUL-terminated string, writes one CUdevice.
        unsafe { call!(cuDeviceGetByPCIBusId(&mut raw, c.as_ptr()))? };
        Ok(Device { raw })
    }

    /// Every device, in ordinal order.
    pub fn all() -> Result<Vec<Device>> {
        (0..Device::count()?).map(Device::get).collect()
    }

    /// The raw handle.
    pub fn raw(self) -> CUdevice {
        self.raw
    }

    /// The ordinal.
    pub fn ordinal(self) -> usize {
        self.raw as usize
    }

    /// The device's name (`NVIDIA H100 80GB HBM3`).
    pub fn name(self) -> Result<String> {
        let mut buf = [0 as c_char; 256];
        // SAFETY: writes at most `len` bytes, NUL-terminated.
        unsafe {
            call!(cuDeviceGetName(
                buf.as_mut_ptr(),
                buf.len() as c_int,
                self.raw
            ))?
        };
        Ok(c_buf_to_string(&buf))
    }

    /// The PCI bus id (`0000:1b:00.0`).
    pub fn pci_bus_id(self) -> Result<String> {
        let mut buf = [0 as c_char; 64];
        // SAFETY: writes at most `len` bytes, NUL-terminated.
        unsafe {
            call!(cuDeviceGetPCIBusId(
                buf.as_mut_ptr(),
                buf.len() as c_int,
                self.raw
            ))?
        };
        Ok(c_buf_to_string(&buf))
    }

    /// The device's UUID, 16 bytes.
    pub fn uuid(self) -> Result<[u8; 16]> {
        let mut u = rucuda_driver_sys::CUuuid::default();
        // SAFETY: writes one CUuuid.
        unsafe { call!(cuDeviceGetUuid_v2(&mut u, self.raw))? };
        Ok(u.bytes.map(|b| b as u8))
    }

    /// The UUID in NVIDIA's text form (`GPU-xxxxxxxx-xxxx-...`).
    pub fn uuid_string(self) -> Result<String> {
        let b = self.uuid()?;
        let hex: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
        Ok(format!(
            "GPU-{}-{}-{}-{}-{}",
            hex[0..4].concat(),
            hex[4..6].concat(),
            hex[6..8].concat(),
            hex[8..10].concat(),
            hex[10..16].concat()
        ))
    }

    /// `(major, minor)`: (9, 0) on a Hopper H100.
    pub fn compute_capability(self) -> Result<(i32, i32)> {
        Ok((
            self.attribute(DeviceAttribute::ComputeCapabilityMajor)?,
            self.attribute(DeviceAttribute::ComputeCapabilityMinor)?,
        ))
    }

    /// Total device memory in bytes.
    pub fn total_memory(self) -> Result<usize> {
        let mut bytes = 0usize;
        // SAFETY: writes one size_t.
        unsafe { call!(cuDeviceTotalMem_v2(&mut bytes, self.raw))? };
        Ok(bytes)
    }

    /// One attribute's value.
    ///
    /// ```no_run
    /// use rucuda_driver::{Device, DeviceAttribute};
    /// let sms = Device::get(0)?.attribute(DeviceAttribute::MultiprocessorCount)?;
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn attribute(self, attr: DeviceAttribute) -> Result<i32> {
        let mut v: c_int = 0;
        // SAFETY: writes one int.
        unsafe { call!(cuDeviceGetAttribute(&mut v, attr.raw(), self.raw))? };
        Ok(v)
    }

    /// Every attribute this driver answers, by name (PyCUDA's `get_attributes`). Attributes
    /// the driver does not know (older than our headers) are left out.
    pub fn attributes(self) -> Result<BTreeMap<&'static str, i32>> {
        let mut map = BTreeMap::new();
        for &a in DeviceAttribute::ALL {
            match self.attribute(a) {
                Ok(v) => {
                    map.insert(a.name(), v);
                }
                Err(e)
                    if e.code() == Some(rucuda_driver_sys::CUresult::CUDA_ERROR_INVALID_VALUE) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(map)
    }

    /// Whether this device can access `peer`'s memory directly.
    pub fn can_access_peer(self, peer: Device) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: writes one int.
        unsafe { call!(cuDeviceCanAccessPeer(&mut v, self.raw, peer.raw))? };
        Ok(v != 0)
    }
}

fn c_buf_to_string(buf: &[c_char]) -> String {
    // SAFETY: c_char and u8 have the same size and alignment.
    let bytes: &[u8] = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast(), buf.len()) };
    CStr::from_bytes_until_nul(bytes)
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned())
}
