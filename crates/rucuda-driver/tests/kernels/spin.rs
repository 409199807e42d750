//! Keeping a stream busy, for the tests that check what waits for queued work: the
//! `spin` kernel of `core.ptx` (it touches no memory). Shared by the GPU tests of several
//! crates through `#[path]`.

use rucuda_driver::{Context, LaunchConfig, Module, Stream};

/// Roughly 0.2 to 0.5 s of spinning on current GPUs.
pub const SPIN_CYCLES: u64 = 500_000_000;

/// The core test kernels. Keep the module for the whole test: unloading a module waits
/// for its kernels, which would make the spin synchronous.
pub fn core_kernels(ctx: &Context) -> Module {
    Module::load_data(ctx, include_str!("core.ptx").as_bytes()).expect("the core test kernels")
}

/// Keeps `stream` busy for a while.
pub fn spin(m: &Module, stream: &Stream) {
    let spin = m.function("spin").expect("the spin kernel");
    // SAFETY: spin(unsigned long long cycles) touches no memory.
    unsafe {
        spin.launch(LaunchConfig::linear(1, 1), stream, (SPIN_CYCLES,))
            .expect("spin launch")
    };
}
