//! Sharing device memory with another process: [`IpcMemHandle`] (64 opaque bytes from
//! `cuIpcGetMemHandle`, PyCUDA's `mem_get_ipc_handle`), serialisable as bytes, hex or
//! serde, and [`IpcMemory`], the other process's mapping of it (`cuIpcOpenMemHandle`,
//! PyCUDA's `IPCMemoryHandle`), closed when dropped.

use std::fmt;
use std::str::FromStr;

use rucuda_driver_sys::{CUdeviceptr, CUipcMemHandle};

use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::memory::device_buffer::DeviceBuffer;
use crate::memory::kernel_arg::memory_kernel_arg;
use crate::memory::pointer::DevicePtrMut;
use crate::memory::tracking::DevicePtr;
use crate::memory::tracking::{Access, DeviceRange, UseLog};
use crate::repr::DeviceRepr;

/// Size of an IPC handle in bytes.
pub const IPC_HANDLE_SIZE: usize = rucuda_driver_sys::CU_IPC_HANDLE_SIZE as usize;

bitflags::bitflags! {
    /// Flags for opening an IPC handle (PyCUDA's `ipc_mem_flags`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct IpcMemFlags: u32 {
        /// Enable peer access to the exporting device lazily, when needed.
        const LAZY_ENABLE_PEER_ACCESS = 1;
    }
}

/// A handle to a device allocation that another process can open with
/// [`IpcMemory::open`]. It names the whole allocation (from its base address), so export
/// buffers made with [`DeviceBuffer::uninit`] (`cuMemAlloc`; stream-ordered pool memory
/// cannot be shared this way).
///
/// Pass it as [`IpcMemHandle::to_hex`] text (an environment variable, a command line) or
/// as bytes; it also serialises with serde as that hex string.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let buf = DeviceBuffer::<f32>::zeros(&ctx, 1 << 20)?;
/// let handle = IpcMemHandle::new(&buf)?;
/// std::process::Command::new("worker").env("CUDA_IPC_HANDLE", handle.to_hex()).status().ok();
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpcMemHandle([u8; IPC_HANDLE_SIZE]);

impl fmt::Debug for IpcMemHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IpcMemHandle({})", self.to_hex())
    }
}

impl IpcMemHandle {
    /// The handle of `buf`'s allocation (`cuIpcGetMemHandle`).
    pub fn new<T: DeviceRepr>(buf: &DeviceBuffer<T>) -> Result<IpcMemHandle> {
        if buf.is_empty() {
            return Err(Error::invalid("an empty buffer has no allocation to share"));
        }
        buf.context().bind()?;
        let mut raw = CUipcMemHandle::default();
        // SAFETY: writes one handle; the pointer is the base of the buffer's allocation.
        unsafe { call!(cuIpcGetMemHandle(&mut raw, buf.device_range().address()))? };
        Ok(IpcMemHandle(raw.reserved.map(|b| b as u8)))
    }

    /// The handle's bytes.
    pub fn to_bytes(&self) -> [u8; IPC_HANDLE_SIZE] {
        self.0
    }

    /// The handle's bytes, borrowed.
    pub fn as_bytes(&self) -> &[u8; IPC_HANDLE_SIZE] {
        &self.0
    }

    /// A handle from its 64 bytes (as another process sent them).
    ///
    /// ```
    /// use rucuda_driver::IpcMemHandle;
    /// let h = IpcMemHandle::from_bytes(&[7u8; 64])?;
    /// assert_eq!(h.to_bytes(), [7u8; 64]);
    /// assert!(IpcMemHandle::from_bytes(&[0u8; 63]).is_err());
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<IpcMemHandle> {
        let array: [u8; IPC_HANDLE_SIZE] = bytes.try_into().map_err(|_| {
            Error::invalid(format!(
                "an IPC memory handle has {IPC_HANDLE_SIZE} bytes, not {}",
                bytes.len()
            ))
        })?;
        Ok(IpcMemHandle(array))
    }

