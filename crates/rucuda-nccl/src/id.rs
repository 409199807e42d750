//! [`UniqueId`]: the 128 bytes that name one communicator, made by one rank and handed to
//! the others however the program likes (a file, an environment variable, a socket, MPI).

use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::error::{call, Error, Result};
use crate::sys::bindings::ncclUniqueId;

/// The size of a unique id in bytes (`NCCL_UNIQUE_ID_BYTES`).
pub const UNIQUE_ID_BYTES: usize = 128;

/// The identity of one communicator (`ncclUniqueId`): created once by one rank with
/// [`UniqueId::new`], then given to every rank's [`Communicator::init_rank`].
///
/// It holds the network address where the creating process listens for the others (the
/// "bootstrap"), so it is only valid while that process lives, and the other ranks must
/// be able to reach that address (see the guide's chapter on scaling out).
///
/// It travels as bytes ([`as_bytes`](UniqueId::as_bytes), [`from_bytes`](UniqueId::from_bytes)),
/// as 256 hexadecimal digits ([`Display`](fmt::Display), [`FromStr`]), through serde (a
/// hex string in human-readable formats, bytes in binary ones), or through a file
/// ([`save`](UniqueId::save), [`load_waiting`](UniqueId::load_waiting)).
///
/// ```
/// use rucuda_nccl::UniqueId;
/// let id = UniqueId::from_bytes([7u8; 128]);
/// let text = id.to_string();
/// assert_eq!(text.len(), 256);
/// assert_eq!(text.parse::<UniqueId>()?, id);
/// let json = serde_json::to_string(&id).unwrap();
/// assert_eq!(serde_json::from_str::<UniqueId>(&json).unwrap(), id);
/// # Ok::<(), rucuda_nccl::Error>(())
/// ```
///
/// [`Communicator::init_rank`]: crate::Communicator::init_rank
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct UniqueId([u8; UNIQUE_ID_BYTES]);

impl UniqueId {
    /// A new id (`ncclGetUniqueId`). Call it on one rank only and send the result to the
    /// others. It needs NCCL but no GPU; NCCL picks the network interface here
    /// (`NCCL_SOCKET_IFNAME` chooses one).
    ///
    /// ```no_run
    /// let id = rucuda_nccl::UniqueId::new()?;
    /// std::env::set_var("MY_NCCL_ID", id.to_string()); // for child processes
    /// # Ok::<(), rucuda_nccl::Error>(())
    /// ```
    pub fn new() -> Result<UniqueId> {
        let mut raw = ncclUniqueId::default();
        // SAFETY: writes one ncclUniqueId through a valid pointer.
        unsafe { call!(std::ptr::null_mut(), ncclGetUniqueId(&mut raw))? };
        Ok(UniqueId::from_raw(&raw))
    }

    /// The id from its 128 bytes.
    pub const fn from_bytes(bytes: [u8; UNIQUE_ID_BYTES]) -> UniqueId {
        UniqueId(bytes)
    }

    /// The id from a slice, which must hold exactly 128 bytes.
    ///
    /// ```
    /// assert!(rucuda_nccl::UniqueId::from_slice(&[0u8; 127]).is_err());
    /// ```
    pub fn from_slice(bytes: &[u8]) -> Result<UniqueId> {
        let array: [u8; UNIQUE_ID_BYTES] = bytes.try_into().map_err(|_| {
            Error::invalid(format!(
                "a unique id has {UNIQUE_ID_BYTES} bytes, got {}",
                bytes.len()
            ))
        })?;
        Ok(UniqueId(array))
    }

    /// Its 128 bytes.
    pub const fn as_bytes(&self) -> &[u8; UNIQUE_ID_BYTES] {
        &self.0
    }

    /// Its 256 lowercase hexadecimal digits (the same as `to_string()`).
    pub fn to_hex(&self) -> String {
        self.to_string()
    }

