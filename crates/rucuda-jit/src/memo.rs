//! The per-context, in-process memo in front of the disk cache: asking again for the
//! same source and options on the same context returns the module already loaded (an
//! `Arc`), with no hashing of headers, no file read and no driver call.
//!
//! The memo holds its modules (and so their contexts) until [`clear`] or
//! [`clear_context`]; it does not look at headers again, so after editing a header that
//! a memoized module includes, clear it (the disk cache notices the edit by itself).
//!
//! It stores what [`SourceModule`](crate::SourceModule) gives it as `Arc<dyn Any>` and
//! hands back only values of the type asked for, so it needs nothing from the module
//! code that uses it.

use std::any::Any;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use crate::options::CompileOptions;

/// What the memo holds: a loaded module, of the type its user stored.
type Stored = Arc<dyn Any + Send + Sync>;

struct Entry {
    context_id: u64,
    source: Box<str>,
    options: CompileOptions,
    module: Stored,
}

struct Memo {
    hasher: std::collections::hash_map::RandomState,
    entries: Mutex<HashMap<u64, Vec<Entry>>>,
}

fn memo() -> &'static Memo {
    static MEMO: OnceLock<Memo> = OnceLock::new();
    MEMO.get_or_init(|| Memo {
        hasher: std::collections::hash_map::RandomState::new(),
        entries: Mutex::new(HashMap::new()),
    })
}

fn hash(m: &Memo, context_id: u64, source: &str, options: &CompileOptions) -> u64 {
    let mut h = m.hasher.build_hasher();
    context_id.hash(&mut h);
    source.hash(&mut h);
    options.hash(&mut h);
    h.finish()
}

/// The entry for these inputs in `bucket`, if any.
fn find<'a>(
    bucket: &'a [Entry],
    context_id: u64,
    source: &str,
    options: &CompileOptions,
) -> Option<&'a Entry> {
    bucket
        .iter()
        .find(|e| e.context_id == context_id && &*e.source == source && &e.options == options)
}

/// The memoized module for these inputs, if any (and if it is a `T`).
pub(crate) fn get<T: Any + Send + Sync>(
    context_id: u64,
    source: &str,
    options: &CompileOptions,
) -> Option<Arc<T>> {
    let m = memo();
    let h = hash(m, context_id, source, options);
    let entries = m.entries.lock().ok()?;
    let found = find(entries.get(&h)?, context_id, source, options)?;
    found.module.clone().downcast().ok()
}

/// Remembers a module; when another thread got there first, returns its module instead
/// (so every caller shares one).
pub(crate) fn insert<T: Any + Send + Sync>(
    context_id: u64,
    source: &str,
    options: &CompileOptions,
    module: Arc<T>,
) -> Arc<T> {
    let m = memo();
    let h = hash(m, context_id, source, options);
    let Ok(mut entries) = m.entries.lock() else {
        return module;
    };
    let bucket = entries.entry(h).or_default();
    if let Some(e) = find(bucket, context_id, source, options) {
        if let Ok(first) = e.module.clone().downcast() {
            return first;
        }
    }
    bucket.push(Entry {
        context_id,
        source: source.into(),
        options: options.clone(),
        module: module.clone(),
    });
    module
}

/// Forgets every memoized module (they unload when no one else holds them).
///
/// ```
/// rucuda_jit::memo::clear();
/// assert_eq!(rucuda_jit::memo::len(), 0);
/// ```
pub fn clear() {
    if let Ok(mut entries) = memo().entries.lock() {
        entries.clear();
    }
}

/// Forgets the modules memoized for one context (by [`Context::id`](rucuda_driver::Context::id)).
///
/// ```no_run
/// let ctx = rucuda_driver::Device::get(0)?.primary_context()?;
/// rucuda_jit::memo::clear_context(ctx.id());
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub fn clear_context(context_id: u64) {
    if let Ok(mut entries) = memo().entries.lock() {
        for bucket in entries.values_mut() {
            bucket.retain(|e| e.context_id != context_id);
        }
        entries.retain(|_, b| !b.is_empty());
    }
}

/// The number of memoized modules.
pub fn len() -> usize {
    memo()
        .entries
        .lock()
        .map_or(0, |e| e.values().map(Vec::len).sum())
}
