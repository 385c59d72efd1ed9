//! The one error type of the runtime.

use crate::Device;

/// Shorthand for results of the runtime.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the runtime. Every message says what happened, to what, and
/// what to do about it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operands of an op live on different devices.
    #[error(
        "`{op}` got tensors on different devices: lhs is on {lhs}, rhs is on {rhs}; \
         move one of them first, for example `rhs.to_device(&{})`",
        lhs.to_rust()
    )]
    DeviceMismatch {
        /// The op, e.g. `matmul`.
        op: &'static str,
        /// The device of the left operand.
        lhs: Device,
        /// The device of the right operand.
        rhs: Device,
    },

    /// The operands of an elementwise op have different shapes.
    #[error("`{op}` needs operands of the same shape, got lhs {lhs:?} and rhs {rhs:?}")]
    ShapeMismatch {
        /// The op, e.g. `add`.
        op: &'static str,
        /// The shape of the left operand.
        lhs: Vec<usize>,
        /// The shape of the right operand.
        rhs: Vec<usize>,
    },

    /// The operands of `matmul` cannot be multiplied.
    #[error(
        "`matmul` needs lhs of shape [m, k] and rhs of shape [k, n], got lhs {lhs:?} and rhs {rhs:?}"
    )]
    MatmulShape {
        /// The shape of the left operand.
        lhs: Vec<usize>,
        /// The shape of the right operand.
        rhs: Vec<usize>,
    },

    /// The data given to a constructor does not fill the requested shape.
    #[error("shape {shape:?} holds {expected} elements, but {got} were given")]
    ElementCount {
        /// The requested shape.
        shape: Vec<usize>,
        /// How many elements the shape holds.
        expected: usize,
        /// How many elements were given.
        got: usize,
    },

    /// A shape whose element count does not fit in `usize`.
    #[error("shape {shape:?} has more elements than this machine can address")]
    ShapeOverflow {
        /// The requested shape.
        shape: Vec<usize>,
    },

    /// A GPU was asked for, and no GPU is available at all.
    #[error(
        "{device} was requested, but no GPU is available: {reason}; use `Device::Cpu`, \
         or simulate GPUs with PLACEMENT_SIMULATED_GPUS=24GiB,24GiB"
    )]
    NoGpu {
        /// The device that was asked for.
        device: Device,
        /// Why there is no GPU (no driver, no device, none visible).
        reason: String,
    },

    /// A GPU ordinal past the last visible GPU.
    #[error(
        "{device} does not exist: {count} GPU(s) are visible{}; \
         check CUDA_VISIBLE_DEVICES or list them with `placement::devices()`",
        if *count == 0 { String::new() } else { format!(" (cuda:0 to cuda:{})", count - 1) }
    )]
    DeviceOutOfRange {
        /// The device that was asked for.
        device: Device,
        /// How many GPUs are visible.
        count: usize,
    },

    /// An allocation would exceed the device's memory.
    #[error(
        "out of memory on {device}: tried to allocate {}, but only {} of {} are free; \
         free tensors you no longer need or choose a device with `select_device`",
        bytesize::ByteSize(*requested).display().iec(),
        bytesize::ByteSize(*free).display().iec(),
        bytesize::ByteSize(*total).display().iec()
    )]
    OutOfMemory {
        /// Where the allocation was attempted.
        device: Device,
        /// The size of the allocation, in bytes.
        requested: u64,
        /// The free bytes at the time of the request.
        free: u64,
        /// The total memory of the device, in bytes.
        total: u64,
    },

    /// A GPU configuration (PLACEMENT_SIMULATED_GPUS or CUDA_VISIBLE_DEVICES) is malformed.
    #[error("invalid {variable}={value:?}: {reason}")]
    GpuConfig {
        /// The variable, e.g. `PLACEMENT_SIMULATED_GPUS`.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What is wrong and what a valid value looks like.
        reason: String,
    },

    /// The GPUs were configured after they had already been set up for this process.
    #[error(
        "GPUs are already set up for this process ({current}); configure simulated GPUs \
         before the first tensor, device query or implicit-device call"
    )]
    AlreadyInitialized {
        /// What the process is using now.
        current: String,
    },

    /// No device met a selection criterion.
    #[error("no device meets the selection {criterion}: {seen}")]
    NoDeviceQualifies {
        /// The criterion, e.g. `at least 40.0 GiB free`.
        criterion: String,
        /// What was available, device by device.
        seen: String,
    },

    /// An operation that only GPUs support was asked of the CPU.
    #[error("`{op}` needs a GPU device, got cpu")]
    NotAGpu {
        /// The operation, e.g. `mem_get_info`.
        op: &'static str,
    },

    /// A value's tensors are on more than one device.
    #[error(
        "tensors are on more than one device: {}",
        describe_placements(placements)
    )]
    ScatteredTensors {
        /// Every tensor's path and device.
        placements: Vec<(String, Device)>,
    },

    /// A tensor inside a value could not be moved in place.
    #[error("cannot move `{path}` in place: {reason}; clone the value it points to first")]
    NotMovable {
        /// Where the tensor is.
        path: String,
        /// Why it cannot be moved.
        reason: String,
    },

    /// The arguments of a `#[device_check]` function are on different devices.
    #[error(transparent)]
    DeviceCheck(#[from] crate::DeviceMismatch),

    /// Another tensor library reported an error (for example candle, moving its tensors).
    #[error("{library}: {message}")]
    Library {
        /// The library.
        library: &'static str,
        /// Its message.
        message: String,
    },

    /// The CUDA driver, NVRTC or cuBLAS reported an error.
    #[error("CUDA error on {device} during {op}: {message}")]
    Cuda {
        /// The device the call was for.
        device: Device,
        /// What the runtime was doing.
        op: &'static str,
        /// The library's own description.
        message: String,
    },
}

/// `a is on cpu, b is on cuda:0`.
pub(crate) fn describe_placements(placements: &[(String, Device)]) -> String {
    let each: Vec<String> = placements
        .iter()
        .map(|(path, device)| format!("{path} is on {device}"))
        .collect();
    each.join(", ")
}
