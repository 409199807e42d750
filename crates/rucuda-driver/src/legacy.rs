//! PyCUDA's legacy launch interface and what replaces it. Documentation only: CUDA
//! removed the driver calls behind these methods (`cuParamSet*`, `cuFuncSetBlockShape`,
//! `cuFuncSetSharedSize`, `cuLaunch`, `cuLaunchGrid*`, `cuParamSetTexRef`), and PyCUDA
//! itself deprecated them in 2011.1. rucuda offers no stand-ins; each row below names the
//! current way.
//!
//! The old interface kept launch state (block shape, shared memory, a parameter buffer)
//! *in the function object*, so two users of one kernel interfered (PyCUDA's own warning
//! under `Module.get_function`). rucuda keeps that state in values you pass per launch:
//! a [`LaunchConfig`] and an argument tuple or [`ArgBuffer`].
//!
//! | PyCUDA (removed) | rucuda |
//! |---|---|
//! | `Function.set_block_shape(x, y, z)` | `LaunchConfig { block: (x, y, z), .. }` passed to [`Function::launch`] |
//! | `Function.set_shared_size(bytes)` | [`LaunchConfig::with_shared_mem`]`(bytes)`; above 48 KiB first [`Function::set_max_dynamic_shared_memory`] |
//! | `Function.param_set_size(bytes)` | nothing to size: the arguments' own sizes are checked against the kernel's parameters ([`Function::check_launch`]) |
//! | `Function.param_set(arg1, ...)` | an argument tuple `(a, &x, &mut y, n)` given to [`Function::launch`], or an [`ArgBuffer`] built at run time for [`Function::launch_args`] |
//! | `Function.param_seti(offset, value)` | `ArgBuffer::push(value as u32)` (or `i32`); offsets and alignment are computed for you |
//! | `Function.param_setf(offset, value)` | `ArgBuffer::push(value as f32)` |
//! | `Function.launch()` | `Function::launch(LaunchConfig::linear(1, threads), &stream, args)` |
//! | `Function.launch_grid(w, h)` | `Function::launch(LaunchConfig { grid: (w, h, 1), .. }, &Stream::null(&ctx), args)` |
//! | `Function.launch_grid_async(w, h, stream)` | the same on your own [`Stream`] |
//! | `Function.param_set_texref(texref)` | texture references are gone (CUDA 12): create a texture object and pass its handle as an ordinary 64-bit argument (`cudaTextureObject_t` in the kernel) |
//! | `Function.prepare(arg_types)` + `prepared_call` / `prepared_async_call` | [`Function::prepare`] → [`PreparedLaunch::launch`] (on [`Stream::null`] for `prepared_call`) |
//! | `Function.prepared_timed_call` | [`PreparedLaunch::launch_timed`], or [`Function::launch_timed`] |
//! | `Function.__call__(..., block=, grid=, shared=, stream=)` | [`Function::launch`] with a [`LaunchConfig`]; with host arrays, [`Function::call_with_host_args`] and [`HostArgs`] |
//! | `Function.__call__(..., time_kernel=True)` | [`Function::call_with_host_args_timed`] / [`Function::launch_timed`] |
//! | `In(a)`, `Out(a)`, `InOut(a)`, `ArgumentHandler` | [`HostArgs::input`], [`HostArgs::output`], [`HostArgs::in_out`] |
//!
//! For example, PyCUDA's
//!
//! ```text
//! func.set_block_shape(256, 1, 1)
//! func.param_set(numpy.float32(2.0), x_gpu, numpy.int32(n))
//! func.launch_grid(blocks, 1)
//! ```
//!
//! is, in rucuda,
//!
//! ```no_run
//! use rucuda_driver::*;
//! # let ctx = Device::get(0)?.primary_context()?;
//! # let func = Module::load_data(&ctx, b"")?.function("scale")?;
//! # let mut x_gpu = DeviceBuffer::<f32>::zeros(&ctx, 1024)?;
//! # let (blocks, n) = (4u32, 1024i32);
//! let cfg = LaunchConfig::linear(blocks, 256);
//! // SAFETY: scale(float a, float* x, int n) touches x[0..n).
//! unsafe { func.launch(cfg, &Stream::null(&ctx), (2.0f32, &mut x_gpu, n))? };
//! # Ok::<(), Error>(())
//! ```

// Brought into scope only for the intra-doc links above.
#[allow(unused_imports)]
use crate::{ArgBuffer, Function, HostArgs, LaunchConfig, PreparedLaunch, Stream};
