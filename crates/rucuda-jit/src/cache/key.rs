//! The cache key: SHA-256 over everything a compiled image depends on.

use std::fmt;

use sha2::{Digest, Sha256};

/// The version of the key recipe and the entry format; bumping it orphans old entries.
pub const CACHE_FORMAT_VERSION: u32 = 1;

/// A cache key: the SHA-256 of the format version, the compiler's identity and version,
/// the backend, the target, the options, the name expressions, the source and the
/// contents of every header the source includes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheKey(pub [u8; 32]);

impl CacheKey {
    /// The key as 64 lowercase hex digits (the entry's file name stem).
    ///
    /// ```
    /// let k = rucuda_jit::cache::CacheKey([0xab; 32]);
    /// assert_eq!(&k.hex()[..4], "abab");
    /// assert_eq!(k.hex().len(), 64);
    /// ```
    pub fn hex(&self) -> String {
        hex(&self.0)
    }
}

impl fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CacheKey({})", self.hex())
    }
}

impl fmt::Display for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// What a key is computed from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyInput<'a> {
    /// The compiler's identity and version (NVRTC's version and library size, or
    /// nvcc's `--version` output).
    pub compiler: &'a str,
    /// `nvrtc` or `nvcc`.
    pub backend: &'a str,
    /// The target: architecture, output kind and nvcc's `-code`.
    pub target: &'a str,
    /// The exact options the compiler gets.
    pub args: &'a [String],
    /// The name expressions whose lowered names are stored.
    pub name_expressions: &'a [String],
    /// The source as the compiler gets it (after any `extern "C"` wrapping).
    pub source: &'a str,
    /// The digest of every included header (see the includes module).
    pub headers: &'a [u8; 32],
}

/// Feeds one field: a tag, the length, the bytes, so no two inputs hash alike.
fn field(h: &mut Sha256, tag: &[u8], bytes: &[u8]) {
    h.update(tag);
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

impl KeyInput<'_> {
    /// The key.
    pub(crate) fn key(&self) -> CacheKey {
        let mut h = Sha256::new();
        field(&mut h, b"format", &CACHE_FORMAT_VERSION.to_le_bytes());
        field(&mut h, b"compiler", self.compiler.as_bytes());
        field(&mut h, b"backend", self.backend.as_bytes());
        field(&mut h, b"target", self.target.as_bytes());
        field(&mut h, b"args", &(self.args.len() as u64).to_le_bytes());
        for a in self.args {
            field(&mut h, b"arg", a.as_bytes());
        }
        field(
            &mut h,
            b"names",
            &(self.name_expressions.len() as u64).to_le_bytes(),
        );
        for n in self.name_expressions {
            field(&mut h, b"name", n.as_bytes());
        }
        field(&mut h, b"source", self.source.as_bytes());
        field(&mut h, b"headers", self.headers);
        CacheKey(h.finalize().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> (Vec<String>, Vec<String>, [u8; 32]) {
        (
            vec!["--gpu-architecture=sm_90".to_string()],
            vec![],
            [0u8; 32],
        )
    }

    #[test]
    fn every_input_changes_the_key() {
        let (args, names, headers) = base();
        let input = KeyInput {
            compiler: "nvrtc 13.0 (1 bytes)",
            backend: "nvrtc",
            target: "sm_90 cubin",
            args: &args,
            name_expressions: &names,
            source: "__global__ void k() {}",
            headers: &headers,
        };
        let k = input.key();
        assert_eq!(k, input.key(), "deterministic");
        let other_args = vec!["--gpu-architecture=sm_80".to_string()];
        let split_args = vec!["--gpu-architecture=".to_string(), "sm_90".to_string()];
        let other_names = vec!["k".to_string()];
        let other_headers = [1u8; 32];
        let variants = [
            KeyInput {
                compiler: "nvrtc 13.1 (1 bytes)",
                ..input
            },
            KeyInput {
                backend: "nvcc",
                ..input
            },
            KeyInput {
                target: "sm_90 ptx",
                ..input
            },
            KeyInput {
                args: &other_args,
                ..input
            },
            KeyInput {
                args: &split_args,
                ..input
            },
            KeyInput {
                name_expressions: &other_names,
                ..input
            },
            KeyInput {
                source: "__global__ void k() { }",
                ..input
            },
            KeyInput {
                headers: &other_headers,
                ..input
            },
        ];
        let mut seen = vec![k];
        for v in variants {
            let kv = v.key();
            assert!(!seen.contains(&kv), "{v:?}");
            seen.push(kv);
        }
    }
}
