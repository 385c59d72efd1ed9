//! The generators' groups of cudarc's raw `sys` functions, by what each does to the current
//! context or device.

/// Raw functions of a module's `sys` layer that mean one thing: (module, note, names).
pub(super) type Group = (&'static str, &'static str, &'static [&'static str]);

/// Raw functions (`<module>::sys`) that change the calling thread's current context or device.
/// Documented in `cuda.h` / `cuda_runtime_api.h` (CUDA 12.6) as doing so.
pub(super) const SYS_SETS: &[Group] = &[
    (
        "driver",
        "makes a context current on this thread",
        &["cuCtxSetCurrent"],
    ),
    (
        "driver",
        "pushes a context, making it current on this thread",
        &["cuCtxPushCurrent_v2"],
    ),
    (
        "driver",
        "pops this thread's current context; the one below becomes current",
        &["cuCtxPopCurrent_v2"],
    ),
    // cuCtxCreate "creates a new CUDA context and associates it with the calling thread".
    (
        "driver",
        "creates a context and makes it current on this thread",
        &["cuCtxCreate_v2", "cuCtxCreate_v3", "cuCtxCreate_v4"],
    ),
    (
        "runtime",
        "sets this thread's current device",
        &["cudaSetDevice"],
    ),
    // The devices the runtime tries, in order, when it picks one for a thread that set none.
    (
        "runtime",
        "changes which device the runtime makes current for threads that set none",
        &["cudaSetValidDevices"],
    ),
];

