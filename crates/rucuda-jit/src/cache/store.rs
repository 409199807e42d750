//! The on-disk store: one file per key, `<64 hex digits>.entry`, holding a small header
//! (magic, format version, output kind, payload length, payload SHA-256) and the payload
//! (lowered names, compile log, image).
//!
//! Writes go to a temporary file in the same folder, then a rename, so readers see a
//! whole entry or none. A read checks the magic, version, length and checksum; a bad
//! entry is removed (and said so once, on stderr) and the caller compiles again. A hit
//! sets the file's modification time (at most once a minute), which is what
//! least-recently-used eviction sorts by once the folder passes its size cap.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use super::key::{CacheKey, CACHE_FORMAT_VERSION};
use crate::options::defaults::{default_cache_dir, default_max_bytes};
use crate::output::OutputKind;

const MAGIC: [u8; 8] = *b"RUCUDAJT";
const HEADER_LEN: usize = 8 + 4 + 4 + 8 + 32;
const EXTENSION: &str = "entry";
const TEMP_PREFIX: &str = ".tmp-";
/// A hit younger than this is not touched again (saves a syscall per hit).
const TOUCH_INTERVAL: Duration = Duration::from_secs(60);
/// Temporary files older than this are left over from a crashed writer.
const STALE_TEMP: Duration = Duration::from_secs(3600);

/// A compiled image and what goes with it, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub output: OutputKind,
    pub lowered_names: Vec<(String, String)>,
    pub log: String,
    pub image: Vec<u8>,
}

/// The result of a lookup.
#[derive(Debug)]
pub(crate) enum Lookup {
    /// A whole, checked entry.
    Hit(Entry),
    /// No entry (or one that was bad and has been removed).
    Miss,
}

/// The size and entry count of a cache folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Number of entries.
    pub entries: u64,
    /// Their total size in bytes.
    pub bytes: u64,
}

/// A cache folder with a size cap.
///
/// ```no_run
/// use rucuda_jit::cache::DiskCache;
/// let cache = DiskCache::default_location().expect("a cache folder");
/// let stats = cache.stats()?;
/// println!("{}: {} entries, {} bytes", cache.dir().display(), stats.entries, stats.bytes);
/// cache.clear()?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskCache {
    dir: PathBuf,
    max_bytes: u64,
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    // Lengths are u32: a name or log past 4 GiB is clamped, never mis-framed.
    let bytes = &s.as_bytes()[..s.len().min(u32::MAX as usize)];
    put_u32(out, bytes.len() as u32);
    out.extend_from_slice(bytes);
}

/// A cursor over a payload; every read is bounds-checked.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn string(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
}

impl Entry {
    fn payload(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(self.image.len() + self.log.len() + 64);
        put_u32(&mut p, self.lowered_names.len() as u32);
        for (expr, lowered) in &self.lowered_names {
            put_str(&mut p, expr);
            put_str(&mut p, lowered);
        }
        put_str(&mut p, &self.log);
        p.extend_from_slice(&self.image);
        p
    }

