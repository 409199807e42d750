//! Texture objects (`cuTexObjectCreate`): read-only, cached, filtered views of an array,
//! of linear device memory or of pitched 2D device memory, passed to kernels as
//! `cudaTextureObject_t` values. They replace PyCUDA's texture references, which CUDA
//! 12 removed.
//!
//! | PyCUDA (texture references)                         | rucuda                                                                         |
//! |-----------------------------------------------------|--------------------------------------------------------------------------------|
//! | `texture<float, 2> tex;` + `Module.get_texref("tex")` | a `cudaTextureObject_t tex` kernel parameter and a [`TextureObject`]          |
//! | `TextureReference.set_array(ary)`                   | [`TextureObject::from_array`]                                                  |
//! | `set_address(devptr, bytes, allow_offset)`          | [`TextureObject::from_linear`] / [`TextureObject::from_buffer`] (the address must be aligned; there is no offset) |
//! | `set_address_2d(devptr, descr, pitch)`              | [`TextureObject::from_pitch_2d`]                                               |
//! | `set_format(fmt, n)`, `TRSA_OVERRIDE_FORMAT`        | the array's format, or the format of `from_linear` / `from_pitch_2d`          |
//! | `set_address_mode(dim, am)`                         | [`TextureDescriptor::address_mode`] (all dimensions) or its `address_mode[dim]` field |
//! | `set_filter_mode(fm)`                               | [`TextureDescriptor::filter_mode`]                                             |
//! | `set_flags(TRSF_READ_AS_INTEGER)`                   | [`ReadMode::ElementType`] (the default here; PyCUDA's flags 0 is [`ReadMode::NormalizedFloat`]) |
//! | `set_flags(TRSF_NORMALIZED_COORDINATES)`            | [`TextureDescriptor::normalized_coordinates`]                                  |
//! | `get_array()`                                       | [`TextureObject::array`]                                                       |
//! | `get_address_mode(dim)`, `get_filter_mode()`, `get_flags()` | [`TextureObject::descriptor`]                                          |
//! | `get_format()`                                      | [`TextureObject::format`]                                                      |
//! | `Function.param_set_texref(t)`, `texrefs=[...]` of `prepare` / `__call__`, `TR_DEFAULT` | pass [`TextureObject::handle`] as an ordinary kernel argument |
//!
//! In the kernel: `tex1D<T>(t, x)`, `tex2D<T>(t, x, y)`, `tex3D<T>(t, x, y, z)`,
//! `tex2DLayered<T>(t, x, y, layer)`, `texCubemap<T>(t, x, y, z)` for arrays and pitched
//! memory; `tex1Dfetch<T>(t, i)` for linear memory.

mod descriptor;
mod object;

pub use descriptor::{AddressMode, FilterMode, ReadMode, TextureDescriptor, TextureHandle};
pub use object::TextureObject;