    /// The handle as 128 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(2 * IPC_HANDLE_SIZE);
        for b in self.0 {
            s.push(DIGITS[(b >> 4) as usize] as char);
            s.push(DIGITS[(b & 15) as usize] as char);
        }
        s
    }

    /// A handle from 128 hex digits (either case; surrounding whitespace ignored).
    ///
    /// ```
    /// use rucuda_driver::IpcMemHandle;
    /// let h = IpcMemHandle::from_bytes(&[0xAB; 64])?;
    /// assert_eq!(IpcMemHandle::from_hex(&h.to_hex())?, h);
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn from_hex(hex: &str) -> Result<IpcMemHandle> {
        let hex = hex.trim().as_bytes();
        if hex.len() != 2 * IPC_HANDLE_SIZE {
            return Err(Error::invalid(format!(
                "an IPC memory handle is {} hex digits, not {}",
                2 * IPC_HANDLE_SIZE,
                hex.len()
            )));
        }
        let digit = |c: u8| -> Result<u8> {
            match c {
                b'0'..=b'9' => Ok(c - b'0'),
                b'a'..=b'f' => Ok(c - b'a' + 10),
                b'A'..=b'F' => Ok(c - b'A' + 10),
                _ => Err(Error::invalid(format!(
                    "{:?} is not a hex digit in an IPC memory handle",
                    c as char
                ))),
            }
        };
        let mut out = [0u8; IPC_HANDLE_SIZE];
        for (i, pair) in hex.chunks_exact(2).enumerate() {
            out[i] = (digit(pair[0])? << 4) | digit(pair[1])?;
        }
        Ok(IpcMemHandle(out))
    }

    fn raw(&self) -> CUipcMemHandle {
        CUipcMemHandle {
            reserved: self.0.map(|b| b as std::ffi::c_char),
        }
    }
}

impl fmt::Display for IpcMemHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl FromStr for IpcMemHandle {
    type Err = Error;
    fn from_str(s: &str) -> Result<IpcMemHandle> {
        IpcMemHandle::from_hex(s)
    }
}

impl serde::Serialize for IpcMemHandle {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> serde::Deserialize<'de> for IpcMemHandle {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        IpcMemHandle::from_hex(&s).map_err(serde::de::Error::custom)
    }
}

/// Another process's device allocation, mapped into this one (PyCUDA's
/// `IPCMemoryHandle`). It can be copied to and from, memset and passed to kernels like a
/// buffer of bytes; closed with `cuIpcCloseMemHandle` when dropped. The exporting process
/// must keep the allocation alive meanwhile.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let handle: IpcMemHandle = std::env::var("CUDA_IPC_HANDLE").unwrap_or_default().parse()?;
/// let shared = IpcMemory::open(&ctx, &handle, IpcMemFlags::LAZY_ENABLE_PEER_ACCESS)?;
/// let values: Vec<f32> = from_device(&ctx, &shared, shared.byte_len() / 4)?;
/// shared.close()?;
/// # Ok::<(), Error>(())
/// ```
pub struct IpcMemory {
    ptr: CUdeviceptr,
    bytes: usize,
    ctx: Context,
    uses: UseLog,
}