    /// The id from 256 hexadecimal digits (either case; surrounding white space is
    /// ignored).
    pub fn from_hex(text: &str) -> Result<UniqueId> {
        let text = text.trim();
        if text.len() != 2 * UNIQUE_ID_BYTES {
            return Err(Error::invalid(format!(
                "a unique id is {} hexadecimal digits, got {} characters",
                2 * UNIQUE_ID_BYTES,
                text.len()
            )));
        }
        let mut bytes = [0u8; UNIQUE_ID_BYTES];
        for (i, pair) in text.as_bytes().chunks_exact(2).enumerate() {
            let digit = |c: u8| {
                (c as char).to_digit(16).ok_or_else(|| {
                    Error::invalid(format!(
                        "a unique id is hexadecimal; found {:?} at {}",
                        c as char,
                        2 * i
                    ))
                })
            };
            bytes[i] = (digit(pair[0])? * 16 + digit(pair[1])?) as u8;
        }
        Ok(UniqueId(bytes))
    }

    /// The id from an environment variable holding its hex form.
    pub fn from_env(name: &str) -> Result<UniqueId> {
        let value = std::env::var(name).map_err(|e| {
            Error::invalid(format!(
                "environment variable {name} holds no unique id: {e}"
            ))
        })?;
        UniqueId::from_hex(&value)
    }

    /// Writes the hex form to `path` atomically (a temporary file in the same folder,
    /// then a rename), so a reader never sees half an id.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let io = |e: std::io::Error| Error::invalid(format!("writing {}: {e}", path.display()));
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".tmp{}", std::process::id()));
        std::fs::write(&tmp, self.to_string()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// Reads an id that [`save`](UniqueId::save) wrote, waiting up to `timeout` for the
    /// file to appear (the rank that makes the id may start later than this one).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// let id = rucuda_nccl::UniqueId::load_waiting("/tmp/job42.ncclid", Duration::from_secs(60))?;
    /// # Ok::<(), rucuda_nccl::Error>(())
    /// ```
    pub fn load_waiting(path: impl AsRef<Path>, timeout: Duration) -> Result<UniqueId> {
        let path = path.as_ref();
        let start = Instant::now();
        loop {
            match std::fs::read_to_string(path) {
                Ok(text) => return UniqueId::from_hex(&text),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && start.elapsed() < timeout => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => {
                    return Err(Error::invalid(format!(
                        "reading the unique id from {}: {e}",
                        path.display()
                    )))
                }
            }
        }
    }

    pub(crate) fn to_raw(self) -> ncclUniqueId {
        let mut raw = ncclUniqueId::default();
        for (dst, src) in raw.internal.iter_mut().zip(self.0) {
            *dst = src as std::ffi::c_char;
        }
        raw
    }

    fn from_raw(raw: &ncclUniqueId) -> UniqueId {
        let mut bytes = [0u8; UNIQUE_ID_BYTES];
        for (dst, src) in bytes.iter_mut().zip(raw.internal) {
            *dst = src as u8;
        }
        UniqueId(bytes)
    }
}

impl fmt::Display for UniqueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The full id is long; its start tells ids apart in logs.
        write!(f, "UniqueId(")?;
        for b in &self.0[..8] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "…)")
    }
}

impl FromStr for UniqueId {
    type Err = Error;

    fn from_str(s: &str) -> Result<UniqueId> {
        UniqueId::from_hex(s)
    }
}

impl From<[u8; UNIQUE_ID_BYTES]> for UniqueId {
    fn from(bytes: [u8; UNIQUE_ID_BYTES]) -> Self {
        UniqueId(bytes)
    }
}

impl serde::Serialize for UniqueId {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.serialize_str(&self.to_string())
        } else {
            serializer.serialize_bytes(&self.0)
        }
    }
}

