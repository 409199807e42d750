//! Where each of PyCUDA's constant groups lives: the map, as a table and as
//! [`PYCUDA_CONSTANT_GROUPS`]. Each group is defined by the module that owns what it
//! describes ([`ComputeMode`] beside devices, the JIT's groups beside modules,
//! [`PointerAttribute`] beside memory, [`SharedConfig`] beside functions); this module
//! re-exports the ones that have no better home at the crate root.
//!
//! # Every PyCUDA constant group and where it lives
//!
//! The same list is [`PYCUDA_CONSTANT_GROUPS`] (a unit test keeps the two equal).
//! Paths are relative to `rucuda_driver`.
//!
//! | PyCUDA group | rucuda |
//! |---|---|
//! | `ctx_flags` | `ContextFlags` |
//! | `event_flags` | `EventFlags` |
//! | `device_attribute` | `DeviceAttribute` |
//! | `pointer_attribute` | `constants::PointerAttribute` |
//! | `profiler_output_mode` | removed by CUDA 12 with `cuProfilerInitialize`: see `profiler` |
//! | `function_attribute` | `FunctionAttribute` |
//! | `func_cache` | `CacheConfig` |
//! | `shared_config` | `SharedConfig` |
//! | `array_format` | in `crate::arrays` (CUDA arrays) |
//! | `array3d_flags` | in `crate::arrays` (CUDA arrays) |
//! | `address_mode` | in `crate::arrays` (texture objects) |
//! | `filter_mode` | in `crate::arrays` (texture objects) |
//! | `memory_type` | in `crate::memory` (`MemoryType`) |
//! | `compute_mode` | `ComputeMode` |
//! | `jit_option` | `JitOption` (values: `JitOptions`) |
//! | `jit_target` | `JitTarget` |
//! | `jit_fallback` | `JitFallback` |
//! | `host_alloc_flags` | in `crate::memory` (pinned host allocation flags) |
//! | `mem_attach_flags` | in `crate::memory` (managed memory attach flags) |
//! | `mem_host_register_flags` | in `crate::memory` (host registration flags) |
//! | `limit` | `Limit` |
//! | `ipc_mem_flags` | in `crate::memory` (IPC memory flags) |
//! | `graphics_register_flags` | in `rucuda_gl` (OpenGL interop) |
//! | `array_cubemap_face` | in `crate::arrays` (CUDA arrays) |
//!
pub use crate::memory::pointer_attribute::PointerAttribute;
#[cfg(doc)]
use crate::{ComputeMode, SharedConfig};

