//! `rucuda._native`: the native module of the `rucuda` Python wheel.
//!
//! The wheel's Python package `pycuda` gives PyCUDA's names and signatures; this module
//! does the work with rucuda's crates (rucuda-driver, rucuda-jit):
//!
//! - `device`: `init`, versions, `Device`;
//! - `context`: `Context` and PyCUDA's context stack;
//! - `memory`: device allocations, page-locked memory (NumPy arrays over it), copies;
//! - `stream`: `Stream`, `Event`;
//! - `arrays`: CUDA arrays, 2D and 3D copies, IPC memory handles;
//! - `module`: `Module`, `Function` and launches of PyCUDA's packed argument buffers;
//! - `compile`: CUDA C++ to cubin through NVRTC (or nvcc);
//! - `random`: rucuda-rand's generators (`pycuda.curandom`'s classes);
//! - `errors`: rucuda's errors as PyCUDA's exception classes.
//!
//! Python code passes device memory as integers, as in PyCUDA: the functions that take
//! addresses trust them, as PyCUDA's do. That is Python's contract (as with `ctypes`), not
//! a safe Rust API: the modules are private, so no Rust code outside this crate reaches
//! them. Objects hold their context, so nothing is
//! released under live objects at interpreter exit, whatever order they die in; blocking
//! calls release the GIL.
//!
//! The crate is built by maturin (`cargo xtask wheel`) with the `extension-module`
//! feature; without it, `cargo test` links its unit tests against libpython.

use pyo3::prelude::*;

mod arrays;
mod block_cache;
mod compile;
mod context;
mod device;
mod dlpack;
mod errors;
mod fast;
mod memory;
mod module;
mod pack;
mod random;
mod sorting;
mod stream;

/// The module's contents.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(device::init, m)?)?;
    m.add_function(wrap_pyfunction!(device::get_version, m)?)?;
    m.add_function(wrap_pyfunction!(device::get_driver_version, m)?)?;
    m.add_function(wrap_pyfunction!(device::device_attribute_members, m)?)?;
    m.add_class::<device::Device>()?;
    m.add_class::<context::Context>()?;
    m.add_function(wrap_pyfunction!(context::current_context_handle, m)?)?;
    m.add_class::<memory::DeviceAllocation>()?;
    m.add_class::<memory::HostAllocation>()?;
    m.add_function(wrap_pyfunction!(memory::mem_alloc, m)?)?;
    m.add_function(wrap_pyfunction!(memory::mem_alloc_async, m)?)?;
    m.add_function(wrap_pyfunction!(memory::mem_get_info, m)?)?;
    m.add_function(wrap_pyfunction!(memory::flush_block_cache, m)?)?;
    m.add_function(wrap_pyfunction!(memory::copy_htod, m)?)?;
    m.add_function(wrap_pyfunction!(memory::copy_dtoh, m)?)?;
    m.add_function(wrap_pyfunction!(memory::copy_dtod, m)?)?;
    m.add_function(wrap_pyfunction!(memory::memset, m)?)?;
    m.add_function(wrap_pyfunction!(memory::pagelocked_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(memory::register_host_bytes, m)?)?;
    m.add_class::<arrays::Array>()?;
    m.add_function(wrap_pyfunction!(arrays::memcpy_2d, m)?)?;
    m.add_function(wrap_pyfunction!(arrays::memcpy_3d, m)?)?;
    m.add_function(wrap_pyfunction!(arrays::mem_get_ipc_handle, m)?)?;
    m.add_class::<arrays::IpcMemoryHandle>()?;
    m.add_class::<stream::Stream>()?;
    m.add_class::<stream::Event>()?;
    m.add_class::<module::Module>()?;
    m.add_class::<module::Function>()?;
    m.add_class::<fast::FastTable>()?;
    m.add_class::<dlpack::DLPackHolder>()?;
    m.add_function(wrap_pyfunction!(dlpack::dlpack_capsule, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::dlpack_take, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::dlpack_device_id, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::dlpack_order, m)?)?;
    m.add_function(wrap_pyfunction!(module::module_from_buffer, m)?)?;
    m.add_function(wrap_pyfunction!(module::module_from_file, m)?)?;
    m.add_function(wrap_pyfunction!(module::link_sources, m)?)?;
    m.add_class::<module::Linker>()?;
    m.add_function(wrap_pyfunction!(pack::_pack_format, m)?)?;
    m.add_function(wrap_pyfunction!(pack::_pack_call, m)?)?;
    m.add_class::<random::RandomGeneratorCore>()?;
    m.add_function(wrap_pyfunction!(random::sobol_direction_vectors, m)?)?;
    m.add_class::<sorting::ArrayHolder>()?;
    m.add_function(wrap_pyfunction!(sorting::array_sort, m)?)?;
    m.add_function(wrap_pyfunction!(sorting::array_topk, m)?)?;
    m.add_function(wrap_pyfunction!(sorting::array_unique, m)?)?;
    m.add_function(wrap_pyfunction!(sorting::array_searchsorted, m)?)?;
    m.add_function(wrap_pyfunction!(sorting::array_histogram, m)?)?;
    m.add_function(wrap_pyfunction!(sorting::array_bincount, m)?)?;
    m.add_function(wrap_pyfunction!(compile::compile, m)?)?;
    m.add_function(wrap_pyfunction!(compile::nvrtc_status, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
