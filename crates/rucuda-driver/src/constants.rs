//! PyCUDA's constant groups in typed Rust form, for the groups no other module defines:
//! [`ComputeMode`], [`JitOption`], [`JitTarget`], [`JitFallback`], [`JitInputType`],
//! [`SharedConfig`] and [`PointerAttribute`]; plus the shared-memory bank configuration
//! calls on [`Context`] and [`Function`] and [`Device::compute_mode`].
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
//! | `array_format` | in `crate::array` (CUDA arrays) |
//! | `array3d_flags` | in `crate::array` (CUDA arrays) |
//! | `address_mode` | in `crate::texture` (texture objects) |
//! | `filter_mode` | in `crate::texture` (texture objects) |
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
//! | `array_cubemap_face` | in `crate::array` (CUDA arrays) |
//!
//! The `crate::array`, `crate::texture` and `crate::memory` entries are written by the
//! engineers of those modules; their exact type names may differ slightly.

use rucuda_driver_sys::{
    CUcomputemode, CUjitInputType, CUjit_fallback, CUjit_option, CUjit_target, CUpointer_attribute,
    CUsharedconfig,
};

use crate::context::Context;
use crate::device::Device;
use crate::device_attribute::DeviceAttribute;
use crate::error::{call, Error, Result};
use crate::function::Function;

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
    ("array_format", "in `crate::array` (CUDA arrays)"),
    ("array3d_flags", "in `crate::array` (CUDA arrays)"),
    ("address_mode", "in `crate::texture` (texture objects)"),
    ("filter_mode", "in `crate::texture` (texture objects)"),
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
    ("array_cubemap_face", "in `crate::array` (CUDA arrays)"),
];

/// How a device may be shared between processes (PyCUDA's `compute_mode`), as read
/// from the device with [`Device::compute_mode`].
///
/// Read from the driver, so values this crate does not know (such as the exclusive-thread
/// mode CUDA 8 removed, 1) come back as `Unknown` rather than failing.
///
/// ```
/// use rucuda_driver::ComputeMode;
/// assert_eq!(ComputeMode::from_raw(3), ComputeMode::ExclusiveProcess);
/// assert_eq!(ComputeMode::from_raw(1), ComputeMode::Unknown(1));
/// assert_eq!(ComputeMode::Prohibited.raw(), 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComputeMode {
    /// Any number of contexts from any number of processes.
    Default,
    /// No context may be created.
    Prohibited,
    /// One context, from one process, at a time.
    ExclusiveProcess,
    /// A value this crate does not know.
    Unknown(i32),
}

impl ComputeMode {
    /// The mode for a `CUcomputemode` value.
    pub fn from_raw(raw: i32) -> ComputeMode {
        match raw {
            0 => ComputeMode::Default,
            2 => ComputeMode::Prohibited,
            3 => ComputeMode::ExclusiveProcess,
            v => ComputeMode::Unknown(v),
        }
    }

    /// The `CUcomputemode` value.
    pub fn raw(self) -> i32 {
        let v = match self {
            ComputeMode::Default => CUcomputemode::CU_COMPUTEMODE_DEFAULT,
            ComputeMode::Prohibited => CUcomputemode::CU_COMPUTEMODE_PROHIBITED,
            ComputeMode::ExclusiveProcess => CUcomputemode::CU_COMPUTEMODE_EXCLUSIVE_PROCESS,
            ComputeMode::Unknown(v) => return v,
        };
        v.0 as i32
    }
}

impl Device {
    /// The device's compute mode (the `COMPUTE_MODE` attribute, typed).
    ///
    /// ```no_run
    /// use rucuda_driver::{ComputeMode, Device};
    /// if Device::get(0)?.compute_mode()? == ComputeMode::Prohibited {
    ///     println!("device 0 accepts no contexts");
    /// }
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn compute_mode(self) -> Result<ComputeMode> {
        Ok(ComputeMode::from_raw(
            self.attribute(DeviceAttribute::ComputeMode)?,
        ))
    }
}

