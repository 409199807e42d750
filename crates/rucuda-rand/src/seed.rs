//! Seeds: PyCUDA's `seed_getter_uniform` (one seed for every state) and
//! `seed_getter_unique` (a different seed per state), from a seed you give or from the
//! operating system's entropy.

use std::hash::{BuildHasher, Hasher};

/// The seeds of a pseudo-random generator's states.
///
/// ```
/// use rucuda_rand::seed::{seed_getter_unique, Seeds};
/// let s = seed_getter_unique(4, 99);
/// assert!(matches!(&s, Seeds::PerState(v) if v.len() == 4));
/// assert_eq!(s, seed_getter_unique(4, 99));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seeds {
    /// One seed for every state (their subsequences keep them apart).
    Same(u64),
    /// One seed per state.
    PerState(Vec<u64>),
}

impl Default for Seeds {
    /// A fresh seed from the operating system's entropy, the same for every state.
    fn default() -> Seeds {
        Seeds::Same(entropy())
    }
}

/// A 64-bit seed from the operating system's entropy (the per-process random keys of
/// the standard library's hasher, mixed with the time).
pub fn entropy() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    h.write_u128(nanos);
    h.finish()
}

/// SplitMix64's output function: a bijection of 64-bit words, so distinct inputs give
/// distinct seeds.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// PyCUDA's `seed_getter_uniform(n)`: the same seed for all `n` states.
pub fn seed_getter_uniform(_n: usize, seed: u64) -> Seeds {
    Seeds::Same(seed)
}

/// PyCUDA's `seed_getter_unique(n)`: `n` distinct seeds derived from `seed`.
pub fn seed_getter_unique(n: usize, seed: u64) -> Seeds {
    let base = mix(seed);
    Seeds::PerState(
        (0..n as u64)
            .map(|i| mix(base.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_seeds_are_distinct() {
        let Seeds::PerState(v) = seed_getter_unique(10_000, 1) else {
            panic!("per-state seeds expected")
        };
        let mut s = v.clone();
        s.sort_unstable();
        s.dedup();
        assert_eq!(s.len(), v.len());
    }

    #[test]
    fn entropy_varies() {
        assert_ne!(entropy(), entropy());
    }
}