impl fmt::Debug for IpcMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IpcMemory")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl IpcMemory {
    /// Maps the allocation `handle` names into `ctx` (`cuIpcOpenMemHandle`). A handle
    /// cannot be opened in the process that exported it.
    pub fn open(ctx: &Context, handle: &IpcMemHandle, flags: IpcMemFlags) -> Result<IpcMemory> {
        ctx.bind()?;
        let mut ptr: CUdeviceptr = 0;
        // SAFETY: writes one pointer; closed on drop.
        unsafe { call!(cuIpcOpenMemHandle_v2(&mut ptr, handle.raw(), flags.bits()))? };
        let mut me = IpcMemory {
            ptr,
            bytes: 0,
            ctx: ctx.clone(),
            uses: UseLog::new(),
        };
        let (mut base, mut size): (CUdeviceptr, usize) = (0, 0);
        // SAFETY: writes one pointer and one size about a mapped address.
        unsafe { call!(cuMemGetAddressRange_v2(&mut base, &mut size, ptr))? };
        me.bytes = size.saturating_sub((ptr - base) as usize);
        Ok(me)
    }

    /// The context it is mapped in.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    fn release(&self) -> Result<()> {
        // Where the wait fails the mapping is kept rather than closed under queued work.
        self.uses.wait_on_host(Access::Write)?;
        self.ctx.make_current()?;
        // SAFETY: opened by `open`, closed once; no recorded use is pending.
        unsafe { call!(cuIpcCloseMemHandle(self.ptr)) }
    }

    /// Unmaps now and returns any error (PyCUDA's `close`).
    pub fn close(self) -> Result<()> {
        let mut me = std::mem::ManuallyDrop::new(self);
        let r = me.release();
        // SAFETY: `me` is never dropped, so the context handle is dropped exactly once.
        unsafe {
            std::ptr::drop_in_place(&mut me.ctx);
            std::ptr::drop_in_place(&mut me.uses);
        }
        r
    }
}

impl Drop for IpcMemory {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            self.ctx.defer_error(e);
        }
    }
}

impl DevicePtr for IpcMemory {
    #[inline]
    fn device_range(&self) -> DeviceRange<'_> {
        // SAFETY: the memory lives as long as `self`; `uses` is its one log.
        unsafe { DeviceRange::new(self.ptr, self.bytes, &self.uses) }
    }
}

impl DevicePtrMut for IpcMemory {}

memory_kernel_arg!(Read; [] &IpcMemory);
memory_kernel_arg!(Write; [] &mut IpcMemory);

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> IpcMemHandle {
        let mut b = [0u8; 64];
        for (i, x) in b.iter_mut().enumerate() {
            *x = (i as u8).wrapping_mul(37) ^ 0x5A;
        }
        IpcMemHandle(b)
    }

    #[test]
    fn handles_round_trip_through_bytes_hex_and_serde() {
        let h = sample();
        assert_eq!(
            IpcMemHandle::from_bytes(&h.to_bytes()).expect("64 bytes"),
            h
        );
        let hex = h.to_hex();
        assert_eq!(hex.len(), 128);
        assert!(hex
            .bytes()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_eq!(IpcMemHandle::from_hex(&hex).expect("hex"), h);
        assert_eq!(
            IpcMemHandle::from_hex(&format!("  {}\n", hex.to_uppercase())).expect("upper"),
            h
        );
        assert_eq!(hex.parse::<IpcMemHandle>().expect("FromStr"), h);
        assert_eq!(h.to_string(), hex);
        let json = serde_json::to_string(&h).expect("serialises");
        assert_eq!(json, format!("\"{hex}\""));
        assert_eq!(
            serde_json::from_str::<IpcMemHandle>(&json).expect("deserialises"),
            h
        );
        assert_eq!(IPC_HANDLE_SIZE, std::mem::size_of::<CUipcMemHandle>());
        assert_eq!(h.raw().reserved[1] as u8, h.0[1]);
    }

    #[test]
    fn malformed_handles_are_refused_with_a_reason() {
        let e = IpcMemHandle::from_bytes(&[0u8; 65]).expect_err("65 bytes");
        assert!(e.to_string().contains("65"), "{e}");
        let e = IpcMemHandle::from_hex("abc").expect_err("short");
        assert!(e.to_string().contains("128 hex digits"), "{e}");
        let mut bad = sample().to_hex();
        bad.replace_range(10..11, "g");
        let e = IpcMemHandle::from_hex(&bad).expect_err("not hex");
        assert!(e.to_string().contains("'g'"), "{e}");
        assert!(serde_json::from_str::<IpcMemHandle>("\"zz\"").is_err());
        assert!(serde_json::from_str::<IpcMemHandle>("12").is_err());
    }

    #[test]
    fn ipc_flags_match_the_driver_constant() {
        assert_eq!(
            IpcMemFlags::LAZY_ENABLE_PEER_ACCESS.bits(),
            rucuda_driver_sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS.0
        );
    }
}
