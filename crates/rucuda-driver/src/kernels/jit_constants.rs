//! The JIT's constant groups (PyCUDA's `jit_option`, `jit_fallback`, `jit_target`) and
//! the linker's input types.

use rucuda_driver_sys::{CUjitInputType, CUjit_fallback, CUjit_option, CUjit_target};

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

#[cfg(test)]
mod tests {
    use super::*;

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
