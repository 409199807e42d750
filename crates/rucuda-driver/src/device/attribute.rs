//! Every `CUdevice_attribute` of the bound headers as a Rust enum.
//!
//! Generated once from `rucuda-driver-sys/src/bindings.rs` (the `CU_DEVICE_ATTRIBUTE_*` constants);
//! aliases of one value keep the first name. We only pass these to the driver, never
//! receive them, so a closed enum is sound.

use rucuda_driver_sys::CUdevice_attribute;

/// A device attribute (PyCUDA's `device_attribute`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[non_exhaustive]
pub enum DeviceAttribute {
    /// `CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK`
    MaxThreadsPerBlock = 1,
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X`
    MaxBlockDimX = 2,
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y`
    MaxBlockDimY = 3,
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z`
    MaxBlockDimZ = 4,
    /// `CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X`
    MaxGridDimX = 5,
    /// `CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y`
    MaxGridDimY = 6,
    /// `CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z`
    MaxGridDimZ = 7,
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK`
    MaxSharedMemoryPerBlock = 8,
    /// `CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY`
    TotalConstantMemory = 9,
    /// `CU_DEVICE_ATTRIBUTE_WARP_SIZE`
    WarpSize = 10,
    /// `CU_DEVICE_ATTRIBUTE_MAX_PITCH`
    MaxPitch = 11,
    /// `CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK`
    MaxRegistersPerBlock = 12,
    /// `CU_DEVICE_ATTRIBUTE_CLOCK_RATE`
    ClockRate = 13,
    /// `CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT`
    TextureAlignment = 14,
    /// `CU_DEVICE_ATTRIBUTE_GPU_OVERLAP`
    GpuOverlap = 15,
    /// `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`
    MultiprocessorCount = 16,
    /// `CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT`
    KernelExecTimeout = 17,
    /// `CU_DEVICE_ATTRIBUTE_INTEGRATED`
    Integrated = 18,
    /// `CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY`
    CanMapHostMemory = 19,
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_MODE`
    ComputeMode = 20,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH`
    MaximumTexture1dWidth = 21,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH`
    MaximumTexture2dWidth = 22,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT`
    MaximumTexture2dHeight = 23,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH`
    MaximumTexture3dWidth = 24,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT`
    MaximumTexture3dHeight = 25,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH`
    MaximumTexture3dDepth = 26,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH`
    MaximumTexture2dLayeredWidth = 27,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT`
    MaximumTexture2dLayeredHeight = 28,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS`
    MaximumTexture2dLayeredLayers = 29,
    /// `CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT`
    SurfaceAlignment = 30,
    /// `CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS`
    ConcurrentKernels = 31,
    /// `CU_DEVICE_ATTRIBUTE_ECC_ENABLED`
    EccEnabled = 32,
    /// `CU_DEVICE_ATTRIBUTE_PCI_BUS_ID`
    PciBusId = 33,
    /// `CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID`
    PciDeviceId = 34,
    /// `CU_DEVICE_ATTRIBUTE_TCC_DRIVER`
    TccDriver = 35,
    /// `CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE`
    MemoryClockRate = 36,
    /// `CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH`
    GlobalMemoryBusWidth = 37,
    /// `CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE`
    L2CacheSize = 38,
    /// `CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR`
    MaxThreadsPerMultiprocessor = 39,
    /// `CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT`
    AsyncEngineCount = 40,
    /// `CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING`
    UnifiedAddressing = 41,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH`
    MaximumTexture1dLayeredWidth = 42,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS`
    MaximumTexture1dLayeredLayers = 43,
    /// `CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER`
    CanTex2dGather = 44,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH`
    MaximumTexture2dGatherWidth = 45,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT`
    MaximumTexture2dGatherHeight = 46,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE`
    MaximumTexture3dWidthAlternate = 47,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE`
    MaximumTexture3dHeightAlternate = 48,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE`
    MaximumTexture3dDepthAlternate = 49,
    /// `CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID`
    PciDomainId = 50,
    /// `CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT`
    TexturePitchAlignment = 51,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH`
    MaximumTexturecubemapWidth = 52,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH`
    MaximumTexturecubemapLayeredWidth = 53,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS`
    MaximumTexturecubemapLayeredLayers = 54,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH`
    MaximumSurface1dWidth = 55,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH`
    MaximumSurface2dWidth = 56,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT`
    MaximumSurface2dHeight = 57,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH`
    MaximumSurface3dWidth = 58,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT`
    MaximumSurface3dHeight = 59,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH`
    MaximumSurface3dDepth = 60,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH`
    MaximumSurface1dLayeredWidth = 61,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS`
    MaximumSurface1dLayeredLayers = 62,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH`
    MaximumSurface2dLayeredWidth = 63,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT`
    MaximumSurface2dLayeredHeight = 64,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS`
    MaximumSurface2dLayeredLayers = 65,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH`
    MaximumSurfacecubemapWidth = 66,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH`
    MaximumSurfacecubemapLayeredWidth = 67,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS`
    MaximumSurfacecubemapLayeredLayers = 68,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH`
    MaximumTexture1dLinearWidth = 69,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH`
    MaximumTexture2dLinearWidth = 70,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT`
    MaximumTexture2dLinearHeight = 71,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH`
    MaximumTexture2dLinearPitch = 72,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH`
    MaximumTexture2dMipmappedWidth = 73,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT`
    MaximumTexture2dMipmappedHeight = 74,
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR`
    ComputeCapabilityMajor = 75,
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR`
    ComputeCapabilityMinor = 76,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH`
    MaximumTexture1dMipmappedWidth = 77,
    /// `CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED`
    StreamPrioritiesSupported = 78,
    /// `CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED`
    GlobalL1CacheSupported = 79,
    /// `CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED`
    LocalL1CacheSupported = 80,
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR`
    MaxSharedMemoryPerMultiprocessor = 81,
    /// `CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR`
    MaxRegistersPerMultiprocessor = 82,
    /// `CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY`
    ManagedMemory = 83,
    /// `CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD`
    MultiGpuBoard = 84,
    /// `CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID`
    MultiGpuBoardGroupId = 85,
    /// `CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED`
    HostNativeAtomicSupported = 86,
    /// `CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO`
    SingleToDoublePrecisionPerfRatio = 87,
    /// `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS`
    PageableMemoryAccess = 88,
    /// `CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS`
    ConcurrentManagedAccess = 89,
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED`
    ComputePreemptionSupported = 90,
    /// `CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM`
    CanUseHostPointerForRegisteredMem = 91,
    /// `CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1`
    CanUseStreamMemOpsV1 = 92,
    /// `CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1`
    CanUse64BitStreamMemOpsV1 = 93,
    /// `CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1`
    CanUseStreamWaitValueNorV1 = 94,
    /// `CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH`
    CooperativeLaunch = 95,
    /// `CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH`
    CooperativeMultiDeviceLaunch = 96,
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`
    MaxSharedMemoryPerBlockOptin = 97,
    /// `CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES`
    CanFlushRemoteWrites = 98,
    /// `CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED`
    HostRegisterSupported = 99,
    /// `CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST`
    DirectManagedMemAccessFromHost = 101,
    /// `CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED`
    VirtualAddressManagementSupported = 102,
    /// `CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED`
    HandleTypeWin32HandleSupported = 104,
    /// `CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED`
    HandleTypeWin32KmtHandleSupported = 105,
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR`
    MaxBlocksPerMultiprocessor = 106,
    /// `CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED`
    GenericCompressionSupported = 107,
    /// `CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE`
    MaxPersistingL2CacheSize = 108,
    /// `CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE`
    MaxAccessPolicyWindowSize = 109,
    /// `CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED`
    GpuDirectRdmaWithCudaVmmSupported = 110,
    /// `CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK`
    ReservedSharedMemoryPerBlock = 111,
    /// `CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED`
    SparseCudaArraySupported = 112,
    /// `CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED`
    ReadOnlyHostRegisterSupported = 113,
    /// `CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED`
    TimelineSemaphoreInteropSupported = 114,
    /// `CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED`
    MemoryPoolsSupported = 115,
    /// `CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED`
    GpuDirectRdmaSupported = 116,
    /// `CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS`
    GpuDirectRdmaFlushWritesOptions = 117,
    /// `CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING`
    GpuDirectRdmaWritesOrdering = 118,
    /// `CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES`
    MempoolSupportedHandleTypes = 119,
    /// `CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH`
    ClusterLaunch = 120,
    /// `CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED`
    DeferredMappingCudaArraySupported = 121,
    /// `CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS`
    CanUse64BitStreamMemOps = 122,
    /// `CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR`
    CanUseStreamWaitValueNor = 123,
    /// `CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED`
    DmaBufSupported = 124,
    /// `CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED`
    IpcEventSupported = 125,
    /// `CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT`
    MemSyncDomainCount = 126,
    /// `CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED`
    TensorMapAccessSupported = 127,
    /// `CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED`
    HandleTypeFabricSupported = 128,
    /// `CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS`
    UnifiedFunctionPointers = 129,
    /// `CU_DEVICE_ATTRIBUTE_NUMA_CONFIG`
    NumaConfig = 130,
    /// `CU_DEVICE_ATTRIBUTE_NUMA_ID`
    NumaId = 131,
    /// `CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED`
    MulticastSupported = 132,
    /// `CU_DEVICE_ATTRIBUTE_MPS_ENABLED`
    MpsEnabled = 133,
    /// `CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID`
    HostNumaId = 134,
    /// `CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED`
    D3d12CigSupported = 135,
    /// `CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK`
    MemDecompressAlgorithmMask = 136,
    /// `CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH`
    MemDecompressMaximumLength = 137,
    /// `CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED`
    VulkanCigSupported = 138,
    /// `CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID`
    GpuPciDeviceId = 139,
    /// `CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID`
    GpuPciSubsystemId = 140,
    /// `CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED`
    HostNumaMemoryPoolsSupported = 142,
    /// `CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED`
    HostNumaMultinodeIpcSupported = 143,
    /// `CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED`
    HostMemoryPoolsSupported = 144,
    /// `CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED`
    HostAllocDmaBufSupported = 146,
}

impl DeviceAttribute {
    /// Every attribute, in the driver's numeric order.
    pub const ALL: &'static [DeviceAttribute] = &[
        DeviceAttribute::MaxThreadsPerBlock,
        DeviceAttribute::MaxBlockDimX,
        DeviceAttribute::MaxBlockDimY,
        DeviceAttribute::MaxBlockDimZ,
        DeviceAttribute::MaxGridDimX,
        DeviceAttribute::MaxGridDimY,
        DeviceAttribute::MaxGridDimZ,
        DeviceAttribute::MaxSharedMemoryPerBlock,
        DeviceAttribute::TotalConstantMemory,
        DeviceAttribute::WarpSize,
        DeviceAttribute::MaxPitch,
        DeviceAttribute::MaxRegistersPerBlock,
        DeviceAttribute::ClockRate,
        DeviceAttribute::TextureAlignment,
        DeviceAttribute::GpuOverlap,
        DeviceAttribute::MultiprocessorCount,
        DeviceAttribute::KernelExecTimeout,
        DeviceAttribute::Integrated,
        DeviceAttribute::CanMapHostMemory,
        DeviceAttribute::ComputeMode,
        DeviceAttribute::MaximumTexture1dWidth,
        DeviceAttribute::MaximumTexture2dWidth,
        DeviceAttribute::MaximumTexture2dHeight,
        DeviceAttribute::MaximumTexture3dWidth,
        DeviceAttribute::MaximumTexture3dHeight,
        DeviceAttribute::MaximumTexture3dDepth,
        DeviceAttribute::MaximumTexture2dLayeredWidth,
        DeviceAttribute::MaximumTexture2dLayeredHeight,
        DeviceAttribute::MaximumTexture2dLayeredLayers,
        DeviceAttribute::SurfaceAlignment,
        DeviceAttribute::ConcurrentKernels,
        DeviceAttribute::EccEnabled,
        DeviceAttribute::PciBusId,
        DeviceAttribute::PciDeviceId,
        DeviceAttribute::TccDriver,
        DeviceAttribute::MemoryClockRate,
        DeviceAttribute::GlobalMemoryBusWidth,
        DeviceAttribute::L2CacheSize,
        DeviceAttribute::MaxThreadsPerMultiprocessor,
        DeviceAttribute::AsyncEngineCount,
        DeviceAttribute::UnifiedAddressing,
        DeviceAttribute::MaximumTexture1dLayeredWidth,
        DeviceAttribute::MaximumTexture1dLayeredLayers,
        DeviceAttribute::CanTex2dGather,
        DeviceAttribute::MaximumTexture2dGatherWidth,
        DeviceAttribute::MaximumTexture2dGatherHeight,
        DeviceAttribute::MaximumTexture3dWidthAlternate,
        DeviceAttribute::MaximumTexture3dHeightAlternate,
        DeviceAttribute::MaximumTexture3dDepthAlternate,
        DeviceAttribute::PciDomainId,
        DeviceAttribute::TexturePitchAlignment,
        DeviceAttribute::MaximumTexturecubemapWidth,
        DeviceAttribute::MaximumTexturecubemapLayeredWidth,
        DeviceAttribute::MaximumTexturecubemapLayeredLayers,
        DeviceAttribute::MaximumSurface1dWidth,
        DeviceAttribute::MaximumSurface2dWidth,
        DeviceAttribute::MaximumSurface2dHeight,
        DeviceAttribute::MaximumSurface3dWidth,
        DeviceAttribute::MaximumSurface3dHeight,
        DeviceAttribute::MaximumSurface3dDepth,
        DeviceAttribute::MaximumSurface1dLayeredWidth,
        DeviceAttribute::MaximumSurface1dLayeredLayers,
        DeviceAttribute::MaximumSurface2dLayeredWidth,
        DeviceAttribute::MaximumSurface2dLayeredHeight,
        DeviceAttribute::MaximumSurface2dLayeredLayers,
        DeviceAttribute::MaximumSurfacecubemapWidth,
        DeviceAttribute::MaximumSurfacecubemapLayeredWidth,
        DeviceAttribute::MaximumSurfacecubemapLayeredLayers,
        DeviceAttribute::MaximumTexture1dLinearWidth,
        DeviceAttribute::MaximumTexture2dLinearWidth,
        DeviceAttribute::MaximumTexture2dLinearHeight,
        DeviceAttribute::MaximumTexture2dLinearPitch,
        DeviceAttribute::MaximumTexture2dMipmappedWidth,
        DeviceAttribute::MaximumTexture2dMipmappedHeight,
        DeviceAttribute::ComputeCapabilityMajor,
        DeviceAttribute::ComputeCapabilityMinor,
        DeviceAttribute::MaximumTexture1dMipmappedWidth,
        DeviceAttribute::StreamPrioritiesSupported,
        DeviceAttribute::GlobalL1CacheSupported,
        DeviceAttribute::LocalL1CacheSupported,
        DeviceAttribute::MaxSharedMemoryPerMultiprocessor,
        DeviceAttribute::MaxRegistersPerMultiprocessor,
        DeviceAttribute::ManagedMemory,
        DeviceAttribute::MultiGpuBoard,
        DeviceAttribute::MultiGpuBoardGroupId,
        DeviceAttribute::HostNativeAtomicSupported,
        DeviceAttribute::SingleToDoublePrecisionPerfRatio,
        DeviceAttribute::PageableMemoryAccess,
        DeviceAttribute::ConcurrentManagedAccess,
        DeviceAttribute::ComputePreemptionSupported,
        DeviceAttribute::CanUseHostPointerForRegisteredMem,
        DeviceAttribute::CanUseStreamMemOpsV1,
        DeviceAttribute::CanUse64BitStreamMemOpsV1,
        DeviceAttribute::CanUseStreamWaitValueNorV1,
        DeviceAttribute::CooperativeLaunch,
        DeviceAttribute::CooperativeMultiDeviceLaunch,
        DeviceAttribute::MaxSharedMemoryPerBlockOptin,
        DeviceAttribute::CanFlushRemoteWrites,
        DeviceAttribute::HostRegisterSupported,
        DeviceAttribute::DirectManagedMemAccessFromHost,
        DeviceAttribute::VirtualAddressManagementSupported,
        DeviceAttribute::HandleTypeWin32HandleSupported,
        DeviceAttribute::HandleTypeWin32KmtHandleSupported,
        DeviceAttribute::MaxBlocksPerMultiprocessor,
        DeviceAttribute::GenericCompressionSupported,
        DeviceAttribute::MaxPersistingL2CacheSize,
        DeviceAttribute::MaxAccessPolicyWindowSize,
        DeviceAttribute::GpuDirectRdmaWithCudaVmmSupported,
        DeviceAttribute::ReservedSharedMemoryPerBlock,
        DeviceAttribute::SparseCudaArraySupported,
        DeviceAttribute::ReadOnlyHostRegisterSupported,
        DeviceAttribute::TimelineSemaphoreInteropSupported,
        DeviceAttribute::MemoryPoolsSupported,
        DeviceAttribute::GpuDirectRdmaSupported,
        DeviceAttribute::GpuDirectRdmaFlushWritesOptions,
        DeviceAttribute::GpuDirectRdmaWritesOrdering,
        DeviceAttribute::MempoolSupportedHandleTypes,
        DeviceAttribute::ClusterLaunch,
        DeviceAttribute::DeferredMappingCudaArraySupported,
        DeviceAttribute::CanUse64BitStreamMemOps,
        DeviceAttribute::CanUseStreamWaitValueNor,
        DeviceAttribute::DmaBufSupported,
        DeviceAttribute::IpcEventSupported,
        DeviceAttribute::MemSyncDomainCount,
        DeviceAttribute::TensorMapAccessSupported,
        DeviceAttribute::HandleTypeFabricSupported,
        DeviceAttribute::UnifiedFunctionPointers,
        DeviceAttribute::NumaConfig,
        DeviceAttribute::NumaId,
        DeviceAttribute::MulticastSupported,
        DeviceAttribute::MpsEnabled,
        DeviceAttribute::HostNumaId,
        DeviceAttribute::D3d12CigSupported,
        DeviceAttribute::MemDecompressAlgorithmMask,
        DeviceAttribute::MemDecompressMaximumLength,
        DeviceAttribute::VulkanCigSupported,
        DeviceAttribute::GpuPciDeviceId,
        DeviceAttribute::GpuPciSubsystemId,
        DeviceAttribute::HostNumaMemoryPoolsSupported,
        DeviceAttribute::HostNumaMultinodeIpcSupported,
        DeviceAttribute::HostMemoryPoolsSupported,
        DeviceAttribute::HostAllocDmaBufSupported,
    ];

    /// The C name without its prefix, in PyCUDA's spelling (`MAX_THREADS_PER_BLOCK`).
    pub fn name(self) -> &'static str {
        match self {
            DeviceAttribute::MaxThreadsPerBlock => "MAX_THREADS_PER_BLOCK",
            DeviceAttribute::MaxBlockDimX => "MAX_BLOCK_DIM_X",
            DeviceAttribute::MaxBlockDimY => "MAX_BLOCK_DIM_Y",
            DeviceAttribute::MaxBlockDimZ => "MAX_BLOCK_DIM_Z",
            DeviceAttribute::MaxGridDimX => "MAX_GRID_DIM_X",
            DeviceAttribute::MaxGridDimY => "MAX_GRID_DIM_Y",
            DeviceAttribute::MaxGridDimZ => "MAX_GRID_DIM_Z",
            DeviceAttribute::MaxSharedMemoryPerBlock => "MAX_SHARED_MEMORY_PER_BLOCK",
            DeviceAttribute::TotalConstantMemory => "TOTAL_CONSTANT_MEMORY",
            DeviceAttribute::WarpSize => "WARP_SIZE",
            DeviceAttribute::MaxPitch => "MAX_PITCH",
            DeviceAttribute::MaxRegistersPerBlock => "MAX_REGISTERS_PER_BLOCK",
            DeviceAttribute::ClockRate => "CLOCK_RATE",
            DeviceAttribute::TextureAlignment => "TEXTURE_ALIGNMENT",
            DeviceAttribute::GpuOverlap => "GPU_OVERLAP",
            DeviceAttribute::MultiprocessorCount => "MULTIPROCESSOR_COUNT",
            DeviceAttribute::KernelExecTimeout => "KERNEL_EXEC_TIMEOUT",
            DeviceAttribute::Integrated => "INTEGRATED",
            DeviceAttribute::CanMapHostMemory => "CAN_MAP_HOST_MEMORY",
            DeviceAttribute::ComputeMode => "COMPUTE_MODE",
            DeviceAttribute::MaximumTexture1dWidth => "MAXIMUM_TEXTURE1D_WIDTH",
            DeviceAttribute::MaximumTexture2dWidth => "MAXIMUM_TEXTURE2D_WIDTH",
            DeviceAttribute::MaximumTexture2dHeight => "MAXIMUM_TEXTURE2D_HEIGHT",
            DeviceAttribute::MaximumTexture3dWidth => "MAXIMUM_TEXTURE3D_WIDTH",
            DeviceAttribute::MaximumTexture3dHeight => "MAXIMUM_TEXTURE3D_HEIGHT",
            DeviceAttribute::MaximumTexture3dDepth => "MAXIMUM_TEXTURE3D_DEPTH",
            DeviceAttribute::MaximumTexture2dLayeredWidth => "MAXIMUM_TEXTURE2D_LAYERED_WIDTH",
            DeviceAttribute::MaximumTexture2dLayeredHeight => "MAXIMUM_TEXTURE2D_LAYERED_HEIGHT",
            DeviceAttribute::MaximumTexture2dLayeredLayers => "MAXIMUM_TEXTURE2D_LAYERED_LAYERS",
            DeviceAttribute::SurfaceAlignment => "SURFACE_ALIGNMENT",
            DeviceAttribute::ConcurrentKernels => "CONCURRENT_KERNELS",
            DeviceAttribute::EccEnabled => "ECC_ENABLED",
            DeviceAttribute::PciBusId => "PCI_BUS_ID",
            DeviceAttribute::PciDeviceId => "PCI_DEVICE_ID",
            DeviceAttribute::TccDriver => "TCC_DRIVER",
            DeviceAttribute::MemoryClockRate => "MEMORY_CLOCK_RATE",
            DeviceAttribute::GlobalMemoryBusWidth => "GLOBAL_MEMORY_BUS_WIDTH",
            DeviceAttribute::L2CacheSize => "L2_CACHE_SIZE",
            DeviceAttribute::MaxThreadsPerMultiprocessor => "MAX_THREADS_PER_MULTIPROCESSOR",
            DeviceAttribute::AsyncEngineCount => "ASYNC_ENGINE_COUNT",
            DeviceAttribute::UnifiedAddressing => "UNIFIED_ADDRESSING",
            DeviceAttribute::MaximumTexture1dLayeredWidth => "MAXIMUM_TEXTURE1D_LAYERED_WIDTH",
            DeviceAttribute::MaximumTexture1dLayeredLayers => "MAXIMUM_TEXTURE1D_LAYERED_LAYERS",
            DeviceAttribute::CanTex2dGather => "CAN_TEX2D_GATHER",
            DeviceAttribute::MaximumTexture2dGatherWidth => "MAXIMUM_TEXTURE2D_GATHER_WIDTH",
            DeviceAttribute::MaximumTexture2dGatherHeight => "MAXIMUM_TEXTURE2D_GATHER_HEIGHT",
            DeviceAttribute::MaximumTexture3dWidthAlternate => "MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE",
            DeviceAttribute::MaximumTexture3dHeightAlternate => {
                "MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE"
            }
            DeviceAttribute::MaximumTexture3dDepthAlternate => "MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE",
            DeviceAttribute::PciDomainId => "PCI_DOMAIN_ID",
            DeviceAttribute::TexturePitchAlignment => "TEXTURE_PITCH_ALIGNMENT",
            DeviceAttribute::MaximumTexturecubemapWidth => "MAXIMUM_TEXTURECUBEMAP_WIDTH",
            DeviceAttribute::MaximumTexturecubemapLayeredWidth => {
                "MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH"
            }
            DeviceAttribute::MaximumTexturecubemapLayeredLayers => {
                "MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS"
            }
            DeviceAttribute::MaximumSurface1dWidth => "MAXIMUM_SURFACE1D_WIDTH",
            DeviceAttribute::MaximumSurface2dWidth => "MAXIMUM_SURFACE2D_WIDTH",
            DeviceAttribute::MaximumSurface2dHeight => "MAXIMUM_SURFACE2D_HEIGHT",
            DeviceAttribute::MaximumSurface3dWidth => "MAXIMUM_SURFACE3D_WIDTH",
            DeviceAttribute::MaximumSurface3dHeight => "MAXIMUM_SURFACE3D_HEIGHT",
            DeviceAttribute::MaximumSurface3dDepth => "MAXIMUM_SURFACE3D_DEPTH",
            DeviceAttribute::MaximumSurface1dLayeredWidth => "MAXIMUM_SURFACE1D_LAYERED_WIDTH",
            DeviceAttribute::MaximumSurface1dLayeredLayers => "MAXIMUM_SURFACE1D_LAYERED_LAYERS",
            DeviceAttribute::MaximumSurface2dLayeredWidth => "MAXIMUM_SURFACE2D_LAYERED_WIDTH",
            DeviceAttribute::MaximumSurface2dLayeredHeight => "MAXIMUM_SURFACE2D_LAYERED_HEIGHT",
            DeviceAttribute::MaximumSurface2dLayeredLayers => "MAXIMUM_SURFACE2D_LAYERED_LAYERS",
            DeviceAttribute::MaximumSurfacecubemapWidth => "MAXIMUM_SURFACECUBEMAP_WIDTH",
            DeviceAttribute::MaximumSurfacecubemapLayeredWidth => {
                "MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH"
            }
            DeviceAttribute::MaximumSurfacecubemapLayeredLayers => {
                "MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS"
            }
            DeviceAttribute::MaximumTexture1dLinearWidth => "MAXIMUM_TEXTURE1D_LINEAR_WIDTH",
            DeviceAttribute::MaximumTexture2dLinearWidth => "MAXIMUM_TEXTURE2D_LINEAR_WIDTH",
            DeviceAttribute::MaximumTexture2dLinearHeight => "MAXIMUM_TEXTURE2D_LINEAR_HEIGHT",
            DeviceAttribute::MaximumTexture2dLinearPitch => "MAXIMUM_TEXTURE2D_LINEAR_PITCH",
            DeviceAttribute::MaximumTexture2dMipmappedWidth => "MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH",
            DeviceAttribute::MaximumTexture2dMipmappedHeight => {
                "MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT"
            }
            DeviceAttribute::ComputeCapabilityMajor => "COMPUTE_CAPABILITY_MAJOR",
            DeviceAttribute::ComputeCapabilityMinor => "COMPUTE_CAPABILITY_MINOR",
            DeviceAttribute::MaximumTexture1dMipmappedWidth => "MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH",
            DeviceAttribute::StreamPrioritiesSupported => "STREAM_PRIORITIES_SUPPORTED",
            DeviceAttribute::GlobalL1CacheSupported => "GLOBAL_L1_CACHE_SUPPORTED",
            DeviceAttribute::LocalL1CacheSupported => "LOCAL_L1_CACHE_SUPPORTED",
            DeviceAttribute::MaxSharedMemoryPerMultiprocessor => {
                "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"
            }
            DeviceAttribute::MaxRegistersPerMultiprocessor => "MAX_REGISTERS_PER_MULTIPROCESSOR",
            DeviceAttribute::ManagedMemory => "MANAGED_MEMORY",
            DeviceAttribute::MultiGpuBoard => "MULTI_GPU_BOARD",
            DeviceAttribute::MultiGpuBoardGroupId => "MULTI_GPU_BOARD_GROUP_ID",
            DeviceAttribute::HostNativeAtomicSupported => "HOST_NATIVE_ATOMIC_SUPPORTED",
            DeviceAttribute::SingleToDoublePrecisionPerfRatio => {
                "SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO"
            }
            DeviceAttribute::PageableMemoryAccess => "PAGEABLE_MEMORY_ACCESS",
            DeviceAttribute::ConcurrentManagedAccess => "CONCURRENT_MANAGED_ACCESS",
            DeviceAttribute::ComputePreemptionSupported => "COMPUTE_PREEMPTION_SUPPORTED",
            DeviceAttribute::CanUseHostPointerForRegisteredMem => {
                "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"
            }
            DeviceAttribute::CanUseStreamMemOpsV1 => "CAN_USE_STREAM_MEM_OPS_V1",
            DeviceAttribute::CanUse64BitStreamMemOpsV1 => "CAN_USE_64_BIT_STREAM_MEM_OPS_V1",
            DeviceAttribute::CanUseStreamWaitValueNorV1 => "CAN_USE_STREAM_WAIT_VALUE_NOR_V1",
            DeviceAttribute::CooperativeLaunch => "COOPERATIVE_LAUNCH",
            DeviceAttribute::CooperativeMultiDeviceLaunch => "COOPERATIVE_MULTI_DEVICE_LAUNCH",
            DeviceAttribute::MaxSharedMemoryPerBlockOptin => "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
            DeviceAttribute::CanFlushRemoteWrites => "CAN_FLUSH_REMOTE_WRITES",
            DeviceAttribute::HostRegisterSupported => "HOST_REGISTER_SUPPORTED",
            DeviceAttribute::DirectManagedMemAccessFromHost => {
                "DIRECT_MANAGED_MEM_ACCESS_FROM_HOST"
            }
            DeviceAttribute::VirtualAddressManagementSupported => {
                "VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED"
            }
            DeviceAttribute::HandleTypeWin32HandleSupported => "HANDLE_TYPE_WIN32_HANDLE_SUPPORTED",
            DeviceAttribute::HandleTypeWin32KmtHandleSupported => {
                "HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED"
            }
            DeviceAttribute::MaxBlocksPerMultiprocessor => "MAX_BLOCKS_PER_MULTIPROCESSOR",
            DeviceAttribute::GenericCompressionSupported => "GENERIC_COMPRESSION_SUPPORTED",
            DeviceAttribute::MaxPersistingL2CacheSize => "MAX_PERSISTING_L2_CACHE_SIZE",
            DeviceAttribute::MaxAccessPolicyWindowSize => "MAX_ACCESS_POLICY_WINDOW_SIZE",
            DeviceAttribute::GpuDirectRdmaWithCudaVmmSupported => {
                "GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED"
            }
            DeviceAttribute::ReservedSharedMemoryPerBlock => "RESERVED_SHARED_MEMORY_PER_BLOCK",
            DeviceAttribute::SparseCudaArraySupported => "SPARSE_CUDA_ARRAY_SUPPORTED",
            DeviceAttribute::ReadOnlyHostRegisterSupported => "READ_ONLY_HOST_REGISTER_SUPPORTED",
            DeviceAttribute::TimelineSemaphoreInteropSupported => {
                "TIMELINE_SEMAPHORE_INTEROP_SUPPORTED"
            }
            DeviceAttribute::MemoryPoolsSupported => "MEMORY_POOLS_SUPPORTED",
            DeviceAttribute::GpuDirectRdmaSupported => "GPU_DIRECT_RDMA_SUPPORTED",
            DeviceAttribute::GpuDirectRdmaFlushWritesOptions => {
                "GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS"
            }
            DeviceAttribute::GpuDirectRdmaWritesOrdering => "GPU_DIRECT_RDMA_WRITES_ORDERING",
            DeviceAttribute::MempoolSupportedHandleTypes => "MEMPOOL_SUPPORTED_HANDLE_TYPES",
            DeviceAttribute::ClusterLaunch => "CLUSTER_LAUNCH",
            DeviceAttribute::DeferredMappingCudaArraySupported => {
                "DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED"
            }
            DeviceAttribute::CanUse64BitStreamMemOps => "CAN_USE_64_BIT_STREAM_MEM_OPS",
            DeviceAttribute::CanUseStreamWaitValueNor => "CAN_USE_STREAM_WAIT_VALUE_NOR",
            DeviceAttribute::DmaBufSupported => "DMA_BUF_SUPPORTED",
            DeviceAttribute::IpcEventSupported => "IPC_EVENT_SUPPORTED",
            DeviceAttribute::MemSyncDomainCount => "MEM_SYNC_DOMAIN_COUNT",
            DeviceAttribute::TensorMapAccessSupported => "TENSOR_MAP_ACCESS_SUPPORTED",
            DeviceAttribute::HandleTypeFabricSupported => "HANDLE_TYPE_FABRIC_SUPPORTED",
            DeviceAttribute::UnifiedFunctionPointers => "UNIFIED_FUNCTION_POINTERS",
            DeviceAttribute::NumaConfig => "NUMA_CONFIG",
            DeviceAttribute::NumaId => "NUMA_ID",
            DeviceAttribute::MulticastSupported => "MULTICAST_SUPPORTED",
            DeviceAttribute::MpsEnabled => "MPS_ENABLED",
            DeviceAttribute::HostNumaId => "HOST_NUMA_ID",
            DeviceAttribute::D3d12CigSupported => "D3D12_CIG_SUPPORTED",
            DeviceAttribute::MemDecompressAlgorithmMask => "MEM_DECOMPRESS_ALGORITHM_MASK",
            DeviceAttribute::MemDecompressMaximumLength => "MEM_DECOMPRESS_MAXIMUM_LENGTH",
            DeviceAttribute::VulkanCigSupported => "VULKAN_CIG_SUPPORTED",
            DeviceAttribute::GpuPciDeviceId => "GPU_PCI_DEVICE_ID",
            DeviceAttribute::GpuPciSubsystemId => "GPU_PCI_SUBSYSTEM_ID",
            DeviceAttribute::HostNumaMemoryPoolsSupported => "HOST_NUMA_MEMORY_POOLS_SUPPORTED",
            DeviceAttribute::HostNumaMultinodeIpcSupported => "HOST_NUMA_MULTINODE_IPC_SUPPORTED",
            DeviceAttribute::HostMemoryPoolsSupported => "HOST_MEMORY_POOLS_SUPPORTED",
            DeviceAttribute::HostAllocDmaBufSupported => "HOST_ALLOC_DMA_BUF_SUPPORTED",
        }
    }

    /// The raw driver value.
    pub fn raw(self) -> CUdevice_attribute {
        CUdevice_attribute(self as u32)
    }
}