impl<'de> serde::Deserialize<'de> for UniqueId {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = UniqueId;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an NCCL unique id: 256 hex digits or 128 bytes")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<UniqueId, E> {
                UniqueId::from_hex(v).map_err(E::custom)
            }

            fn visit_bytes<E: serde::de::Error>(
                self,
                v: &[u8],
            ) -> std::result::Result<UniqueId, E> {
                UniqueId::from_slice(v).map_err(E::custom)
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<UniqueId, A::Error> {
                let mut bytes = [0u8; UNIQUE_ID_BYTES];
                for (i, slot) in bytes.iter_mut().enumerate() {
                    *slot = seq
                        .next_element()?
                        .ok_or_else(|| serde::de::Error::invalid_length(i, &self))?;
                }
                if seq.next_element::<u8>()?.is_some() {
                    return Err(serde::de::Error::invalid_length(UNIQUE_ID_BYTES + 1, &self));
                }
                Ok(UniqueId(bytes))
            }
        }
        if deserializer.is_human_readable() {
            deserializer.deserialize_str(Visitor)
        } else {
            deserializer.deserialize_bytes(Visitor)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> UniqueId {
        let mut bytes = [0u8; UNIQUE_ID_BYTES];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i * 37 + 11) as u8;
        }
        UniqueId::from_bytes(bytes)
    }

    #[test]
    fn hex_round_trips_and_rejects_bad_text() {
        let id = sample();
        let hex = id.to_hex();
        assert_eq!(hex.len(), 256);
        assert!(hex.starts_with("0b30"), "{hex}");
        assert_eq!(UniqueId::from_hex(&hex).unwrap(), id);
        assert_eq!(UniqueId::from_hex(&hex.to_uppercase()).unwrap(), id);
        assert_eq!(format!(" {hex}\n").parse::<UniqueId>().unwrap(), id);
        assert!(UniqueId::from_hex(&hex[..254]).is_err());
        let bad = format!("zz{}", &hex[2..]);
        let e = UniqueId::from_hex(&bad).unwrap_err().to_string();
        assert!(e.contains("'z'"), "{e}");
        assert_eq!(format!("{id:?}"), "UniqueId(0b30557a9fc4e90e…)");
    }

    #[test]
    fn raw_conversion_keeps_every_byte() {
        let id = sample();
        let raw = id.to_raw();
        assert_eq!(UniqueId::from_raw(&raw), id);
        assert_eq!(std::mem::size_of_val(&raw), UNIQUE_ID_BYTES);
    }

    #[test]
    fn serde_forms() {
        let id = sample();
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, format!("\"{id}\""));
        assert_eq!(serde_json::from_str::<UniqueId>(&json).unwrap(), id);
        // A JSON array of numbers (what a byte serializer would give) also reads back.
        let array = serde_json::to_string(&id.as_bytes().to_vec()).unwrap();
        let value: serde_json::Value = serde_json::from_str(&array).unwrap();
        let back: std::result::Result<UniqueId, _> = serde_json::from_value(value);
        // Human-readable formats ask for a string; the array form is refused clearly.
        assert!(back.is_err());
        assert!(serde_json::from_str::<UniqueId>("\"abc\"").is_err());
    }

    #[test]
    fn files_round_trip_and_wait() {
        let tmp = tempfile::Builder::new()
            .prefix("rucuda-nccl-id-")
            .tempdir()
            .unwrap();
        let dir = tmp.path();
        let path = dir.join("id");
        let id = sample();
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                id.save(&path).unwrap();
            })
        };
        let read = UniqueId::load_waiting(&path, Duration::from_secs(10)).unwrap();
        writer.join().unwrap();
        assert_eq!(read, id);
        let missing = UniqueId::load_waiting(dir.join("never"), Duration::from_millis(50));
        assert!(missing.is_err());
    }

    #[test]
    fn slices_and_env() {
        let id = sample();
        assert_eq!(UniqueId::from_slice(id.as_bytes()).unwrap(), id);
        assert!(UniqueId::from_slice(&[1, 2, 3]).is_err());
        assert!(UniqueId::from_env("RUCUDA_NCCL_TEST_SURELY_UNSET").is_err());
    }
}