    /// The whole file: header then payload.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let payload = self.payload();
        let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
        out.extend_from_slice(&MAGIC);
        put_u32(&mut out, CACHE_FORMAT_VERSION);
        put_u32(&mut out, self.output.code());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&Sha256::digest(&payload));
        out.extend_from_slice(&payload);
        out
    }

    /// Checks and decodes a whole file; `Err` says what is wrong with it.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Entry, String> {
        if bytes.len() < HEADER_LEN {
            return Err(format!(
                "truncated: {} bytes, shorter than the header",
                bytes.len()
            ));
        }
        let mut r = Reader(bytes);
        let header = r.take(HEADER_LEN).ok_or("truncated header")?;
        if header[..8] != MAGIC {
            return Err("bad magic".into());
        }
        let mut h = Reader(&header[8..]);
        let version = h.u32().ok_or("truncated header")?;
        if version != CACHE_FORMAT_VERSION {
            return Err(format!(
                "format version {version}, expected {CACHE_FORMAT_VERSION}"
            ));
        }
        let kind = h.u32().ok_or("truncated header")?;
        let output = OutputKind::from_code(kind).ok_or(format!("unknown output kind {kind}"))?;
        let len_bytes: [u8; 8] = h
            .take(8)
            .and_then(|b| b.try_into().ok())
            .ok_or("truncated header")?;
        let len = u64::from_le_bytes(len_bytes);
        let digest = h.take(32).ok_or("truncated header")?;
        let payload = r.0;
        if payload.len() as u64 != len {
            return Err(format!(
                "payload is {} bytes, the header says {len} (truncated or appended to)",
                payload.len()
            ));
        }
        if Sha256::digest(payload).as_slice() != digest {
            return Err("payload checksum mismatch".into());
        }
        let mut p = Reader(payload);
        let bad = || "malformed payload".to_string();
        let count = p.u32().ok_or_else(bad)?;
        let mut lowered_names = Vec::new();
        for _ in 0..count {
            let expr = p.string().ok_or_else(bad)?;
            let lowered = p.string().ok_or_else(bad)?;
            lowered_names.push((expr, lowered));
        }
        let log = p.string().ok_or_else(bad)?;
        Ok(Entry {
            output,
            lowered_names,
            log,
            image: p.0.to_vec(),
        })
    }
}

/// A whole file around `payload` with a header that is right for it (magic, version,
/// length, checksum), so that the fuzz targets reach the payload decoder.
#[cfg(feature = "fuzzing")]
pub(crate) fn frame_payload(kind_code: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&MAGIC);
    put_u32(&mut out, CACHE_FORMAT_VERSION);
    put_u32(&mut out, kind_code);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(payload));
    out.extend_from_slice(payload);
    out
}

fn temp_name(key: &CacheKey) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{TEMP_PREFIX}{}-{}-{n}", key.hex(), std::process::id())
}

impl DiskCache {
    /// A cache in `dir` (created on the first store) with a size cap.
    pub fn new(dir: impl Into<PathBuf>, max_bytes: u64) -> DiskCache {
        DiskCache {
            dir: dir.into(),
            max_bytes,
        }
    }

