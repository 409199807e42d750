//! The defaults [`CompileOptions`](super::CompileOptions) takes from the environment:
//! the disk cache's folder (`RUCUDA_CACHE_DIR`, `RUCUDA_DISABLE_CACHE`) and its size cap
//! (`RUCUDA_CACHE_MAX_SIZE`). The cache re-exports them as `cache::default_cache_dir`
//! and friends, where they have always been named.

use std::path::PathBuf;

/// The default size cap of the disk cache: 1 GiB.
pub const DEFAULT_CACHE_MAX_BYTES: u64 = 1 << 30;

/// Environment variable naming the cache folder.
pub const CACHE_DIR_ENV: &str = "RUCUDA_CACHE_DIR";
/// Environment variable that, set to anything but `0` or empty, turns the disk cache off.
pub const DISABLE_CACHE_ENV: &str = "RUCUDA_DISABLE_CACHE";
/// Environment variable giving the cache's size cap: bytes, or a number with a K, M or
/// G suffix (powers of 1024).
pub const CACHE_MAX_SIZE_ENV: &str = "RUCUDA_CACHE_MAX_SIZE";

/// The default cache folder: `RUCUDA_CACHE_DIR`, else the user cache folder's `rucuda`
/// (`~/.cache/rucuda` on Linux); `None` when `RUCUDA_DISABLE_CACHE` is set or there is
/// no user cache folder.
///
/// ```
/// if let Some(dir) = rucuda_jit::cache::default_cache_dir() {
///     println!("kernels are cached in {}", dir.display());
/// }
/// ```
pub fn default_cache_dir() -> Option<PathBuf> {
    let disabled = std::env::var_os(DISABLE_CACHE_ENV).is_some_and(|v| !v.is_empty() && v != "0");
    if disabled {
        return None;
    }
    match std::env::var_os(CACHE_DIR_ENV) {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::cache_dir().map(|d| d.join("rucuda")),
    }
}

/// The default size cap: `RUCUDA_CACHE_MAX_SIZE` when it parses, else 1 GiB.
///
/// ```
/// assert!(rucuda_jit::cache::default_max_bytes() > 0);
/// ```
pub fn default_max_bytes() -> u64 {
    std::env::var(CACHE_MAX_SIZE_ENV)
        .ok()
        .and_then(|v| parse_size(&v))
        .unwrap_or(DEFAULT_CACHE_MAX_BYTES)
}

/// Parses `1048576`, `512K`, `64M`, `2G` (powers of 1024; a trailing `B` or `iB` is
/// allowed).
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_uppercase();
    let t = t
        .strip_suffix("IB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(&t);
    let (digits, shift) = match t.chars().last()? {
        'K' => (&t[..t.len() - 1], 10),
        'M' => (&t[..t.len() - 1], 20),
        'G' => (&t[..t.len() - 1], 30),
        'T' => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    digits
        .trim()
        .parse::<u64>()
        .ok()?
        .checked_mul(1u64 << shift)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1048576"), Some(1 << 20));
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size("64m"), Some(64 << 20));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size("3 GB"), Some(3 << 30));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size(""), None);
    }
}
