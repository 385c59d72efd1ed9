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
    #[error(
        "shape {shape:?} holds {}, but {} given",
        count(*expected, "element", "elements"),
        count(*got, "was", "were")
    )]
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
        "{device} does not exist: {}; \
         check CUDA_VISIBLE_DEVICES or list them with `placement::devices()`",
        describe_visible(*count)
    )]
    DeviceOutOfRange {
        /// The device that was asked for.
        device: Device,
        /// How many GPUs are visible.
        count: usize,
    },

    /// An allocation would exceed the device's memory, or the allocator refused it.
    #[error(
        "out of memory on {device}: tried to allocate {}, but {}; \
         free tensors you no longer need or choose a device with `select_device`",
        bytes(*requested),
        describe_free(*free, *total)
    )]
    OutOfMemory {
        /// Where the allocation was attempted.
        device: Device,
        /// The size of the allocation, in bytes.
        requested: u64,
        /// The free bytes at the time of the request; `None` where the allocator refused
        /// without saying what is free (the host's allocator never says).
        free: Option<u64>,
        /// The total memory of the device, in bytes, where known.
        total: Option<u64>,
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
        crate::check::summarize(placements, None)
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

    /// Moving a value's tensors failed at one of them; nothing was moved.
    #[error("cannot move `{path}` to {device}, so nothing was moved: {source}")]
    Move {
        /// The tensor that could not be moved.
        path: String,
        /// Where it was to go.
        device: Device,
        /// Why it could not.
        source: Box<Error>,
    },

    /// The arguments (or the result) of a `#[device_check]` function are on different devices.
    #[error(transparent)]
    DeviceCheck(#[from] crate::DeviceCheckError),

    /// Two timing events of different devices: elapsed time is measured within one device's
    /// stream of work.
    #[error(
        "the events mark different devices: the start is on {start}, the end on {end}; \
         record both events on the device whose work you time"
    )]
    EventDevices {
        /// The device of the first event.
        start: Device,
        /// The device of the second event.
        end: Device,
    },

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

/// `1 element`, `4 elements`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `no GPU is visible`, `1 GPU is visible (cuda:0)`, `3 GPUs are visible (cuda:0 to cuda:2)`.
fn describe_visible(count: usize) -> String {
    match count {
        0 => "no GPU is visible".to_owned(),
        1 => "1 GPU is visible (cuda:0)".to_owned(),
        n => format!("{n} GPUs are visible (cuda:0 to cuda:{})", n - 1),
    }
}

fn bytes(n: u64) -> String {
    bytesize::ByteSize(n).display().iec().to_string()
}

fn describe_free(free: Option<u64>, total: Option<u64>) -> String {
    match (free, total) {
        (Some(free), Some(total)) => format!("only {} of {} are free", bytes(free), bytes(total)),
        _ => "the allocator refused it".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_worded_in_the_singular_and_the_plural() {
        let one = Error::ElementCount {
            shape: vec![1],
            expected: 1,
            got: 2,
        };
        assert_eq!(
            one.to_string(),
            "shape [1] holds 1 element, but 2 were given"
        );
        let many = Error::ElementCount {
            shape: vec![3],
            expected: 3,
            got: 1,
        };
        assert_eq!(
            many.to_string(),
            "shape [3] holds 3 elements, but 1 was given"
        );
        let visible = |count| {
            Error::DeviceOutOfRange {
                device: Device::Cuda(4),
                count,
            }
            .to_string()
        };
        assert!(
            visible(0).contains(": no GPU is visible;"),
            "{}",
            visible(0)
        );
        assert!(
            visible(1).contains(": 1 GPU is visible (cuda:0);"),
            "{}",
            visible(1)
        );
        assert!(
            visible(3).contains(": 3 GPUs are visible (cuda:0 to cuda:2);"),
            "{}",
            visible(3)
        );
    }

    #[test]
    fn a_refused_host_allocation_says_so() {
        let err = Error::OutOfMemory {
            device: Device::Cpu,
            requested: 1 << 42,
            free: None,
            total: None,
        };
        assert_eq!(
            err.to_string(),
            "out of memory on cpu: tried to allocate 4.0 TiB, but the allocator refused it; \
             free tensors you no longer need or choose a device with `select_device`"
        );
    }
}