macro_rules! raw_enum {
    (
        $(#[$meta:meta])*
        $name:ident($raw:ty) {
            $($(#[$vmeta:meta])* $variant:ident = $value:expr, $cname:literal;)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in the order of the C header.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The C value.
            pub fn raw(self) -> $raw {
                match self {
                    $($name::$variant => $value,)+
                }
            }

            /// The value for a C value, `None` when this crate does not know it.
            pub fn from_raw(raw: $raw) -> Option<$name> {
                $(if raw == $value { return Some($name::$variant); })+
                None
            }

            /// The C name (`CU_JIT_MAX_REGISTERS`).
            pub fn c_name(self) -> &'static str {
                match self {
                    $($name::$variant => $cname,)+
                }
            }
        }
    };
}

raw_enum! {
    /// A JIT option key (PyCUDA's `jit_option`), for `cuModuleLoadDataEx` and `cuLink*`.
    ///
    /// [`crate::JitOptions`] holds the options that take values for
    /// [`crate::Module::load_data_with_options`]; this enum names every key the CUDA 13
    /// headers define, for code that builds raw option arrays.
    ///
    /// ```
    /// use rucuda_driver::JitOption;
    /// assert_eq!(JitOption::MaxRegisters.raw().0, 0);
    /// assert_eq!(JitOption::from_raw(JitOption::Target.raw()), Some(JitOption::Target));
    /// assert_eq!(JitOption::FallbackStrategy.c_name(), "CU_JIT_FALLBACK_STRATEGY");
    /// ```
    JitOption(CUjit_option) {
        /// Maximum registers per thread.
        MaxRegisters = CUjit_option::CU_JIT_MAX_REGISTERS, "CU_JIT_MAX_REGISTERS";
        /// Minimum threads per block to compile for (in); threads reached (out).
        ThreadsPerBlock = CUjit_option::CU_JIT_THREADS_PER_BLOCK, "CU_JIT_THREADS_PER_BLOCK";
        /// Wall time spent compiling, milliseconds (out).
        WallTime = CUjit_option::CU_JIT_WALL_TIME, "CU_JIT_WALL_TIME";
        /// Buffer for informational log messages.
        InfoLogBuffer = CUjit_option::CU_JIT_INFO_LOG_BUFFER, "CU_JIT_INFO_LOG_BUFFER";
        /// Size of the informational log buffer, bytes.
        InfoLogBufferSizeBytes = CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, "CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES";
        /// Buffer for error log messages.
        ErrorLogBuffer = CUjit_option::CU_JIT_ERROR_LOG_BUFFER, "CU_JIT_ERROR_LOG_BUFFER";
        /// Size of the error log buffer, bytes.
        ErrorLogBufferSizeBytes = CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, "CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES";
        /// Optimisation level 0..=4.
        OptimizationLevel = CUjit_option::CU_JIT_OPTIMIZATION_LEVEL, "CU_JIT_OPTIMIZATION_LEVEL";
        /// Compile for the current context's device (the default).
        TargetFromCuContext = CUjit_option::CU_JIT_TARGET_FROM_CUCONTEXT, "CU_JIT_TARGET_FROM_CUCONTEXT";
        /// Compile for a [`JitTarget`].
        Target = CUjit_option::CU_JIT_TARGET, "CU_JIT_TARGET";
        /// What to load when both PTX and a binary match: a [`JitFallback`].
        FallbackStrategy = CUjit_option::CU_JIT_FALLBACK_STRATEGY, "CU_JIT_FALLBACK_STRATEGY";
        /// Generate debug information.
        GenerateDebugInfo = CUjit_option::CU_JIT_GENERATE_DEBUG_INFO, "CU_JIT_GENERATE_DEBUG_INFO";
        /// Verbose log output.
        LogVerbose = CUjit_option::CU_JIT_LOG_VERBOSE, "CU_JIT_LOG_VERBOSE";
        /// Generate line-number information.
        GenerateLineInfo = CUjit_option::CU_JIT_GENERATE_LINE_INFO, "CU_JIT_GENERATE_LINE_INFO";
        /// Caching mode of global loads.
        CacheMode = CUjit_option::CU_JIT_CACHE_MODE, "CU_JIT_CACHE_MODE";
        /// Deprecated, ignored.
        NewSm3xOpt = CUjit_option::CU_JIT_NEW_SM3X_OPT, "CU_JIT_NEW_SM3X_OPT";
        /// Internal fast-compile flag.
        FastCompile = CUjit_option::CU_JIT_FAST_COMPILE, "CU_JIT_FAST_COMPILE";
        /// Names of global symbols to resolve.
        GlobalSymbolNames = CUjit_option::CU_JIT_GLOBAL_SYMBOL_NAMES, "CU_JIT_GLOBAL_SYMBOL_NAMES";
        /// Addresses of those symbols.
        GlobalSymbolAddresses = CUjit_option::CU_JIT_GLOBAL_SYMBOL_ADDRESSES, "CU_JIT_GLOBAL_SYMBOL_ADDRESSES";
        /// Number of those symbols.
        GlobalSymbolCount = CUjit_option::CU_JIT_GLOBAL_SYMBOL_COUNT, "CU_JIT_GLOBAL_SYMBOL_COUNT";
        /// Deprecated link-time optimisation flag.
        Lto = CUjit_option::CU_JIT_LTO, "CU_JIT_LTO";
        /// Deprecated flush-to-zero flag (LTO).
        Ftz = CUjit_option::CU_JIT_FTZ, "CU_JIT_FTZ";
        /// Deprecated precise-division flag (LTO).
        PrecDiv = CUjit_option::CU_JIT_PREC_DIV, "CU_JIT_PREC_DIV";
        /// Deprecated precise-sqrt flag (LTO).
        PrecSqrt = CUjit_option::CU_JIT_PREC_SQRT, "CU_JIT_PREC_SQRT";
        /// Deprecated FMA-contraction flag (LTO).
        Fma = CUjit_option::CU_JIT_FMA, "CU_JIT_FMA";
        /// Kernel names referenced from the host (LTO).
        ReferencedKernelNames = CUjit_option::CU_JIT_REFERENCED_KERNEL_NAMES, "CU_JIT_REFERENCED_KERNEL_NAMES";
        /// Number of those kernel names.
        ReferencedKernelCount = CUjit_option::CU_JIT_REFERENCED_KERNEL_COUNT, "CU_JIT_REFERENCED_KERNEL_COUNT";
        /// Variable names referenced from the host (LTO).
        ReferencedVariableNames = CUjit_option::CU_JIT_REFERENCED_VARIABLE_NAMES, "CU_JIT_REFERENCED_VARIABLE_NAMES";
        /// Number of those variable names.
        ReferencedVariableCount = CUjit_option::CU_JIT_REFERENCED_VARIABLE_COUNT, "CU_JIT_REFERENCED_VARIABLE_COUNT";
        /// Remove unused device variables (LTO).
        OptimizeUnusedDeviceVariables = CUjit_option::CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES, "CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES";
        /// Generate position-independent code.
        PositionIndependentCode = CUjit_option::CU_JIT_POSITION_INDEPENDENT_CODE, "CU_JIT_POSITION_INDEPENDENT_CODE";
        /// Minimum blocks per multiprocessor to compile for.
        MinCtaPerSm = CUjit_option::CU_JIT_MIN_CTA_PER_SM, "CU_JIT_MIN_CTA_PER_SM";
        /// Maximum threads per block to compile for.
        MaxThreadsPerBlock = CUjit_option::CU_JIT_MAX_THREADS_PER_BLOCK, "CU_JIT_MAX_THREADS_PER_BLOCK";
        /// Let the options above override the kernels' own directives.
        OverrideDirectiveValues = CUjit_option::CU_JIT_OVERRIDE_DIRECTIVE_VALUES, "CU_JIT_OVERRIDE_DIRECTIVE_VALUES";
        /// Threads used for a split compile.
        SplitCompile = CUjit_option::CU_JIT_SPLIT_COMPILE, "CU_JIT_SPLIT_COMPILE";
    }
}

raw_enum! {
    /// What the JIT loads when a fatbin holds both PTX and a matching binary (PyCUDA's
    /// `jit_fallback`).
    ///
    /// ```
    /// use rucuda_driver::JitFallback;
    /// assert_eq!(JitFallback::from_raw(JitFallback::PreferBinary.raw()), Some(JitFallback::PreferBinary));
    /// ```
    JitFallback(CUjit_fallback) {
        /// Compile the PTX.
        PreferPtx = CUjit_fallback::CU_PREFER_PTX, "CU_PREFER_PTX";
        /// Load the binary.
        PreferBinary = CUjit_fallback::CU_PREFER_BINARY, "CU_PREFER_BINARY";
    }
}

raw_enum! {
    /// The kind of an input to the JIT linker (`cuLinkAddData`): what `rucuda-jit` links.
    ///
    /// ```
    /// use rucuda_driver::JitInputType;
    /// assert_eq!(JitInputType::Ptx.raw().0, 1);
    /// assert_eq!(JitInputType::ALL.len(), 6);
    /// ```
    JitInputType(CUjitInputType) {
        /// A cubin.
        Cubin = CUjitInputType::CU_JIT_INPUT_CUBIN, "CU_JIT_INPUT_CUBIN";
        /// PTX text.
        Ptx = CUjitInputType::CU_JIT_INPUT_PTX, "CU_JIT_INPUT_PTX";
        /// A fatbin.
        Fatbinary = CUjitInputType::CU_JIT_INPUT_FATBINARY, "CU_JIT_INPUT_FATBINARY";
        /// A host object with embedded device code.
        Object = CUjitInputType::CU_JIT_INPUT_OBJECT, "CU_JIT_INPUT_OBJECT";
        /// An archive of host objects with embedded device code.
        Library = CUjitInputType::CU_JIT_INPUT_LIBRARY, "CU_JIT_INPUT_LIBRARY";
        /// Deprecated NVVM IR input.
        Nvvm = CUjitInputType::CU_JIT_INPUT_NVVM, "CU_JIT_INPUT_NVVM";
    }
}

raw_enum! {
    /// A pointer attribute (PyCUDA's `pointer_attribute`): the keys of
    /// `cuPointerGetAttribute`, for code that queries pointers through [`crate::sys`].
    /// Typed pointer queries belong with the memory types in [`crate::memory`].
    ///
    /// ```
    /// use rucuda_driver::constants::PointerAttribute;
    /// assert_eq!(PointerAttribute::MemoryType.raw().0, 2);
    /// ```
    PointerAttribute(CUpointer_attribute) {
        /// The context of the allocation (PyCUDA's `CONTEXT`).
        Context = CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT, "CU_POINTER_ATTRIBUTE_CONTEXT";
        /// Host, device, array or unified (PyCUDA's `MEMORY_TYPE`).
        MemoryType = CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, "CU_POINTER_ATTRIBUTE_MEMORY_TYPE";
        /// The device address (PyCUDA's `DEVICE_POINTER`).
        DevicePointer = CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_POINTER, "CU_POINTER_ATTRIBUTE_DEVICE_POINTER";
        /// The host address (PyCUDA's `HOST_POINTER`).
        HostPointer = CUpointer_attribute::CU_POINTER_ATTRIBUTE_HOST_POINTER, "CU_POINTER_ATTRIBUTE_HOST_POINTER";
        /// Whether the memory is managed (unified).
        IsManaged = CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED, "CU_POINTER_ATTRIBUTE_IS_MANAGED";
        /// The device ordinal of the allocation.
        DeviceOrdinal = CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, "CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL";
        /// Start address of the whole allocation.
        RangeStartAddr = CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, "CU_POINTER_ATTRIBUTE_RANGE_START_ADDR";
        /// Size of the whole allocation.
        RangeSize = CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_SIZE, "CU_POINTER_ATTRIBUTE_RANGE_SIZE";
        /// Whether the memory is mapped.
        Mapped = CUpointer_attribute::CU_POINTER_ATTRIBUTE_MAPPED, "CU_POINTER_ATTRIBUTE_MAPPED";
        /// The memory pool the allocation came from.
        MempoolHandle = CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, "CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE";
    }
}

/// A compute target for the JIT (PyCUDA's `jit_target`): `compute_XY`, or its
/// architecture-specific (`compute_90a`) or family-specific (`compute_100f`) variant.
///
/// PyCUDA's `COMPUTE_10` .. `COMPUTE_21` name targets no current driver accepts (CUDA
/// 13 compiles for compute capability 7.5 and newer); they are still expressible as
/// `JitTarget::Compute(1, 0)` etc. and the driver refuses them with a clear error.
///
/// ```
/// use rucuda_driver::JitTarget;
/// assert_eq!(JitTarget::Compute(9, 0).raw().0, 90);
/// assert_eq!(JitTarget::ArchSpecific(9, 0).raw().0, 65626);   // CU_TARGET_COMPUTE_90A
/// assert_eq!(JitTarget::FamilySpecific(10, 0).raw().0, 131172); // CU_TARGET_COMPUTE_100F
/// assert_eq!(JitTarget::from_raw(JitTarget::ArchSpecific(12, 1).raw()), Some(JitTarget::ArchSpecific(12, 1)));
/// assert_eq!(JitTarget::Compute(8, 6).to_string(), "compute_86");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum JitTarget {
    /// `compute_XY` (major, minor).
    Compute(u32, u32),
    /// `compute_XYa`: features of exactly this architecture.
    ArchSpecific(u32, u32),
    /// `compute_XYf`: features of this architecture family.
    FamilySpecific(u32, u32),
}

const ARCH_SPECIFIC_BIT: u32 = 0x10000;
const FAMILY_SPECIFIC_BIT: u32 = 0x20000;

impl JitTarget {
    /// The plain target of a device's compute capability.
    pub fn for_compute_capability((major, minor): (i32, i32)) -> JitTarget {
        JitTarget::Compute(major.max(0) as u32, minor.max(0) as u32)
    }

    /// The `CUjit_target` value (`major * 10 + minor`, plus the header's variant bit).
    pub fn raw(self) -> CUjit_target {
        let (base, bit) = match self {
            JitTarget::Compute(ma, mi) => (ma * 10 + mi, 0),
            JitTarget::ArchSpecific(ma, mi) => (ma * 10 + mi, ARCH_SPECIFIC_BIT),
            JitTarget::FamilySpecific(ma, mi) => (ma * 10 + mi, FAMILY_SPECIFIC_BIT),
        };
        CUjit_target(base | bit)
    }

    /// The target of a `CUjit_target` value; `None` for a malformed one.
    pub fn from_raw(raw: CUjit_target) -> Option<JitTarget> {
        let v = raw.0;
        let base = v & 0xffff;
        let (ma, mi) = (base / 10, base % 10);
        match v & !0xffff {
            0 => Some(JitTarget::Compute(ma, mi)),
            ARCH_SPECIFIC_BIT => Some(JitTarget::ArchSpecific(ma, mi)),
            FAMILY_SPECIFIC_BIT => Some(JitTarget::FamilySpecific(ma, mi)),
            _ => None,
        }
    }
}

impl std::fmt::Display for JitTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            JitTarget::Compute(ma, mi) => write!(f, "compute_{ma}{mi}"),
            JitTarget::ArchSpecific(ma, mi) => write!(f, "compute_{ma}{mi}a"),
            JitTarget::FamilySpecific(ma, mi) => write!(f, "compute_{ma}{mi}f"),
        }
    }
}