    /// The cache [`CompileOptions::default`](crate::CompileOptions) uses:
    /// [`default_cache_dir`] with [`default_max_bytes`]; `None` when caching is off.
    pub fn default_location() -> Option<DiskCache> {
        default_cache_dir().map(|d| DiskCache::new(d, default_max_bytes()))
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The size cap in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// The file that holds (or would hold) the entry of `key`.
    pub fn entry_path(&self, key: &CacheKey) -> PathBuf {
        self.dir.join(format!("{}.{EXTENSION}", key.hex()))
    }

    /// Reads and checks the entry of `key`. A bad entry is removed and reported once
    /// on stderr, and the lookup is a miss.
    pub(crate) fn load(&self, key: &CacheKey) -> Lookup {
        let path = self.entry_path(key);
        let mut file = match fs::File::open(&path) {
            Ok(f) => f,
            Err(_) => return Lookup::Miss,
        };
        let modified = file.metadata().ok().and_then(|m| m.modified().ok());
        let mut bytes = Vec::new();
        if file.read_to_end(&mut bytes).is_err() {
            return Lookup::Miss;
        }
        match Entry::decode(&bytes) {
            Ok(entry) => {
                let now = SystemTime::now();
                let stale = modified
                    .and_then(|m| now.duration_since(m).ok())
                    .is_none_or(|age| age > TOUCH_INTERVAL);
                if stale {
                    // Recently used: eviction removes the oldest first. Failure (an entry
                    // another user owns) only makes eviction less accurate.
                    let _ = file.set_modified(now);
                }
                Lookup::Hit(entry)
            }
            Err(reason) => {
                drop(file);
                let removed = match fs::remove_file(&path) {
                    Ok(()) => "removed it".to_string(),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => "already removed".into(),
                    Err(e) => format!("could not remove it: {e}"),
                };
                log::warn!(
                    "rucuda-jit: cache entry {} is corrupt ({reason}); {removed}, \
                     compiling again",
                    path.display()
                );
                Lookup::Miss
            }
        }
    }

    /// Writes the entry of `key` atomically (temporary file, then rename), then evicts
    /// least recently used entries past the size cap (never this one). Returns the
    /// entry's path.
    pub(crate) fn store(&self, key: &CacheKey, entry: &Entry) -> io::Result<PathBuf> {
        fs::create_dir_all(&self.dir)?;
        let path = self.entry_path(key);
        let temp = self.dir.join(temp_name(key));
        let write = || -> io::Result<()> {
            let mut f = fs::File::create_new(&temp)?;
            f.write_all(&entry.encode())?;
            f.flush()?;
            fs::rename(&temp, &path)
        };
        if let Err(e) = write() {
            let _ = fs::remove_file(&temp);
            return Err(e);
        }
        // Eviction failing (a racing process removed a file first) is not an error of
        // this store.
        let _ = self.evict(Some(&path));
        Ok(path)
    }

    /// Entry files with their size and modification time; removes stale temporary
    /// files on the way.
    fn list(&self) -> io::Result<Vec<(PathBuf, u64, SystemTime)>> {
        let mut out = Vec::new();
        let read = match fs::read_dir(&self.dir) {
            Ok(r) => r,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(e),
        };
        let now = SystemTime::now();
        for item in read {
            let Ok(item) = item else { continue };
            let name = item.file_name();
            let Some(name) = name.to_str() else { continue };
            let Ok(meta) = item.metadata() else { continue };
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            if name.starts_with(TEMP_PREFIX) {
                if now
                    .duration_since(modified)
                    .is_ok_and(|age| age > STALE_TEMP)
                {
                    let _ = fs::remove_file(item.path());
                }
                continue;
            }
            let is_entry = name
                .strip_suffix(&format!(".{EXTENSION}"))
                .is_some_and(|stem| {
                    stem.len() == 64 && stem.bytes().all(|b| b.is_ascii_hexdigit())
                });
            if is_entry && meta.is_file() {
                out.push((item.path(), meta.len(), modified));
            }
        }
        Ok(out)
    }

    /// The number and total size of the entries.
    pub fn stats(&self) -> io::Result<CacheStats> {
        let list = self.list()?;
        Ok(CacheStats {
            entries: list.len() as u64,
            bytes: list.iter().map(|(_, len, _)| len).sum(),
        })
    }

    /// Removes every entry (and temporary file) this crate wrote; other files in the
    /// folder are left alone. Returns what was removed.
    pub fn clear(&self) -> io::Result<CacheStats> {
        let mut removed = CacheStats::default();
        for (path, len, _) in self.list()? {
            if fs::remove_file(&path).is_ok() {
                removed.entries += 1;
                removed.bytes += len;
            }
        }
        if let Ok(read) = fs::read_dir(&self.dir) {
            for item in read.flatten() {
                if item.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                    let _ = fs::remove_file(item.path());
                }
            }
        }
        Ok(removed)
    }

    /// Removes the least recently used entries until the total is within the cap,
    /// sparing `keep`. Returns what was removed.
    pub fn evict_to_cap(&self) -> io::Result<CacheStats> {
        self.evict(None)
    }

    fn evict(&self, keep: Option<&Path>) -> io::Result<CacheStats> {
        let mut list = self.list()?;
        let mut total: u64 = list.iter().map(|(_, len, _)| len).sum();
        let mut removed = CacheStats::default();
        if total <= self.max_bytes {
            return Ok(removed);
        }
        list.sort_by_key(|(_, _, modified)| *modified);
        for (path, len, _) in list {
            if total <= self.max_bytes {
                break;
            }
            if Some(path.as_path()) == keep {
                continue;
            }
            match fs::remove_file(&path) {
                Ok(()) => {
                    removed.entries += 1;
                    removed.bytes += len;
                    total -= len;
                }
                // Another process evicted it first.
                Err(e) if e.kind() == io::ErrorKind::NotFound => total -= len,
                Err(_) => {}
            }
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: usize) -> Entry {
        Entry {
            output: OutputKind::Cubin,
            lowered_names: vec![("k<int>".into(), "_Z1kIiEvv".into())],
            log: "warning: something".into(),
            image: vec![7u8; n],
        }
    }

    /// A fresh folder, removed when the returned guard drops (even when the test fails).
    fn temp(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("rucuda-jit-store-{name}-"))
            .tempdir()
            .unwrap()
    }

