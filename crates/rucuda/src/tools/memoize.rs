//! Per-context memoization (PyCUDA's `context_dependent_memoize` and
//! `clear_context_caches`): a value made once per (context, key), typically a compiled
//! kernel.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

use rucuda_driver::{Context, Error, Result};

type Caches = HashMap<(u64, TypeId), Box<dyn Any + Send>>;

static CACHES: Mutex<Option<Caches>> = Mutex::new(None);

/// Returns the value cached for `(ctx, key)`, making it with `make` the first time.
/// `make` runs without the cache locked (it may compile for seconds, and may itself use
/// memoized values); if two threads race, the first value stored wins.
///
/// ```no_run
/// use rucuda::tools::context_dependent_memoize;
/// let ctx = rucuda::tools::autoprimaryctx()?;
/// let a = context_dependent_memoize(ctx, ("scale", 4u32), || Ok(42u64))?;
/// let b = context_dependent_memoize(ctx, ("scale", 4u32), || Ok(0u64))?;
/// assert_eq!(a, b);
/// # Ok::<(), rucuda::driver::Error>(())
/// ```
pub fn context_dependent_memoize<K, V>(
    ctx: &Context,
    key: K,
    make: impl FnOnce() -> Result<V>,
) -> Result<V>
where
    K: Hash + Eq + Send + 'static,
    V: Clone + Send + 'static,
{
    let slot = (ctx.id(), TypeId::of::<(K, V)>());
    if let Some(v) = lookup::<K, V>(slot, &key)? {
        return Ok(v);
    }
    let value = make()?;
    let mut guard = lock()?;
    let map = guard
        .get_or_insert_with(HashMap::new)
        .entry(slot)
        .or_insert_with(|| Box::new(HashMap::<K, V>::new()));
    let map = map.downcast_mut::<HashMap<K, V>>().ok_or_else(|| {
        Error::InvalidArgument("memoize cache holds a value of another type".into())
    })?;
    Ok(map.entry(key).or_insert(value).clone())
}

fn lookup<K: Hash + Eq + 'static, V: Clone + 'static>(
    slot: (u64, TypeId),
    key: &K,
) -> Result<Option<V>> {
    let guard = lock()?;
    Ok(guard
        .as_ref()
        .and_then(|c| c.get(&slot))
        .and_then(|m| m.downcast_ref::<HashMap<K, V>>())
        .and_then(|m| m.get(key))
        .cloned())
}

fn lock() -> Result<std::sync::MutexGuard<'static, Option<Caches>>> {
    CACHES
        .lock()
        .map_err(|_| Error::InvalidArgument("memoize cache poisoned by a panic".into()))
}

/// Empties every per-context cache, releasing the contexts and kernels they held (PyCUDA's
/// `clear_context_caches`): the values of [`context_dependent_memoize`] and the modules
/// that `rucuda::jit::SourceModule` memoizes per context (its disk cache stays).
///
/// ```no_run
/// rucuda::tools::clear_context_caches();
/// ```
pub fn clear_context_caches() {
    // Take the caches out first: dropping cached values may release contexts, whose
    // destructors must not run under our lock.
    let taken = CACHES.lock().ok().and_then(|mut g| g.take());
    drop(taken);
    rucuda_jit::cache::memo::clear();
}