/// Shared-memory bank width (PyCUDA's `shared_config`).
///
/// Only Kepler GPUs had a configurable bank width. CUDA deprecated
/// `cuCtxSetSharedMemConfig`/`cuFuncSetSharedMemConfig` in 12.x: on every GPU CUDA 13
/// supports, banks are 4 bytes wide, setting is a no-op and reading returns
/// `FourByteBankSize`. The calls are kept for PyCUDA code while the driver still exports
/// them; where it does not, they fail with [`Error::MissingFunction`].
///
/// ```
/// use rucuda_driver::SharedConfig;
/// assert_eq!(SharedConfig::from_raw(SharedConfig::EightByteBankSize.raw()), Some(SharedConfig::EightByteBankSize));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SharedConfig {
    /// The device's default width.
    DefaultBankSize,
    /// Four-byte banks.
    FourByteBankSize,
    /// Eight-byte banks (Kepler only).
    EightByteBankSize,
}

impl SharedConfig {
    /// The `CUsharedconfig` value.
    pub fn raw(self) -> CUsharedconfig {
        match self {
            SharedConfig::DefaultBankSize => CUsharedconfig::CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE,
            SharedConfig::FourByteBankSize => {
                CUsharedconfig::CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE
            }
            SharedConfig::EightByteBankSize => {
                CUsharedconfig::CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE
            }
        }
    }

