//! The cudarc and candle API tables, checked against lists of functions generated from the
//! libraries' own source.
//!
//! `src/api/cudarc-0.19.functions` lists every public function of cudarc 0.19.10 (the version
//! the workspace locks) that changes the calling thread's current device or context, acts on
//! whichever one is current, or takes a GPU ordinal; `src/api/candle-0.11-cuda.functions` does the
//! same for candle-core 0.11.1's CUDA device. The ignored `generate_*` tests rewrite the lists from
//! the source, read from the folder an environment variable names (cudarc's list first: candle's
//! generator reads it):
//!
//! ```text
//! CUDARC_SRC=~/.cargo/registry/src/index.crates.io-*/cudarc-0.19.10 \
//!     cargo test -p cargo-placement --test api_tables -- --ignored generate_cudarc
//! CANDLE_SRC=~/.cargo/registry/src/index.crates.io-*/candle-core-0.11.1 \
//!     cargo test -p cargo-placement --test api_tables -- --ignored generate_candle
//! ```
//!
//! The generators are heuristic (the rules are below, next to the names they apply to); the
//! lists they write are reviewed by hand. The other tests fail when `cudarc.toml` or `candle.toml`
//! and its list disagree, naming each difference. They read the tables with the `toml` crate
//! directly, not through the linter's `Api`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::visit::Visit;

const API_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/api");
const CUDARC_LIST: &str = "cudarc-0.19.functions";
const CANDLE_LIST: &str = "candle-0.11-cuda.functions";

/// The three roles the lists hold, in increasing precedence: a function that takes an ordinal
/// and also sets the current device is listed as setting it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    ExplicitDevice,
    CurrentDeviceUser,
    SetCurrentDevice,
}

impl Role {
    const ALL: [Role; 3] = [
        Role::ExplicitDevice,
        Role::CurrentDeviceUser,
        Role::SetCurrentDevice,
    ];

    fn name(self) -> &'static str {
        match self {
            Role::ExplicitDevice => "explicit_device",
            Role::CurrentDeviceUser => "current_device_user",
            Role::SetCurrentDevice => "set_current_device",
        }
    }

    fn parse(text: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.name() == text)
    }
}

/// How a table names a function: `[[item]]` by path, or `[[method]]` by receiver type and name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Fn,
    Method,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Fn => "fn",
            Kind::Method => "method",
        }
    }

    fn parse(text: &str) -> Option<Kind> {
        [Kind::Fn, Kind::Method]
            .into_iter()
            .find(|kind| kind.name() == text)
    }
}

/// What a list or a table says about one path.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    kind: Kind,
    role: Role,
    ordinal: Option<usize>,
}

impl std::fmt::Display for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.kind.name(), self.role.name())?;
        match self.ordinal {
            Some(ordinal) => write!(f, ", ordinal = {ordinal}"),
            None => Ok(()),
        }
    }
}

type Listing = BTreeMap<String, Entry>;

/// The format of a list file, repeated in each file's header.
const FORMAT: &str = "\
# One function a line: KIND ROLE ORDINAL PATH, then an optional `# comment` saying why.
#   KIND     `fn` (an `[[item]]` of the table, by path) or `method` (a `[[method]]`: the path is
#            the receiver type, then the method name)
#   ROLE     set_current_device, current_device_user or explicit_device
#   ORDINAL  for explicit_device, the index of the argument that is a GPU ordinal (a method's
#            receiver not counted); `-` otherwise
#   PATH     the canonical path, as the table writes it (re-exports resolved)
# Lines starting with `#` are comments. Functions that only report the current context's memory
# (`mem_get_info`, `free_mem`, `cuMemGetInfo`, ...) are left out: they place nothing, as PyTorch's
# `mem_get_info()` places nothing.";

fn parse_list(text: &str) -> (Listing, Vec<String>) {
    let mut listing = Listing::new();
    let mut errors = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let parsed = match fields.as_slice() {
            [kind, role, ordinal, path] => (|| {
                let ordinal = match *ordinal {
                    "-" => None,
                    number => Some(number.parse().ok()?),
                };
                let entry = Entry {
                    kind: Kind::parse(kind)?,
                    role: Role::parse(role)?,
                    ordinal,
                };
                Some(((*path).to_owned(), entry))
            })(),
            _ => None,
        };
        match parsed {
            Some((path, entry)) => {
                if listing.insert(path.clone(), entry).is_some() {
                    errors.push(format!("line {}: `{path}` is listed twice", index + 1));
                }
            }
            None => errors.push(format!(
                "line {}: expected `KIND ROLE ORDINAL PATH`, found `{line}`",
                index + 1
            )),
        }
    }
    (listing, errors)
}