/// Raw functions that act on whichever context or device is current: no argument names the
/// context (a stream, event, module, function, pointer or context handle does). Not here, and
/// why:
/// - calls that take a stream, event, module, function, kernel, graph, pool, pointer or context
///   (`cuMemcpyHtoDAsync_v2`, `cuLaunchKernel`, `cuModuleGetFunction`, `cuMemFree_v2`,
///   `cuOccupancy*` on a `CUfunction`, `cuGraphInstantiate*`, ...): the handle decides. That a
///   NULL stream or context means "the current one" is the caller's explicit choice;
/// - calls that need no context or are process-wide (`cuInit`, `cuDeviceGetCount`,
///   `cuLibraryLoadData`, `cuMemCreate`, `cuMemAddressReserve`, `cuCoredump*Global`, logs);
/// - legacy texture and surface references (`cuTexRef*`, `cudaBindTexture*`), removed in CUDA 12;
/// - texture and surface objects: the headers do not say they depend on the current context.
pub(super) const SYS_USES: &[Group] = &[
    // Reading which context or device is current is choosing it implicitly.
    (
        "driver",
        "reads which context is current",
        &["cuCtxGetCurrent"],
    ),
    (
        "driver",
        "reads the device of whatever context is current",
        &["cuCtxGetDevice"],
    ),
    (
        "driver",
        "takes a reference to whatever context is current",
        &["cuCtxAttach"],
    ),
    (
        "runtime",
        "reads which device is current",
        &["cudaGetDevice"],
    ),
    // Context and device configuration.
    (
        "driver",
        "reads a setting of whatever context is current",
        &[
            "cuCtxGetFlags",
            "cuCtxGetLimit",
            "cuCtxGetCacheConfig",
            "cuCtxGetSharedMemConfig",
            "cuCtxGetStreamPriorityRange",
            "cuCtxGetExecAffinity",
        ],
    ),
    (
        "driver",
        "configures whatever context is current",
        &[
            "cuCtxSetFlags",
            "cuCtxSetLimit",
            "cuCtxSetCacheConfig",
            "cuCtxSetSharedMemConfig",
        ],
    ),
    (
        "driver",
        "resets the L2 cache of whatever context is current",
        &["cuCtxResetPersistingL2Cache"],
    ),
    (
        "driver",
        "changes the peer access of whatever context is current",
        &["cuCtxEnablePeerAccess", "cuCtxDisablePeerAccess"],
    ),
    (
        "driver",
        "reads a coredump setting of whatever context is current",
        &["cuCoredumpGetAttribute"],
    ),
    (
        "driver",
        "changes a coredump setting of whatever context is current",
        &["cuCoredumpSetAttribute"],
    ),
    (
        "driver",
        "profiles whatever context is current",
        &["cuProfilerStart", "cuProfilerStop"],
    ),
    (
        "driver",
        "flushes RDMA writes to whatever context is current",
        &["cuFlushGPUDirectRDMAWrites"],
    ),
    (
        "runtime",
        "reads a setting of whatever device is current",
        &[
            "cudaGetDeviceFlags",
            "cudaDeviceGetLimit",
            "cudaDeviceGetCacheConfig",
            "cudaDeviceGetSharedMemConfig",
            "cudaDeviceGetStreamPriorityRange",
            "cudaThreadGetLimit",
            "cudaThreadGetCacheConfig",
        ],
    ),
    (
        "runtime",
        "configures whatever device is current",
        &[
            "cudaSetDeviceFlags",
            "cudaDeviceSetLimit",
            "cudaDeviceSetCacheConfig",
            "cudaDeviceSetSharedMemConfig",
            "cudaThreadSetLimit",
            "cudaThreadSetCacheConfig",
        ],
    ),
    (
        "runtime",
        "resets the L2 cache of whatever device is current",
        &["cudaCtxResetPersistingL2Cache"],
    ),
    (
        "runtime",
        "changes the peer access of whatever device is current",
        &["cudaDeviceEnablePeerAccess", "cudaDeviceDisablePeerAccess"],
    ),
    (
        "runtime",
        "flushes RDMA writes to whatever device is current",
        &["cudaDeviceFlushGPUDirectRDMAWrites"],
    ),
    (
        "runtime",
        "profiles whatever context is current",
        &["cudaProfilerStop"],
    ),
    // Synchronization and reset.
    (
        "driver",
        "waits for whatever context is current",
        &["cuCtxSynchronize"],
    ),
    (
        "runtime",
        "waits for whatever device is current",
        &["cudaDeviceSynchronize", "cudaThreadSynchronize"],
    ),
    (
        "runtime",
        "resets whatever device is current",
        &["cudaDeviceReset", "cudaThreadExit"],
    ),
    // Memory: allocations, pinned host memory, memory information.
    (
        "driver",
        "allocates in whatever context is current",
        &[
            "cuMemAlloc_v2",
            "cuMemAllocPitch_v2",
            "cuMemAllocManaged",
            "cuArrayCreate_v2",
            "cuArray3DCreate_v2",
            "cuMipmappedArrayCreate",
        ],
    ),
    (
        "driver",
        "allocates pinned memory for whatever context is current",
        &["cuMemAllocHost_v2", "cuMemHostAlloc"],
    ),
    (
        "driver",
        "pins host memory for whatever context is current",
        &["cuMemHostRegister_v2"],
    ),
    (
        "runtime",
        "allocates on whatever device is current",
        &[
            "cudaMalloc",
            "cudaMallocPitch",
            "cudaMallocManaged",
            "cudaMalloc3D",
            "cudaMallocArray",
            "cudaMalloc3DArray",
            "cudaMallocMipmappedArray",
        ],
    ),
    (
        "runtime",
        "allocates pinned memory for whatever device is current",
        &["cudaMallocHost", "cudaHostAlloc"],
    ),
    (
        "runtime",
        "pins host memory for whatever device is current",
        &["cudaHostRegister"],
    ),
    // Synchronous copies and sets: the default stream of the current context.
    (
        "driver",
        "copies on the default stream of whatever context is current",
        &[
            "cuMemcpy",
            "cuMemcpy2D_v2",
            "cuMemcpy2DUnaligned_v2",
            "cuMemcpy3D_v2",
            "cuMemcpyAtoA_v2",
            "cuMemcpyAtoD_v2",
            "cuMemcpyAtoH_v2",
            "cuMemcpyDtoA_v2",
            "cuMemcpyDtoD_v2",
            "cuMemcpyDtoH_v2",
            "cuMemcpyHtoA_v2",
            "cuMemcpyHtoD_v2",
        ],
    ),
    (
        "driver",
        "sets memory on the default stream of whatever context is current",
        &[
            "cuMemsetD8_v2",
            "cuMemsetD16_v2",
            "cuMemsetD32_v2",
            "cuMemsetD2D8_v2",
            "cuMemsetD2D16_v2",
            "cuMemsetD2D32_v2",
        ],
    ),
    (
        "runtime",
        "copies on the default stream of whatever device is current",
        &[
            "cudaMemcpy",
            "cudaMemcpy2D",
            "cudaMemcpy3D",
            "cudaMemcpy2DArrayToArray",
            "cudaMemcpy2DFromArray",
            "cudaMemcpy2DToArray",
            "cudaMemcpyArrayToArray",
            "cudaMemcpyFromArray",
            "cudaMemcpyToArray",
        ],
    ),
    (
        "runtime",
        "sets memory on the default stream of whatever device is current",
        &["cudaMemset", "cudaMemset2D", "cudaMemset3D"],
    ),
    // A `__device__` symbol has one copy per device: the runtime takes the current one's.
    (
        "runtime",
        "uses the symbol's copy on whatever device is current",
        &[
            "cudaMemcpyToSymbol",
            "cudaMemcpyFromSymbol",
            "cudaMemcpyToSymbolAsync",
            "cudaMemcpyFromSymbolAsync",
            "cudaGetSymbolAddress",
            "cudaGetSymbolSize",
        ],
    ),
    // Streams and events are created in the current context.
    (
        "driver",
        "creates the stream in whatever context is current",
        &["cuStreamCreate", "cuStreamCreateWithPriority"],
    ),
    (
        "driver",
        "creates the event in whatever context is current",
        &["cuEventCreate"],
    ),
    (
        "runtime",
        "creates the stream on whatever device is current",
        &[
            "cudaStreamCreate",
            "cudaStreamCreateWithFlags",
            "cudaStreamCreateWithPriority",
        ],
    ),
    (
        "runtime",
        "creates the event on whatever device is current",
        &["cudaEventCreate", "cudaEventCreateWithFlags"],
    ),
    // Modules, JIT linking, and a context-independent library's per-context parts.
    (
        "driver",
        "loads the module into whatever context is current",
        &[
            "cuModuleLoad",
            "cuModuleLoadData",
            "cuModuleLoadDataEx",
            "cuModuleLoadFatBinary",
        ],
    ),
    // CU_JIT_TARGET_FROM_CUCONTEXT is the default target.
    (
        "driver",
        "compiles for the device of whatever context is current",
        &["cuLinkCreate_v2"],
    ),
    (
        "driver",
        "returns the library's module in whatever context is current",
        &["cuLibraryGetModule"],
    ),
    (
        "driver",
        "returns the library's global in whatever context is current",
        &["cuLibraryGetGlobal"],
    ),
    (
        "driver",
        "returns the kernel's function in whatever context is current",
        &["cuKernelGetFunction"],
    ),
    (
        "runtime",
        "returns the library's global on whatever device is current",
        &["cudaLibraryGetGlobal"],
    ),
    // The runtime resolves a kernel stub on the current device: launches need a stream of that
    // device, and attributes are set for that device only.
    (
        "runtime",
        "launches on whatever device is current",
        &[
            "cudaLaunchKernel",
            "cudaLaunchCooperativeKernel",
            "cudaLaunchKernelExC",
        ],
    ),
    (
        "runtime",
        "sets the kernel's attribute for whatever device is current only",
        &[
            "cudaFuncSetAttribute",
            "cudaFuncSetCacheConfig",
            "cudaFuncSetSharedMemConfig",
        ],
    ),
    (
        "runtime",
        "reads the kernel's attributes on whatever device is current",
        &["cudaFuncGetAttributes"],
    ),
    (
        "runtime",
        "returns the kernel's function on whatever device is current",
        &["cudaGetFuncBySymbol"],
    ),
    (
        "runtime",
        "computes occupancy on whatever device is current",
        &[
            "cudaOccupancyAvailableDynamicSMemPerBlock",
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
            "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
        ],
    ),
    // Interprocess and external resources are opened in the current context.
    (
        "driver",
        "maps the IPC memory into whatever context is current",
        &["cuIpcOpenMemHandle_v2"],
    ),
    (
        "driver",
        "opens the IPC event in whatever context is current",
        &["cuIpcOpenEventHandle"],
    ),
    (
        "driver",
        "imports into whatever context is current",
        &["cuImportExternalMemory", "cuImportExternalSemaphore"],
    ),
    (
        "runtime",
        "maps the IPC memory on whatever device is current",
        &["cudaIpcOpenMemHandle"],
    ),
    (
        "runtime",
        "opens the IPC event on whatever device is current",
        &["cudaIpcOpenEventHandle"],
    ),
    (
        "runtime",
        "imports on whatever device is current",
        &["cudaImportExternalMemory", "cudaImportExternalSemaphore"],
    ),
    // NCCL: a rank joins on the current device. (Split and shrink keep the parent's device;
    // collectives take a stream; `ncclCommInitAll` takes a list of devices.)
    (
        "nccl",
        "NCCL attaches the rank to whatever device is current, not to the stream's",
        &[
            "ncclCommInitRank",
            "ncclCommInitRankConfig",
            "ncclCommInitRankScalable",
        ],
    ),
    (
        "nccl",
        "allocates on whatever device is current",
        &["ncclMemAlloc"],
    ),
    // Library handles tied to the device current when they are created.
    (
        "cublas",
        "the cuBLAS handle is tied to whatever device is current",
        &["cublasCreate_v2"],
    ),
    (
        "cublaslt",
        "the cuBLASLt handle is tied to whatever device is current",
        &["cublasLtCreate"],
    ),
    (
        "cudnn",
        "the cuDNN handle is tied to whatever device is current",
        &["cudnnCreate"],
    ),
    (
        "curand",
        "the cuRAND generator is tied to whatever device is current",
        &["curandCreateGenerator"],
    ),
    (
        "cusolver",
        "the cuSOLVER handle is tied to whatever device is current",
        &["cusolverDnCreate", "cusolverSpCreate"],
    ),
    (
        "cusparse",
        "the cuSPARSE handle is tied to whatever device is current",
        &["cusparseCreate"],
    ),
    (
        "cutensor",
        "the cuTENSOR handle is tied to whatever device is current",
        &["cutensorCreate"],
    ),
    (
        "cufft",
        "makes the FFT plan on whatever device is current",
        &[
            "cufftPlan1d",
            "cufftPlan2d",
            "cufftPlan3d",
            "cufftPlanMany",
            "cufftMakePlan1d",
            "cufftMakePlan2d",
            "cufftMakePlan3d",
            "cufftMakePlanMany",
            "cufftMakePlanMany64",
        ],
    ),
];
