//! How a Sobol fill is spread over threads ([`launch_shape`]).

/// How a Sobol fill kernel is launched (see [`launch_shape`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchShape {
    /// Threads to launch.
    pub threads: u64,
    /// Chunks per thread, written one after the other (0: the strided scheme).
    pub per_thread: u64,
    /// With `per_thread == 0`: 2^`wlog2` threads per dimension, striding over its chunks.
    pub wlog2: u32,
}

/// How a Sobol fill kernel is launched for an output of `n` elements with `chunk`
/// elements per 16-byte chunk over `dims` dimensions, aiming at about `target_threads`
/// threads. Every dimension gets at least one thread (the one that advances its index).
///
/// With 32 dimensions or more, a warp serves 32 neighbouring dimensions and each thread
/// writes a run of `per_thread` chunks, stepping through its points (one XOR each). With
/// fewer, each dimension gets a power of two of threads that stride over its chunks
/// (thread `t` writes chunks `t`, `t + threads`, ...: a warp's stores are adjacent), each
/// point costing a few XORs (see the kernel source).
///
/// ```
/// use rucuda_rand::sobol::launch_shape;
/// let s = launch_shape(1 << 20, 100, 4, 1 << 17);
/// assert!(s.threads % 100 == 0 && s.threads / 100 * s.per_thread >= (1 << 18) / 100);
/// let s = launch_shape(1 << 28, 1, 4, 1 << 18);
/// assert_eq!((s.threads, s.per_thread, s.wlog2), (1 << 18, 0, 18));
/// ```
pub fn launch_shape(n: u64, dims: u32, chunk: u64, target_threads: u64) -> LaunchShape {
    let dims = u64::from(dims.max(1));
    let chunk = chunk.max(1);
    let chunks = n.div_ceil(chunk);
    let per_dim = chunks.div_ceil(dims).max(1);
    if dims < 32 {
        // Threads per dimension: a power of two, no more than needed, at most 2^24.
        let want = (target_threads / dims)
            .max(1)
            .min(per_dim.next_power_of_two());
        let wlog2 = (63 - want.leading_zeros()).min(24);
        return LaunchShape {
            threads: dims << wlog2,
            per_thread: 0,
            wlog2,
        };
    }
    let threads_per_dim = target_threads.div_ceil(dims).clamp(1, per_dim);
    let per_thread = per_dim.div_ceil(threads_per_dim).max(1);
    let threads_per_dim = per_dim.div_ceil(per_thread).max(1);
    LaunchShape {
        threads: dims * threads_per_dim,
        per_thread,
        wlog2: 0,
    }
}