    /// The configuration of a `CUsharedconfig` value, `None` when unknown.
    pub fn from_raw(raw: CUsharedconfig) -> Option<SharedConfig> {
        [
            SharedConfig::DefaultBankSize,
            SharedConfig::FourByteBankSize,
            SharedConfig::EightByteBankSize,
        ]
        .into_iter()
        .find(|c| c.raw() == raw)
    }
}

impl Context {
    /// Sets the shared-memory bank width (PyCUDA's `Context.set_shared_config`); a no-op
    /// on current GPUs, see [`SharedConfig`].
    ///
    /// ```no_run
    /// use rucuda_driver::{Device, SharedConfig};
    /// let ctx = Device::get(0)?.primary_context()?;
    /// ctx.set_shared_config(SharedConfig::FourByteBankSize)?;
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn set_shared_config(&self, config: SharedConfig) -> Result<()> {
        self.bind()?;
        // SAFETY: a plain value; the context is current.
        unsafe { call!(cuCtxSetSharedMemConfig(config.raw())) }
    }

    /// The shared-memory bank width (PyCUDA's `Context.get_shared_config`).
    ///
    /// ```no_run
    /// use rucuda_driver::Device;
    /// let ctx = Device::get(0)?.primary_context()?;
    /// println!("{:?}", ctx.shared_config()?);
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn shared_config(&self) -> Result<SharedConfig> {
        self.bind()?;
        let mut raw = CUsharedconfig(0);
        // SAFETY: writes one value; the context is current.
        unsafe { call!(cuCtxGetSharedMemConfig(&mut raw))? };
        SharedConfig::from_raw(raw)
            .ok_or_else(|| Error::invalid(format!("unknown shared memory config {}", raw.0)))
    }
}

