//! CUDA arrays and what reads, writes and fills them: the arrays themselves (formats,
//! descriptors, element types), texture and surface objects, copies to and from host and
//! device memory, and the structured 2D/3D copies.

mod cuda_array;
mod descriptor;
mod element;
mod format;
mod host_copy;
mod linear_copy;
mod reorder;
pub(crate) mod structured;
mod surface;
mod texel_helpers;
mod texture;

pub use cuda_array::CudaArray;
pub use descriptor::{ArrayDescriptor, ArrayDescriptor3D};
pub use element::ArrayElement;
pub use format::{Array3DFlags, ArrayFormat, CubemapFace};
pub use host_copy::{
    array_extent, array_to_host, host_to_array, make_multichannel_2d_array, matrix_to_array, Order,
};
pub use linear_copy::{memcpy_atoa, memcpy_atod, memcpy_atoh, memcpy_dtoa, memcpy_htoa};
pub use structured::{DeviceWritable, Memcpy2D, Memcpy3D, Memcpy3DPeer};
pub use surface::{SurfaceHandle, SurfaceObject};
pub use texel_helpers::{
    texel_helpers_include_dir, write_texel_helpers, TEXEL_HELPERS_CUH, TEXEL_HELPERS_NAME,
};
pub use texture::{
    AddressMode, FilterMode, ReadMode, TextureDescriptor, TextureHandle, TextureObject,
};