fn strings(entry: &toml::Table, key: &str) -> Vec<String> {
    entry
        .get(key)
        .and_then(toml::Value::as_array)
        .map(|values| {
            values
                .iter()
                .filter_map(|value| value.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The entries of a table file with one of the three roles, for which `keep` holds.
fn table_entries(text: &str, keep: impl Fn(&toml::Table) -> bool) -> (Listing, Vec<String>) {
    let mut listing = Listing::new();
    let mut errors = Vec::new();
    let table: toml::Table = match toml::from_str(text) {
        Ok(table) => table,
        Err(err) => return (listing, vec![format!("the table does not parse: {err}")]),
    };
    for (section, kind) in [("item", Kind::Fn), ("method", Kind::Method)] {
        let entries = table
            .get(section)
            .and_then(toml::Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for entry in entries.iter().filter_map(toml::Value::as_table) {
            let Some(role) = entry
                .get("role")
                .and_then(toml::Value::as_str)
                .and_then(Role::parse)
            else {
                continue;
            };
            if !keep(entry) {
                continue;
            }
            let ordinal = entry
                .get("ordinal")
                .and_then(toml::Value::as_integer)
                .and_then(|ordinal| usize::try_from(ordinal).ok());
            let paths = match kind {
                Kind::Fn => entry
                    .get("path")
                    .and_then(toml::Value::as_str)
                    .map(|path| vec![path.to_owned()])
                    .unwrap_or_default(),
                Kind::Method => {
                    let names = strings(entry, "names");
                    strings(entry, "on")
                        .iter()
                        .flat_map(|ty| names.iter().map(move |name| format!("{ty}::{name}")))
                        .collect()
                }
            };
            if paths.is_empty() {
                errors.push(format!(
                    "a `[[{section}]]` entry names no function: {entry}"
                ));
            }
            for path in paths {
                let entry = Entry {
                    kind,
                    role,
                    ordinal,
                };
                if let Some(previous) = listing.insert(path.clone(), entry.clone()) {
                    errors.push(format!(
                        "`{path}` has two entries in the table ({previous}; {entry})"
                    ));
                }
            }
        }
    }
    (listing, errors)
}

fn differences(list: &Listing, list_name: &str, table: &Listing, table_name: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (path, listed) in list {
        match table.get(path) {
            None => found.push(format!(
                "`{path}` ({listed}) is in {list_name} but not in {table_name}"
            )),
            Some(entry) if entry != listed => found.push(format!(
                "`{path}` is {listed} in {list_name} but {entry} in {table_name}"
            )),
            Some(_) => {}
        }
    }
    for (path, entry) in table {
        if !list.contains_key(path) {
            found.push(format!(
                "`{path}` ({entry}) is in {table_name} but not in {list_name}"
            ));
        }
    }
    found
}

fn read_api_file(name: &str) -> String {
    let path = Path::new(API_DIR).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn check(table_name: &str, list_name: &str, keep: impl Fn(&toml::Table) -> bool) {
    let (list, mut problems) = parse_list(&read_api_file(list_name));
    let (table, table_problems) = table_entries(&read_api_file(table_name), keep);
    problems.extend(table_problems);
    problems.extend(differences(&list, list_name, &table, table_name));
    assert!(
        problems.is_empty(),
        "{table_name} and {list_name} disagree ({} differences); fix the table, or regenerate the \
         list as its header says and review it:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}

#[test]
fn cudarc_table_matches_the_function_list() {
    check("cudarc.toml", CUDARC_LIST, |_| true);
}

#[test]
fn candle_table_matches_the_cuda_function_list() {
    // Metal devices (`gpu = "metal"`) are candle's too, but not CUDA's.
    check("candle.toml", CANDLE_LIST, |entry| {
        entry
            .get("gpu")
            .and_then(toml::Value::as_str)
            .is_none_or(|gpu| gpu == "cuda")
    });
}

#[test]
fn the_list_format_reads_what_it_writes() {
    let (list, errors) = parse_list(
        "# comment\n\
         fn explicit_device 1 a::b  # why\n\
         method set_current_device - a::T::m\n\
         fn current_device_user x a::c\n\
         fn explicit_device 0 a::b\n",
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(
        list.get("a::b"),
        Some(&Entry {
            kind: Kind::Fn,
            role: Role::ExplicitDevice,
            ordinal: Some(0)
        })
    );
    let (table, errors) = table_entries(
        "[[item]]\npath = \"a::b\"\nrole = \"explicit_device\"\nordinal = 1\n\
         [[method]]\non = [\"a::T\", \"a::U\"]\nnames = [\"m\"]\nrole = \"set_current_device\"\n\
         [[item]]\npath = \"a::d\"\nrole = \"tensor_constructor\"\n",
        |_| true,
    );
    assert!(errors.is_empty(), "{errors:?}");
    let found = differences(&list, "list", &table, "table");
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("`a::b` is fn explicit_device, ordinal = 0 in list but fn explicit_device, ordinal = 1 in table"), "{found:?}");
    assert!(found[1].contains("`a::U::m`"), "{found:?}");
}

// ---------------------------------------------------------------------------------------------
// The generators.
// ---------------------------------------------------------------------------------------------

/// Raw functions of a module's `sys` layer that mean one thing: (module, note, names).
type Group = (&'static str, &'static str, &'static [&'static str]);

/// Raw functions (`<module>::sys`) that change the calling thread's current context or device.
/// Documented in `cuda.h` / `cuda_runtime_api.h` (CUDA 12.6) as doing so.
const SYS_SETS: &[Group] = &[
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
const SYS_USES: &[Group] = &[
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

/// Names of by-value integer parameters that are GPU ordinals (besides any `CUdevice`, which is
/// an ordinal in practice: `cuDeviceGet(&d, n)` gives `d == n`, and a literal one is a
/// hard-coded GPU).
const ORDINAL_NAMES: &[&str] = &[
    "ordinal",
    "device",
    "dev",
    "peerDevice",
    "srcDevice",
    "dstDevice",
    "gpuIndex",
];
const INTEGERS: &[&str] = &[
    "c_int", "c_uint", "i32", "u32", "usize", "isize", "i64", "u64",
];

/// Entries for code written against older cudarc or declaring C symbols itself, which 0.19.10's
/// source does not define: (kind, role, ordinal, path, why).
const LEGACY: &[(Kind, Role, Option<usize>, &str, &str)] = &[
    (
        Kind::Fn,
        Role::ExplicitDevice,
        Some(0),
        "cudarc::driver::CudaDevice::new",
        "cudarc <= 0.12's device type, replaced by CudaContext",
    ),
    (
        Kind::Method,
        Role::SetCurrentDevice,
        None,
        "cudarc::driver::CudaDevice::bind_to_thread",
        "cudarc <= 0.12's device type, replaced by CudaContext",
    ),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Layer {
    Safe,
    Result,
    Sys,
}

/// A public function of the source.
struct Function {
    path: String,
    /// The top-level module (`driver`, `nccl`).
    module: String,
    layer: Layer,
    kind: Kind,
    /// The type of an `impl` block the function is in.
    self_ty: Option<String>,
    /// The module path of that type, where the function's path starts: an `impl` block may
    /// add methods to another module's type (`cufile` adds some to `driver::CudaStream`).
    owner: String,
    /// The index and name of the first parameter that is a GPU ordinal.
    ordinal: Option<(usize, String)>,
    /// The module path that unqualified calls in the body resolve against.
    scope: String,
    body: Option<syn::Block>,
}

/// What a function does, as far as the lists care.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Verdict {
    role: Option<Role>,
    why: String,
    /// The body calls `bind_to_thread`.
    binds: bool,
    /// The body calls a function of the library's `result` or `sys` layer.
    calls_cuda: bool,
}

fn parse_source(path: &Path) -> syn::File {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    syn::parse_file(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg") && attr.parse_args::<syn::Ident>().is_ok_and(|id| id == "test")
    })
}

fn public(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

fn type_text(ty: &syn::Type) -> String {
    ty.to_token_stream().to_string().replace(' ', "")
}

fn last_segment(text: &str) -> &str {
    text.rsplit("::").next().unwrap_or(text)
}

/// The first parameter (receiver not counted) that is a GPU ordinal.
fn ordinal_param(sig: &syn::Signature) -> Option<(usize, String)> {
    sig.inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(typed) => Some(typed),
            syn::FnArg::Receiver(_) => None,
        })
        .enumerate()
        .find_map(|(index, typed)| {
            let syn::Pat::Ident(name) = &*typed.pat else {
                return None;
            };
            let name = name.ident.to_string();
            let ty = type_text(&typed.ty);
            if ty.starts_with('*') || ty.starts_with('&') {
                return None;
            }
            let last = last_segment(&ty);
            let device = matches!(last, "CUdevice" | "CUdevice_v1");
            let named = INTEGERS.contains(&last) && ORDINAL_NAMES.contains(&name.as_str());
            (device || named).then_some((index, name))
        })
}

fn first_existing(candidates: &[PathBuf]) -> Option<PathBuf> {
    candidates.iter().find(|path| path.is_file()).cloned()
}

/// The file of `mod name;` declared in `file`.
fn child_file(file: &Path, name: &str) -> Option<PathBuf> {
    let dir = file.parent()?;
    let base = match file.file_name()?.to_str()? {
        "mod.rs" | "lib.rs" => dir.to_path_buf(),
        other => dir.join(other.trim_end_matches(".rs")),
    };
    first_existing(&[
        base.join(format!("{name}.rs")),
        base.join(name).join("mod.rs"),
    ])
}

struct Collector<'a> {
    module: &'a str,
    layer: Layer,
    functions: Vec<Function>,
    /// The public types the safe layer defines.
    types: BTreeSet<String>,
}

impl Collector<'_> {
    /// The functions of `items` (from `file`), whose paths start with `prefix`. The safe layer
    /// is flattened: `pub use safe::*` re-exports its types at the module's root.
    fn items(&mut self, file: &Path, items: &[syn::Item], prefix: &str) {
        for item in items {
            match item {
                syn::Item::Fn(function) if public(&function.vis) && !test_only(&function.attrs) => {
                    let name = function.sig.ident.to_string();
                    if self.layer == Layer::Sys
                        && matches!(name.as_str(), "culib" | "is_culib_present" | "lib")
                    {
                        continue;
                    }
                    self.functions.push(Function {
                        path: format!("{prefix}::{name}"),
                        module: self.module.to_owned(),
                        layer: self.layer,
                        kind: Kind::Fn,
                        self_ty: None,
                        owner: prefix.to_owned(),
                        ordinal: ordinal_param(&function.sig),
                        scope: prefix.to_owned(),
                        body: (self.layer != Layer::Sys).then(|| (*function.block).clone()),
                    });
                }
                syn::Item::Impl(block)
                    if self.layer == Layer::Safe
                        && block.trait_.is_none()
                        && !test_only(&block.attrs) =>
                {
                    let syn::Type::Path(ty) = &*block.self_ty else {
                        continue;
                    };
                    let Some(ty) = ty.path.segments.last().map(|s| s.ident.to_string()) else {
                        continue;
                    };
                    for item in &block.items {
                        let syn::ImplItem::Fn(method) = item else {
                            continue;
                        };
                        if !public(&method.vis) || test_only(&method.attrs) {
                            continue;
                        }
                        let name = method.sig.ident.to_string();
                        self.functions.push(Function {
                            path: format!("{prefix}::{ty}::{name}"),
                            module: self.module.to_owned(),
                            layer: self.layer,
                            kind: if method.sig.receiver().is_some() {
                                Kind::Method
                            } else {
                                Kind::Fn
                            },
                            self_ty: Some(ty.clone()),
                            owner: prefix.to_owned(),
                            ordinal: ordinal_param(&method.sig),
                            scope: prefix.to_owned(),
                            body: Some(method.block.clone()),
                        });
                    }
                }
                syn::Item::Struct(ty) if public(&ty.vis) => {
                    self.types.insert(ty.ident.to_string());
                }
                syn::Item::Enum(ty) if public(&ty.vis) => {
                    self.types.insert(ty.ident.to_string());
                }
                syn::Item::Mod(module) if !test_only(&module.attrs) => {
                    let inner = if self.layer == Layer::Safe {
                        prefix.to_owned()
                    } else if public(&module.vis) {
                        format!("{prefix}::{}", module.ident)
                    } else {
                        continue;
                    };
                    match &module.content {
                        Some((_, items)) => self.items(file, items, &inner),
                        None => {
                            if let Some(child) = child_file(file, &module.ident.to_string()) {
                                let parsed = parse_source(&child);
                                self.items(&child, &parsed.items, &inner);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

fn collect_cudarc(root: &Path) -> Vec<Function> {
    let src = root.join("src");
    let mut modules: Vec<String> = std::fs::read_dir(&src)
        .unwrap_or_else(|err| panic!("{}: {err}", src.display()))
        .filter_map(Result::ok)
        .filter(|entry| entry.path().is_dir())
        .filter_map(|entry| entry.file_name().to_str().map(str::to_owned))
        .collect();
    modules.sort();
    let mut functions = Vec::new();
    let mut types: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for module in &modules {
        let dir = src.join(module);
        let layers = [
            (
                Layer::Sys,
                vec![dir.join("sys/mod.rs"), dir.join("sys.rs")],
                format!("cudarc::{module}::sys"),
            ),
            (
                Layer::Result,
                vec![dir.join("result.rs"), dir.join("result/mod.rs")],
                format!("cudarc::{module}::result"),
            ),
            (
                Layer::Safe,
                vec![dir.join("safe.rs"), dir.join("safe/mod.rs")],
                format!("cudarc::{module}"),
            ),
        ];
        for (layer, candidates, prefix) in layers {
            let Some(file) = first_existing(&candidates) else {
                continue;
            };
            let mut collector = Collector {
                module,
                layer,
                functions: Vec::new(),
                types: BTreeSet::new(),
            };
            collector.items(&file, &parse_source(&file).items, &prefix);
            functions.extend(collector.functions);
            for ty in collector.types {
                types.entry(ty).or_default().push(prefix.clone());
            }
        }
    }
    // Methods added to another module's type belong to that type.
    for function in &mut functions {
        let Some(ty) = &function.self_ty else {
            continue;
        };
        let owners = types.get(ty).map(Vec::as_slice).unwrap_or_default();
        if !owners.contains(&function.owner)
            && let [owner] = owners
        {
            function.owner = owner.clone();
            function.path = format!("{owner}::{ty}::{}", last_segment(&function.path));
        }
    }
    // The raw layers declare some functions once per CUDA version: keep one, with the ordinal
    // of whichever declaration has one.
    let mut merged: Vec<Function> = Vec::new();
    for function in functions {
        match merged.iter_mut().find(|other| other.path == function.path) {
            Some(other) => {
                other.ordinal = other.ordinal.take().or(function.ordinal);
            }
            None => merged.push(function),
        }
    }
    merged
}

/// Calls and `bind_to_thread`s in a body, in source order.
enum Event {
    Bind,
    /// The paths the callee may have.
    Call(Vec<String>),
}

struct Calls<'a> {
    function: &'a Function,
    events: Vec<Event>,
}

impl Calls<'_> {
    fn candidates(&self, path: &syn::Path) -> Vec<String> {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let function = self.function;
        match segments.first().map(String::as_str) {
            Some("crate") => vec![format!("cudarc::{}", segments[1..].join("::"))],
            Some("result" | "sys") => {
                vec![format!(
                    "cudarc::{}::{}",
                    function.module,
                    segments.join("::")
                )]
            }
            Some("Self") => function
                .self_ty
                .iter()
                .map(|ty| format!("{}::{ty}::{}", function.owner, segments[1..].join("::")))
                .collect(),
            Some(_) => vec![format!("{}::{}", function.scope, segments.join("::"))],
            None => Vec::new(),
        }
    }
}

impl<'ast> Visit<'ast> for Calls<'_> {
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        syn::visit::visit_expr_call(self, call);
        if let syn::Expr::Path(path) = &*call.func {
            let candidates = self.candidates(&path.path);
            self.events.push(Event::Call(candidates));
        }
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        syn::visit::visit_expr_method_call(self, call);
        if call.method == "bind_to_thread" {
            self.events.push(Event::Bind);
        } else if let (syn::Expr::Path(receiver), Some(ty)) =
            (&*call.receiver, &self.function.self_ty)
            && receiver.path.is_ident("self")
        {
            let path = format!("{}::{ty}::{}", self.function.owner, call.method);
            self.events.push(Event::Call(vec![path]));
        }
    }
}

fn events(function: &Function) -> Vec<Event> {
    let mut calls = Calls {
        function,
        events: Vec::new(),
    };
    if let Some(body) = &function.body {
        calls.visit_block(body);
    }
    calls.events
}

/// The path a reader recognizes: `result::ctx::set_current`, `sys::cuCtxSetCurrent`.
fn short(path: &str) -> String {
    let rest = path.strip_prefix("cudarc::").unwrap_or(path);
    rest.split_once("::")
        .map_or(rest, |(_, rest)| rest)
        .to_owned()
}

fn classify_cudarc(functions: &[Function]) -> BTreeMap<String, Verdict> {
    let known: BTreeSet<(&str, &str)> = functions
        .iter()
        .filter(|f| f.layer == Layer::Sys)
        .map(|f| (f.module.as_str(), last_segment(&f.path)))
        .collect();
    for (module, _, names) in SYS_SETS.iter().chain(SYS_USES) {
        for name in *names {
            assert!(
                known.contains(&(*module, *name)),
                "cudarc has no `{module}::sys::{name}`: fix the name in this file"
            );
        }
    }
    let mut verdicts: BTreeMap<String, Verdict> = BTreeMap::new();
    for function in functions.iter().filter(|f| f.layer == Layer::Sys) {
        let name = last_segment(&function.path);
        let listed = |table: &[Group]| {
            table
                .iter()
                .find(|(module, _, names)| *module == function.module && names.contains(&name))
                .map(|(_, why, _)| (*why).to_owned())
        };
        let verdict = if let Some(why) = listed(SYS_SETS) {
            Verdict {
                role: Some(Role::SetCurrentDevice),
                why,
                ..Verdict::default()
            }
        } else if let Some(why) = listed(SYS_USES) {
            Verdict {
                role: Some(Role::CurrentDeviceUser),
                why,
                ..Verdict::default()
            }
        } else if let Some((_, param)) = &function.ordinal {
            Verdict {
                role: Some(Role::ExplicitDevice),
                why: format!("`{param}` is a device"),
                ..Verdict::default()
            }
        } else {
            Verdict::default()
        };
        verdicts.insert(function.path.clone(), verdict);
    }
    // The result and safe layers call each other and the raw layer: iterate to a fixpoint.
    let layered: Vec<(&Function, Vec<Event>)> = functions
        .iter()
        .filter(|f| f.layer != Layer::Sys)
        .map(|f| (f, events(f)))
        .collect();
    loop {
        let mut changed = false;
        for (function, events) in &layered {
            let verdict = classify_layered(function, events, &verdicts);
            if verdicts.get(&function.path) != Some(&verdict) {
                verdicts.insert(function.path.clone(), verdict);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    verdicts
}

/// A `result` function does what the raw functions it wraps do; a safe one sets the current
/// context if it calls a function that does, and uses it if it calls a function that does before
/// any `bind_to_thread`. A function with an ordinal parameter is an explicit device (safe
/// constructors such as `CudaContext::new` also bind the new context: that is their documented
/// job, and the caller chose the device).
fn classify_layered(
    function: &Function,
    events: &[Event],
    verdicts: &BTreeMap<String, Verdict>,
) -> Verdict {
    let mut verdict = Verdict::default();
    let mut set = None;
    let mut used = None;
    for event in events {
        match event {
            Event::Bind => verdict.binds = true,
            Event::Call(candidates) => {
                for candidate in candidates {
                    let Some(callee) = verdicts.get(candidate) else {
                        continue;
                    };
                    let layer = if candidate.contains("::sys::") {
                        Layer::Sys
                    } else if candidate.contains("::result::") {
                        Layer::Result
                    } else {
                        Layer::Safe
                    };
                    verdict.calls_cuda |= layer != Layer::Safe;
                    match callee.role {
                        Some(Role::SetCurrentDevice) => {
                            set.get_or_insert_with(|| short(candidate));
                        }
                        Some(Role::CurrentDeviceUser)
                            if !verdict.binds || function.layer == Layer::Result =>
                        {
                            used.get_or_insert_with(|| short(candidate));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    let ordinal = function.ordinal.as_ref();
    (verdict.role, verdict.why) = match (function.layer, set, used, ordinal) {
        (Layer::Safe, _, _, Some((_, param))) => {
            (Some(Role::ExplicitDevice), format!("`{param}` is a device"))
        }
        (_, Some(callee), _, _) => (Some(Role::SetCurrentDevice), format!("calls {callee}")),
        (Layer::Safe, None, Some(callee), None) => (
            Some(Role::CurrentDeviceUser),
            format!("calls {callee} without binding its context first"),
        ),
        (_, None, Some(callee), _) => (Some(Role::CurrentDeviceUser), format!("calls {callee}")),
        (_, None, None, Some((_, param))) => {
            (Some(Role::ExplicitDevice), format!("`{param}` is a device"))
        }
        (_, None, None, None) => (None, String::new()),
    };
    verdict
}

/// One line of a list file.
fn list_line(path: &str, entry: &Entry, why: &str) -> String {
    let ordinal = entry
        .ordinal
        .map_or_else(|| "-".to_owned(), |ordinal| ordinal.to_string());
    let mut line = format!(
        "{:<6} {:<19} {:<2} {path}",
        entry.kind.name(),
        entry.role.name(),
        ordinal
    );
    if !why.is_empty() {
        let _ = write!(line, "  # {why}");
    }
    line
}

fn section_title(function: &Function) -> String {
    match function.layer {
        Layer::Safe => format!("cudarc::{}: the safe API", function.module),
        Layer::Result => format!("cudarc::{}::result", function.module),
        Layer::Sys => format!("cudarc::{}::sys", function.module),
    }
}

/// Comment lines listing names, wrapped.
fn name_lines(out: &mut String, lead: &str, names: &[String]) {
    let mut line = format!("#   {lead}:");
    for name in names {
        if line.len() + name.len() + 2 > 100 {
            out.push_str(&line);
            out.push('\n');
            line = "#    ".to_owned();
        }
        let _ = write!(line, " {name},");
    }
    out.push_str(line.trim_end_matches(','));
    out.push('\n');
}

fn source_dir(variable: &str) -> PathBuf {
    let dir = std::env::var_os(variable).unwrap_or_else(|| {
        panic!("set {variable} to the crate's source folder (see this file's header)")
    });
    let dir = PathBuf::from(dir);
    assert!(
        dir.join("src").is_dir(),
        "{}: no `src` folder",
        dir.display()
    );
    dir
}

/// Writes a list file whole (through a temporary file and a rename), so that the candle
/// generator, which reads cudarc's list, never sees half of one when both run at once.
fn write_list(name: &str, text: &str) {
    let path = Path::new(API_DIR).join(name);
    let temporary = path.with_extension("functions.new");
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, &path))
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    eprintln!("wrote {}", path.display());
}

#[test]
#[ignore = "rewrites src/api/cudarc-0.19.functions from the source in $CUDARC_SRC"]
fn generate_cudarc_function_list() {
    let root = source_dir("CUDARC_SRC");
    let functions = collect_cudarc(&root);
    let verdicts = classify_cudarc(&functions);
    let version = root
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("cudarc");

    let mut out = format!(
        "# {version}: every public function that changes the calling thread's current device or\n\
         # context (set_current_device), acts on whichever one is current (current_device_user), or\n\
         # takes a GPU ordinal (explicit_device), in the safe API (re-exported at each module's root),\n\
         # `result` and `sys` layers of every module.\n\
         # Generated by `generate_cudarc_function_list` in linter/tests/api_tables.rs from the crate's\n\
         # source (CUDARC_SRC=<folder of {version}> cargo test -p cargo-placement --test api_tables\n\
         # -- --ignored generate_cudarc), then reviewed; `cudarc.toml` must agree with it.\n\
         {FORMAT}\n"
    );
    let mut sections: BTreeMap<(String, Layer), Vec<&Function>> = BTreeMap::new();
    for function in &functions {
        if verdicts[&function.path].role.is_some() {
            sections
                .entry((function.module.clone(), function.layer))
                .or_default()
                .push(function);
        }
    }
    let mut listed: BTreeSet<String> = BTreeSet::new();
    let mut sections: Vec<_> = sections.into_iter().collect();
    sections.sort_by_key(|((module, layer), _)| (*layer, module != "driver", module.clone()));
    for (_, mut members) in sections {
        members.sort_by(|a, b| a.path.cmp(&b.path));
        let _ = writeln!(out, "\n# {}", section_title(members[0]));
        for function in members {
            let verdict = &verdicts[&function.path];
            let Some(role) = verdict.role else { continue };
            let entry = Entry {
                kind: function.kind,
                role,
                ordinal: (role == Role::ExplicitDevice)
                    .then(|| function.ordinal.as_ref().map(|(index, _)| *index))
                    .flatten(),
            };
            out.push_str(&list_line(&function.path, &entry, &verdict.why));
            out.push('\n');
            listed.insert(function.path.clone());
        }
    }

    // C names of versioned driver functions: libcuda still exports the unversioned symbols
    // (`cuda.h` declares them for its own build), and a crate may declare them in its own
    // `extern "C"` block, which the linter matches by name. The lowest version's meaning is kept.
    // The other libraries' unversioned names (`cublasCreate`) are header macros, not symbols.
    out.push_str(
        "\n# The unversioned C names of versioned driver functions: not in cudarc, but symbols libcuda\n\
         # still exports, which a crate may declare in its own `extern \"C\"` block (the linter\n\
         # matches those by name).\n",
    );
    let sys_names: BTreeSet<&str> = functions
        .iter()
        .filter(|f| f.layer == Layer::Sys)
        .map(|f| f.path.as_str())
        .collect();
    let mut aliases: BTreeMap<String, String> = BTreeMap::new();
    for function in functions
        .iter()
        .filter(|f| f.layer == Layer::Sys && f.module == "driver")
    {
        let name = last_segment(&function.path);
        let Some((base, version)) = name.rsplit_once("_v") else {
            continue;
        };
        if version.is_empty() || !version.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let alias = format!("cudarc::{}::sys::{base}", function.module);
        if verdicts[&function.path].role.is_none() || sys_names.contains(alias.as_str()) {
            continue;
        }
        let keep = aliases
            .get(&alias)
            .is_none_or(|current| function.path.as_str() < current.as_str());
        if keep {
            aliases.insert(alias, function.path.clone());
        }
    }
    for (alias, versioned) in &aliases {
        let function = functions.iter().find(|f| &f.path == versioned).unwrap();
        let verdict = &verdicts[versioned];
        let role = verdict.role.unwrap();
        let entry = Entry {
            kind: Kind::Fn,
            role,
            ordinal: (role == Role::ExplicitDevice)
                .then(|| function.ordinal.as_ref().map(|(index, _)| *index))
                .flatten(),
        };
        let why = format!("as {}", last_segment(versioned));
        out.push_str(&list_line(alias, &entry, &why));
        out.push('\n');
    }

    out.push_str("\n# Not in cudarc 0.19: kept for code written against older versions.\n");
    for (kind, role, ordinal, path, why) in LEGACY {
        assert!(
            !functions.iter().any(|f| f.path == *path) && !listed.contains(*path),
            "`{path}` is in the source now: drop it from LEGACY"
        );
        let entry = Entry {
            kind: *kind,
            role: *role,
            ordinal: *ordinal,
        };
        out.push_str(&list_line(path, &entry, why));
        out.push('\n');
    }

    // What the safe API does about the current context, for readers of the list.
    out.push_str(
        "\n# Not listed: safe-API functions that bind their own context (`bind_to_thread`) before\n\
         # acting, and those that act only through an explicit handle (a stream, event, module,\n\
         # function or pointer) without needing a particular current context.\n",
    );
    let mut by_type: BTreeMap<(String, bool), Vec<String>> = BTreeMap::new();
    for function in functions.iter().filter(|f| f.layer == Layer::Safe) {
        let verdict = &verdicts[&function.path];
        if verdict.role.is_some() || !(verdict.binds || verdict.calls_cuda) {
            continue;
        }
        let owner = match &function.self_ty {
            Some(ty) => format!("{}::{ty}", function.owner),
            None => function.owner.clone(),
        };
        by_type
            .entry((owner, verdict.binds))
            .or_default()
            .push(last_segment(&function.path).to_owned());
    }
    for binds in [true, false] {
        out.push_str(if binds {
            "# Bind their context first:\n"
        } else {
            "# Act through an explicit handle or need no context, binding nothing:\n"
        });
        for ((owner, _), names) in by_type.iter().filter(|((_, b), _)| *b == binds) {
            name_lines(&mut out, owner, names);
        }
    }
    write_list(CUDARC_LIST, &out);
}

/// A function of candle's CUDA device, with its body's calls.
struct CandleFunction {
    path: String,
    kind: Kind,
    ordinal: Option<(usize, String)>,
    body: syn::Block,
}

/// The calls of a candle body, as written (`cudarc::driver::result::mem_get_info`), and its
/// `bind_to_thread`s.
#[derive(Default)]
struct CandleCalls {
    events: Vec<Event>,
    /// Calls of other functions of the same type (`self.alloc_zeros(..)`, `Self::new_cuda(..)`).
    own: BTreeSet<String>,
    /// Whether the body calls into cudarc: a `cudarc::` function, or a method of the device's
    /// stream, context, cuBLAS handle or cuRAND generator that is more than a getter.
    cudarc: bool,
}

/// Methods of the device's cudarc values that make no CUDA call.
const GETTERS: &[&str] = &[
    "clone",
    "ordinal",
    "is_event_tracking",
    "disable_event_tracking",
    "lock",
    "read",
    "write",
    "unwrap",
    "w",
    "cu_stream",
];

impl<'ast> Visit<'ast> for CandleCalls {
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        syn::visit::visit_expr_call(self, call);
        if let syn::Expr::Path(path) = &*call.func {
            let text = path.path.to_token_stream().to_string().replace(' ', "");
            if let Some(name) = text.strip_prefix("Self::") {
                self.own.insert(name.to_owned());
            }
            self.cudarc |= text.starts_with("cudarc::");
            self.events.push(Event::Call(vec![text]));
        }
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        syn::visit::visit_expr_method_call(self, call);
        let receiver = call.receiver.to_token_stream().to_string().replace(' ', "");
        let method = call.method.to_string();
        if method == "bind_to_thread" {
            self.events.push(Event::Bind);
        } else if receiver == "self" {
            self.own.insert(method);
        } else if ["stream", "context", "blas", "curand"]
            .iter()
            .any(|field| receiver.contains(field))
            && !GETTERS.contains(&method.as_str())
        {
            self.cudarc = true;
        }
    }
}

fn collect_candle_impls(file: &Path, ty: &str, prefix: &str, out: &mut Vec<CandleFunction>) {
    for item in parse_source(file).items {
        let syn::Item::Impl(block) = item else {
            continue;
        };
        let syn::Type::Path(self_ty) = &*block.self_ty else {
            continue;
        };
        if self_ty.path.segments.last().is_none_or(|s| s.ident != ty) {
            continue;
        }
        // A trait's functions (`BackendDevice::new`) are callable as `CudaDevice::new` too.
        let of_trait = block.trait_.is_some();
        for item in block.items {
            let syn::ImplItem::Fn(method) = item else {
                continue;
            };
            if !(of_trait || public(&method.vis)) {
                continue;
            }
            out.push(CandleFunction {
                path: format!("{prefix}::{ty}::{}", method.sig.ident),
                kind: if method.sig.receiver().is_some() {
                    Kind::Method
                } else {
                    Kind::Fn
                },
                ordinal: ordinal_param(&method.sig),
                body: method.block,
            });
        }
    }
}

#[test]
#[ignore = "rewrites src/api/candle-0.11-cuda.functions from the source in $CANDLE_SRC"]
fn generate_candle_function_list() {
    let root = source_dir("CANDLE_SRC");
    let version = root
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("candle-core");
    let (cudarc, errors) = parse_list(&read_api_file(CUDARC_LIST));
    assert!(errors.is_empty(), "{CUDARC_LIST}: {errors:?}");

    let mut functions = Vec::new();
    let backend = root.join("src/cuda_backend");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&backend)
        .unwrap_or_else(|err| panic!("{}: {err}", backend.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .collect();
    files.sort();
    for file in &files {
        collect_candle_impls(file, "CudaDevice", "candle_core", &mut functions);
    }
    let mut devices = Vec::new();
    collect_candle_impls(
        &root.join("src/device.rs"),
        "Device",
        "candle_core",
        &mut devices,
    );
    // `Device`'s CUDA constructors: they reach `CudaDevice` or `new_cuda` (Metal's do not).
    devices.retain(|function| {
        let body = function.body.to_token_stream().to_string();
        function.ordinal.is_some() && (body.contains("CudaDevice") || body.contains("new_cuda"))
    });
    functions.extend(devices);
    functions.sort_by(|a, b| a.path.cmp(&b.path));

    let mut out = format!(
        "# {version}, CUDA: every method and associated function of `CudaDevice`\n\
         # (src/cuda_backend, re-exported as `candle_core::CudaDevice`) and every CUDA constructor of\n\
         # `Device` (src/device.rs) that changes the current device or context, acts on whichever\n\
         # one is current, or takes a GPU ordinal.\n\
         # Generated by `generate_candle_function_list` in linter/tests/api_tables.rs from the\n\
         # crate's source (CANDLE_SRC=<folder of {version}> cargo test -p cargo-placement --test\n\
         # api_tables -- --ignored generate_candle), using {CUDARC_LIST} for the cudarc calls;\n\
         # reviewed; `candle.toml` must agree with it.\n\
         {FORMAT}\n\n"
    );
    let calls: BTreeMap<&str, CandleCalls> = functions
        .iter()
        .map(|function| {
            let mut calls = CandleCalls::default();
            calls.visit_block(&function.body);
            (function.path.as_str(), calls)
        })
        .collect();
    // Which functions reach cudarc, also through the type's other functions.
    let mut reach: BTreeSet<String> = calls
        .iter()
        .filter(|(_, calls)| calls.cudarc)
        .map(|(path, _)| last_segment(path).to_owned())
        .collect();
    loop {
        let before = reach.len();
        for (path, calls) in &calls {
            if calls.own.iter().any(|name| reach.contains(name)) {
                reach.insert(last_segment(path).to_owned());
            }
        }
        if reach.len() == before {
            break;
        }
    }
    let mut through_cudarc = Vec::new();
    let mut plain = Vec::new();
    for function in &functions {
        let calls = &calls[function.path.as_str()];
        let mut bound = false;
        let mut set = None;
        let mut used = None;
        for event in &calls.events {
            match event {
                Event::Bind => {
                    bound = true;
                    set.get_or_insert_with(|| "bind_to_thread".to_owned());
                }
                Event::Call(paths) => {
                    for path in paths {
                        match cudarc.get(path.as_str()).map(|entry| entry.role) {
                            Some(Role::SetCurrentDevice) => {
                                set.get_or_insert_with(|| path.clone());
                            }
                            Some(Role::CurrentDeviceUser) if !bound => {
                                used.get_or_insert_with(|| path.clone());
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
        let (role, why) = match (&function.ordinal, set, used) {
            (Some((_, param)), _, _) => (Role::ExplicitDevice, format!("`{param}` is a device")),
            (None, Some(callee), _) => (Role::SetCurrentDevice, format!("calls {callee}")),
            (None, None, Some(callee)) => (Role::CurrentDeviceUser, format!("calls {callee}")),
            (None, None, None) => {
                let name = last_segment(&function.path).to_owned();
                if reach.contains(&name) {
                    through_cudarc.push(name);
                } else {
                    plain.push(name);
                }
                continue;
            }
        };
        let entry = Entry {
            kind: function.kind,
            role,
            ordinal: function.ordinal.as_ref().map(|(index, _)| *index),
        };
        out.push_str(&list_line(&function.path, &entry, &why));
        out.push('\n');
    }
    out.push_str(
        "\n# Not listed: `CudaDevice` methods that act through cudarc's safe API (which binds the\n\
         # device's context itself, or acts through the device's stream, module or generator), and\n\
         # those that make no CUDA call.\n",
    );
    name_lines(&mut out, "through cudarc's safe API", &through_cudarc);
    name_lines(&mut out, "no CUDA call", &plain);
    write_list(CANDLE_LIST, &out);
}