impl Function {
    /// Sets this kernel's shared-memory bank width (PyCUDA's `Function.set_shared_config`);
    /// a no-op on current GPUs, see [`SharedConfig`].
    ///
    /// ```no_run
    /// # use rucuda_driver::*;
    /// # let ctx = Device::get(0)?.primary_context()?;
    /// # let kernel = Module::load_data(&ctx, b"")?.function("k")?;
    /// kernel.set_shared_config(SharedConfig::DefaultBankSize)?;
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn set_shared_config(&self, config: SharedConfig) -> Result<()> {
        self.context().bind()?;
        // SAFETY: a plain value; the function is alive.
        unsafe { call!(cuFuncSetSharedMemConfig(self.raw(), config.raw())) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn compute_mode_round_trips() {
        for v in -1..8 {
            assert_eq!(ComputeMode::from_raw(v).raw(), v);
        }
        assert_eq!(ComputeMode::from_raw(0), ComputeMode::Default);
        assert_eq!(ComputeMode::from_raw(2), ComputeMode::Prohibited);
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

    #[test]
    fn jit_targets_match_the_header_values() {
        use rucuda_driver_sys::CUjit_target as T;
        let cases = [
            (JitTarget::Compute(3, 0), T::CU_TARGET_COMPUTE_30),
            (JitTarget::Compute(7, 5), T::CU_TARGET_COMPUTE_75),
            (JitTarget::Compute(9, 0), T::CU_TARGET_COMPUTE_90),
            (JitTarget::Compute(10, 3), T::CU_TARGET_COMPUTE_103),
            (JitTarget::Compute(12, 1), T::CU_TARGET_COMPUTE_121),
            (JitTarget::ArchSpecific(9, 0), T::CU_TARGET_COMPUTE_90A),
            (JitTarget::ArchSpecific(10, 0), T::CU_TARGET_COMPUTE_100A),
            (JitTarget::ArchSpecific(12, 1), T::CU_TARGET_COMPUTE_121A),
            (JitTarget::FamilySpecific(10, 0), T::CU_TARGET_COMPUTE_100F),
            (JitTarget::FamilySpecific(11, 0), T::CU_TARGET_COMPUTE_110F),
            (JitTarget::FamilySpecific(12, 0), T::CU_TARGET_COMPUTE_120F),
        ];
        for (t, raw) in cases {
            assert_eq!(t.raw(), raw, "{t}");
            assert_eq!(JitTarget::from_raw(raw), Some(t));
        }
        assert_eq!(JitTarget::from_raw(CUjit_target(0x40000 | 90)), None);
        assert_eq!(
            JitTarget::for_compute_capability((9, 0)),
            JitTarget::Compute(9, 0)
        );
        assert_eq!(JitTarget::FamilySpecific(10, 0).to_string(), "compute_100f");
    }
}