/// Every PyCUDA constant group (`pycuda.driver.<group>`) with the rucuda item that serves
/// it, as in the table of this module's documentation. For guides and checklists.
///
/// ```
/// let (_, rust) = rucuda_driver::constants::PYCUDA_CONSTANT_GROUPS
///     .iter()
///     .find(|(py, _)| *py == "compute_mode")
///     .unwrap();
/// assert_eq!(*rust, "`ComputeMode`");
/// ```
pub const PYCUDA_CONSTANT_GROUPS: &[(&str, &str)] = &[
    ("ctx_flags", "`ContextFlags`"),
    ("event_flags", "`EventFlags`"),
    ("device_attribute", "`DeviceAttribute`"),
    ("pointer_attribute", "`constants::PointerAttribute`"),
    (
        "profiler_output_mode",
        "removed by CUDA 12 with `cuProfilerInitialize`: see `profiler`",
    ),
    ("function_attribute", "`FunctionAttribute`"),
    ("func_cache", "`CacheConfig`"),
    ("shared_config", "`SharedConfig`"),
    ("array_format", "in `crate::arrays` (CUDA arrays)"),
    ("array3d_flags", "in `crate::arrays` (CUDA arrays)"),
    ("address_mode", "in `crate::arrays` (texture objects)"),
    ("filter_mode", "in `crate::arrays` (texture objects)"),
    ("memory_type", "in `crate::memory` (`MemoryType`)"),
    ("compute_mode", "`ComputeMode`"),
    ("jit_option", "`JitOption` (values: `JitOptions`)"),
    ("jit_target", "`JitTarget`"),
    ("jit_fallback", "`JitFallback`"),
    (
        "host_alloc_flags",
        "in `crate::memory` (pinned host allocation flags)",
    ),
    (
        "mem_attach_flags",
        "in `crate::memory` (managed memory attach flags)",
    ),
    (
        "mem_host_register_flags",
        "in `crate::memory` (host registration flags)",
    ),
    ("limit", "`Limit`"),
    ("ipc_mem_flags", "in `crate::memory` (IPC memory flags)"),
    ("graphics_register_flags", "in `rucuda_gl` (OpenGL interop)"),
    ("array_cubemap_face", "in `crate::arrays` (CUDA arrays)"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::jit_constants::JitFallback;
    use crate::kernels::jit_constants::JitInputType;
    use crate::kernels::jit_constants::JitOption;
    use crate::kernels::shared_config::SharedConfig;
    use rucuda_driver_sys::CUjit_option;

    /// Every group of the "Constants" section of PyCUDA's driver reference.
    const PYCUDA_GROUPS: [&str; 24] = [
        "ctx_flags",
        "event_flags",
        "device_attribute",
        "pointer_attribute",
        "profiler_output_mode",
        "function_attribute",
        "func_cache",
        "shared_config",
        "array_format",
        "array3d_flags",
        "address_mode",
        "filter_mode",
        "memory_type",
        "compute_mode",
        "jit_option",
        "jit_target",
        "jit_fallback",
        "host_alloc_flags",
        "mem_attach_flags",
        "mem_host_register_flags",
        "limit",
        "ipc_mem_flags",
        "graphics_register_flags",
        "array_cubemap_face",
    ];

    fn doc_table_rows() -> Vec<(String, String)> {
        include_str!("constants.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//! | `"))
            .filter_map(|rest| {
                let (py, rust) = rest.split_once("` | ")?;
                Some((py.to_string(), rust.strip_suffix(" |")?.to_string()))
            })
            .collect()
    }

    #[test]
    fn doc_table_matches_the_const_and_covers_every_pycuda_group() {
        let rows = doc_table_rows();
        let consts: Vec<(String, String)> = PYCUDA_CONSTANT_GROUPS
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(rows, consts);
        let names: Vec<&str> = PYCUDA_CONSTANT_GROUPS.iter().map(|(p, _)| *p).collect();
        assert_eq!(names, PYCUDA_GROUPS);
    }

    #[test]
    fn types_named_in_the_table_exist_at_the_crate_root() {
        // A compile-time check that the names the table gives for this crate's own
        // groups are real, exported items.
        let _ = (
            crate::ContextFlags::empty(),
            crate::EventFlags::empty(),
            crate::DeviceAttribute::WarpSize,
            crate::constants::PointerAttribute::Context,
            crate::FunctionAttribute::NumRegs,
            crate::CacheConfig::PreferNone,
            crate::SharedConfig::DefaultBankSize,
            crate::ComputeMode::Default,
            crate::JitOption::Target,
            crate::JitOptions::default(),
            crate::JitTarget::Compute(9, 0),
            crate::JitFallback::PreferPtx,
            crate::Limit::StackSize,
        );
    }

    #[test]
    fn raw_enums_round_trip_and_have_distinct_values() {
        fn check<T: Copy + PartialEq + std::fmt::Debug, R: PartialEq + Copy>(
            all: &[T],
            raw: impl Fn(T) -> R,
            back: impl Fn(R) -> Option<T>,
        ) {
            for (i, &v) in all.iter().enumerate() {
                assert_eq!(back(raw(v)), Some(v));
                for &w in &all[i + 1..] {
                    assert!(raw(v) != raw(w), "{v:?} and {w:?} share a value");
                }
            }
        }
        check(JitOption::ALL, JitOption::raw, JitOption::from_raw);
        check(JitFallback::ALL, JitFallback::raw, JitFallback::from_raw);
        check(JitInputType::ALL, JitInputType::raw, JitInputType::from_raw);
        check(
            PointerAttribute::ALL,
            PointerAttribute::raw,
            PointerAttribute::from_raw,
        );
        check(
            &[
                SharedConfig::DefaultBankSize,
                SharedConfig::FourByteBankSize,
                SharedConfig::EightByteBankSize,
            ],
            SharedConfig::raw,
            SharedConfig::from_raw,
        );
        assert_eq!(JitOption::ALL.len(), 35);
        assert_eq!(JitOption::from_raw(CUjit_option(35)), None);
        for (i, o) in JitOption::ALL.iter().enumerate() {
            assert_eq!(o.raw().0 as usize, i, "{o:?} out of header order");
            assert!(o.c_name().starts_with("CU_JIT_"));
        }
    }
}
