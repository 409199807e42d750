//! Entry points for the fuzz targets under `fuzz/` (feature `fuzzing`; not a public
//! API). Each feeds untrusted input to one internal decoder and returns what it made of
//! it, so the targets can check properties; none of them may panic.

use crate::cache::store::{frame_payload, Entry};

/// Decodes a whole cache file as read from disk. On success, returns the entry encoded
/// again (which must equal the input: the format has one encoding per entry).
pub fn decode_cache_file(bytes: &[u8]) -> Result<Vec<u8>, String> {
    Entry::decode(bytes).map(|e| e.encode())
}

/// Wraps `payload` in a correct header (so the checksum passes) and decodes it: what a
/// payload written by a buggy or hostile writer that also fixed the checksum gives.
/// Returns the file and the re-encoded entry on success.
pub fn decode_cache_payload(kind_code: u32, payload: &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> {
    let file = frame_payload(kind_code, payload);
    let entry = Entry::decode(&file)?;
    Ok((file, entry.encode()))
}

/// The `#include` directives our cache-key scan finds in `source`, as
/// `(kind, name)` with kind `"quoted"`, `"angled"` or `"computed"`.
pub fn include_directives(source: &str) -> Vec<(&'static str, String)> {
    use crate::cache::includes::Directive;
    crate::cache::includes::directives(source)
        .into_iter()
        .map(|d| match d {
            Directive::Quoted(n) => ("quoted", n),
            Directive::Angled(n) => ("angled", n),
            Directive::Computed(n) => ("computed", n),
        })
        .collect()
}

/// `RUCUDA_CACHE_MAX_SIZE`'s parser.
pub fn parse_cache_size(text: &str) -> Option<u64> {
    crate::cache::parse_size(text)
}
