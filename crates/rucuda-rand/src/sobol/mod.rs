//! Sobol quasi-random sequences, 32- and 64-bit, plain and scrambled (cuRAND's
//! `CURAND_RNG_QUASI_SOBOL32`, `..._SCRAMBLED_SOBOL32`, `..._SOBOL64`,
//! `..._SCRAMBLED_SOBOL64`), with direction vectors from Joe and Kuo's table.

pub mod direction;
pub mod reference;
pub mod scramble;

/// How a Sobol fill kernel is launched: `(threads, chunks per thread)` for an output of
/// `n` elements with `chunk` elements per 16-byte chunk over `dims` dimensions, aiming at
/// about `target_threads` threads. Every dimension gets at least one thread (the one that
/// advances its index).
///
/// With 32 dimensions or more, a warp serves 32 neighbouring dimensions and each thread
/// writes a run of chunks, stepping through its points (one XOR each). With fewer, each
/// thread writes one chunk (thread `t`, chunk `t`: the warp's stores are adjacent) and
/// finds its first point directly from the Gray code of its index.
///
/// ```
/// let (threads, per_thread) = rucuda_rand::sobol::launch_shape(1 << 20, 100, 4, 1 << 17);
/// assert!(threads % 100 == 0 && threads / 100 * per_thread >= (1 << 18) / 100);
/// assert_eq!(rucuda_rand::sobol::launch_shape(1 << 20, 1, 4, 1 << 17), (1 << 18, 1));
/// ```
pub fn launch_shape(n: u64, dims: u32, chunk: u64, target_threads: u64) -> (u64, u64) {
    let dims = u64::from(dims.max(1));
    let chunk = chunk.max(1);
    let chunks = n.div_ceil(chunk);
    let per_dim = chunks.div_ceil(dims).max(1);
    if dims < 32 {
        return (dims * per_dim, 1);
    }
    let threads_per_dim = target_threads.div_ceil(dims).clamp(1, per_dim);
    let per_thread = per_dim.div_ceil(threads_per_dim).max(1);
    let threads_per_dim = per_dim.div_ceil(per_thread).max(1);
    (dims * threads_per_dim, per_thread)
}

pub mod kernel;
pub use kernel::{ScrambledSobol32, ScrambledSobol64, Sobol32, Sobol64};