    #[test]
    fn encode_decode_round_trip() {
        let e = entry(100);
        assert_eq!(Entry::decode(&e.encode()).unwrap(), e);
    }

    #[test]
    fn every_damage_is_detected() {
        let bytes = entry(100).encode();
        for cut in [0, 10, HEADER_LEN - 1, HEADER_LEN, bytes.len() - 1] {
            assert!(Entry::decode(&bytes[..cut]).is_err(), "truncated to {cut}");
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x01;
            assert!(Entry::decode(&b).is_err(), "flipped byte {i}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Entry::decode(&longer).is_err());
    }

    #[test]
    fn store_load_and_corruption() {
        let tmp = temp("basic");
        let dir = tmp.path();
        let cache = DiskCache::new(dir, 1 << 20);
        let key = CacheKey([1; 32]);
        assert!(matches!(cache.load(&key), Lookup::Miss));
        let path = cache.store(&key, &entry(10)).unwrap();
        assert_eq!(path, cache.entry_path(&key));
        match cache.load(&key) {
            Lookup::Hit(e) => assert_eq!(e, entry(10)),
            Lookup::Miss => panic!("expected a hit"),
        }
        // Truncate: a miss, and the file is gone.
        let bytes = fs::read(&path).unwrap();
        fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert!(matches!(cache.load(&key), Lookup::Miss));
        assert!(!path.exists());
        let stats = cache.stats().unwrap();
        assert_eq!(stats, CacheStats::default());
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri cannot set file times (futimens)")]
    fn lru_eviction_past_the_cap() {
        let tmp = temp("lru");
        let dir = tmp.path();
        let one = entry(1000).encode().len() as u64;
        let cache = DiskCache::new(dir, 3 * one);
        let keys: Vec<CacheKey> = (0..3u8).map(|i| CacheKey([i; 32])).collect();
        let base = SystemTime::now() - Duration::from_secs(10_000);
        for (i, k) in keys.iter().enumerate() {
            let p = cache.store(k, &entry(1000)).unwrap();
            // Distinct, old modification times: key 0 oldest.
            let f = fs::File::options().append(true).open(&p).unwrap();
            f.set_modified(base + Duration::from_secs(i as u64 * 100))
                .unwrap();
        }
        assert_eq!(cache.stats().unwrap().entries, 3);
        // A hit on key 0 makes it the most recent.
        assert!(matches!(cache.load(&keys[0]), Lookup::Hit(_)));
        // A fourth entry passes the cap: key 1, now the oldest, goes.
        cache.store(&CacheKey([9; 32]), &entry(1000)).unwrap();
        assert!(cache.entry_path(&keys[0]).exists());
        assert!(!cache.entry_path(&keys[1]).exists());
        assert!(cache.entry_path(&keys[2]).exists());
        assert_eq!(cache.stats().unwrap().entries, 3);
        // Other files are never touched; clear removes only entries.
        fs::write(dir.join("README"), "mine").unwrap();
        let removed = cache.clear().unwrap();
        assert_eq!(removed.entries, 3);
        assert!(dir.join("README").exists());
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri cannot set file times (futimens)")]
    fn stale_temp_files_are_swept() {
        let tmp = temp("sweep");
        let dir = tmp.path();
        fs::create_dir_all(dir).unwrap();
        let stale = dir.join(format!("{TEMP_PREFIX}x-1-0"));
        let fresh = dir.join(format!("{TEMP_PREFIX}y-1-0"));
        fs::write(&stale, "x").unwrap();
        fs::write(&fresh, "y").unwrap();
        fs::File::options()
            .append(true)
            .open(&stale)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(7200))
            .unwrap();
        DiskCache::new(dir, 1).stats().unwrap();
        assert!(!stale.exists());
        assert!(fresh.exists());
    }
}
