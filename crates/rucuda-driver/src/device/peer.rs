//! Peer access between devices: whether one device can reach another's memory
//! ([`Device::can_access_peer`], [`Device::p2p_attribute`], [`Device::p2p_info`]) and
//! turning it on for a pair of contexts ([`Context::enable_peer_access`],
//! [`Context::disable_peer_access`], PyCUDA's names).
//!
//! Access is one-directional and per context: after `a.enable_peer_access(&b)`, kernels
//! running in `a` may dereference device addresses allocated in `b` (with unified
//! addressing, which every 64-bit platform has, the addresses are unique across devices,
//! so a buffer of `b` can be passed to a kernel of `a` as is). Enabling twice fails with
//! `CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`; disabling what was not enabled fails with
//! `CUDA_ERROR_PEER_ACCESS_NOT_ENABLED`. Copies between devices (`cuMemcpyPeer`) need no
//! peer access; they are faster with it.
//!
//! ```no_run
//! use rucuda_driver::*;
//! let (d0, d1) = (Device::get(0)?, Device::get(1)?);
//! if d0.can_access_peer(d1)? {
//!     let (c0, c1) = (d0.primary_context()?, d1.primary_context()?);
//!     c0.enable_peer_access(&c1)?;
//!     println!("rank {}", d0.p2p_attribute(d1, P2PAttribute::PerformanceRank)?);
//!     // kernels of c0 may now read and write c1's buffers
//!     c0.disable_peer_access(&c1)?;
//! }
//! # Ok::<(), Error>(())
//! ```

use std::ffi::c_int;

use rucuda_driver_sys::CUdevice_P2PAttribute;

use crate::device::Device;
use crate::error::{call, Result};

/// A property of the link from one device to another (`CUdevice_P2PAttribute`).
///
/// ```
/// use rucuda_driver::P2PAttribute;
/// assert_eq!(P2PAttribute::AccessSupported.raw().0, 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum P2PAttribute {
    /// Relative performance of the link (lower is better).
    PerformanceRank,
    /// Whether peer access is possible (1) or not (0).
    AccessSupported,
    /// Whether atomics over the link are native (1) or not (0).
    NativeAtomicSupported,
    /// Whether CUDA arrays of the peer can be accessed (1) or not (0).
    CudaArrayAccessSupported,
    /// Whether only some atomics over the link are native (1) or not (0); CUDA 13 and
    /// newer drivers only.
    OnlyPartialNativeAtomicSupported,
}

impl P2PAttribute {
    /// Every attribute.
    pub const ALL: [P2PAttribute; 5] = [
        P2PAttribute::PerformanceRank,
        P2PAttribute::AccessSupported,
        P2PAttribute::NativeAtomicSupported,
        P2PAttribute::CudaArrayAccessSupported,
        P2PAttribute::OnlyPartialNativeAtomicSupported,
    ];

    /// The C value.
    pub fn raw(self) -> CUdevice_P2PAttribute {
        use CUdevice_P2PAttribute as A;
        match self {
            P2PAttribute::PerformanceRank => A::CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK,
            P2PAttribute::AccessSupported => A::CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED,
            P2PAttribute::NativeAtomicSupported => {
                A::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED
            }
            P2PAttribute::CudaArrayAccessSupported => {
                A::CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED
            }
            P2PAttribute::OnlyPartialNativeAtomicSupported => {
                A::CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED
            }
        }
    }
}

/// The link from one device to another, every [`P2PAttribute`] read at once
/// ([`Device::p2p_info`] has an example).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct P2PInfo {
    /// [`P2PAttribute::PerformanceRank`].
    pub performance_rank: i32,
    /// [`P2PAttribute::AccessSupported`].
    pub access_supported: bool,
    /// [`P2PAttribute::NativeAtomicSupported`].
    pub native_atomic_supported: bool,
    /// [`P2PAttribute::CudaArrayAccessSupported`].
    pub cuda_array_access_supported: bool,
}

impl Device {
    /// One property of the link from this device to `peer` (`cuDeviceGetP2PAttribute`).
    ///
    /// ```no_run
    /// use rucuda_driver::{Device, P2PAttribute};
    /// let (a, b) = (Device::get(0)?, Device::get(1)?);
    /// let atomics = a.p2p_attribute(b, P2PAttribute::NativeAtomicSupported)? != 0;
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn p2p_attribute(self, peer: Device, attr: P2PAttribute) -> Result<i32> {
        crate::device::init()?;
        let mut v: c_int = 0;
        // SAFETY: writes one int; plain values.
        unsafe {
            call!(cuDeviceGetP2PAttribute(
                &mut v,
                attr.raw(),
                self.raw(),
                peer.raw()
            ))?
        };
        Ok(v)
    }

    /// The link from this device to `peer`, typed.
    ///
    /// ```no_run
    /// use rucuda_driver::Device;
    /// let info = Device::get(0)?.p2p_info(Device::get(1)?)?;
    /// println!("{info:?}");
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn p2p_info(self, peer: Device) -> Result<P2PInfo> {
        Ok(P2PInfo {
            performance_rank: self.p2p_attribute(peer, P2PAttribute::PerformanceRank)?,
            access_supported: self.p2p_attribute(peer, P2PAttribute::AccessSupported)? != 0,
            native_atomic_supported: self
                .p2p_attribute(peer, P2PAttribute::NativeAtomicSupported)?
                != 0,
            cuda_array_access_supported: self
                .p2p_attribute(peer, P2PAttribute::CudaArrayAccessSupported)?
                != 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p2p_attributes_match_the_header_and_are_distinct() {
        let raws: Vec<u32> = P2PAttribute::ALL.iter().map(|a| a.raw().0).collect();
        assert_eq!(raws, [1, 2, 3, 4, 5]);
    }
}
