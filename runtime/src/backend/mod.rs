//! The backends behind [`Device`]: the CPU, simulated GPUs and real GPUs, and the process-wide
//! choice between simulated and real GPUs.
//!
//! Storage is an enum over the two kinds of memory (host and CUDA); tensors call into it only
//! after [`crate::Tensor`] has checked, in one place, that operands share a device.

pub(crate) mod cuda;
pub(crate) mod host;
pub mod simulated;

use std::env::{self, VarError};
use std::sync::{LazyLock, OnceLock};

use self::cuda::{CudaGpu, CudaGpus, CudaStorage};
use self::host::{HostBackend, HostStorage};
use crate::memory::Tracker;
use crate::{Device, Error, Result, TransferMode};

pub(crate) const VISIBLE_DEVICES_VAR: &str = "CUDA_VISIBLE_DEVICES";

/// The elementwise binary ops every backend implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl BinaryOp {
    pub(crate) fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
        }
    }
}

/// The dimensions of a row-major `m×k · k×n` product.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Matmul {
    pub(crate) m: usize,
    pub(crate) k: usize,
    pub(crate) n: usize,
}

/// The GPUs of this process, chosen once: simulated when configured, else real when the driver
/// is present, else none.
#[derive(Debug)]
pub(crate) enum Gpus {
    Simulated {
        spec: String,
        gpus: Vec<HostBackend>,
    },
    Cuda(CudaGpus),
    Absent {
        reason: String,
    },
}

impl Gpus {
    pub(crate) fn count(&self) -> usize {
        match self {
            Gpus::Simulated { gpus, .. } => gpus.len(),
            Gpus::Cuda(gpus) => gpus.count(),
            Gpus::Absent { .. } => 0,
        }
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Gpus::Simulated { spec, .. } => format!("simulated GPUs {spec:?}"),
            Gpus::Cuda(gpus) => format!("{} CUDA GPU(s)", gpus.count()),
            Gpus::Absent { reason } => format!("no GPU: {reason}"),
        }
    }
}

static GPUS: OnceLock<Result<Gpus>> = OnceLock::new();
static CPU: LazyLock<HostBackend> =
    LazyLock::new(|| HostBackend::new(Device::Cpu, None, "cpu".to_owned()));

pub(crate) fn gpus() -> Result<&'static Gpus> {
    GPUS.get_or_init(detect).as_ref().map_err(Clone::clone)
}

fn detect() -> Result<Gpus> {
    let visible = env::var(VISIBLE_DEVICES_VAR).ok();
    match env::var(simulated::SIMULATED_GPUS_VAR) {
        Ok(spec) => simulated::from_spec(&spec, visible.as_deref()),
        Err(VarError::NotPresent) => Ok(cuda::detect()),
        Err(VarError::NotUnicode(value)) => Err(Error::GpuConfig {
            variable: simulated::SIMULATED_GPUS_VAR,
            value: value.to_string_lossy().into_owned(),
            reason: "it is not valid UTF-8".to_owned(),
        }),
    }
}

/// How many GPUs (real or simulated) this process sees.
///
/// # Errors
/// A malformed `PLACEMENT_SIMULATED_GPUS` or `CUDA_VISIBLE_DEVICES` for simulated GPUs.
pub fn device_count() -> Result<usize> {
    Ok(gpus()?.count())
}

/// The backend that holds `device`'s storage.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Backend {
    Host(&'static HostBackend),
    Cuda(&'static CudaGpu),
}

pub(crate) fn get(device: &Device) -> Result<Backend> {
    let Device::Cuda(ordinal) = *device else {
        return Ok(Backend::Host(&CPU));
    };
    match gpus()? {
        Gpus::Simulated { gpus, .. } => {
            gpus.get(ordinal)
                .map(Backend::Host)
                .ok_or(Error::DeviceOutOfRange {
                    device: *device,
                    count: gpus.len(),
                })
        }
        Gpus::Cuda(gpus) => gpus.get(ordinal).map(Backend::Cuda),
        Gpus::Absent { reason } => Err(Error::NoGpu {
            device: *device,
            reason: reason.clone(),
        }),
    }
}

pub(crate) fn tracker(device: &Device) -> Result<&'static Tracker> {
    Ok(match get(device)? {
        Backend::Host(host) => host.tracker(),
        Backend::Cuda(gpu) => gpu.tracker(),
    })
}

pub(crate) fn mem_get_info(device: &Device) -> Result<(u64, u64)> {
    if !device.is_cuda() {
        return Err(Error::NotAGpu { op: "mem_get_info" });
    }
    match get(device)? {
        Backend::Host(host) => {
            let tracker = host.tracker();
            let total = tracker.limit().unwrap_or(u64::MAX);
            Ok((total.saturating_sub(tracker.allocated()), total))
        }
        Backend::Cuda(gpu) => gpu.mem_get_info(),
    }
}

/// Waits until all work queued on `device` is done (like `torch.cuda.synchronize`). Host
/// devices compute synchronously, so for them this only checks that the device exists.
pub fn synchronize(device: &Device) -> Result<()> {
    match get(device)? {
        Backend::Host(_) => Ok(()),
        Backend::Cuda(gpu) => gpu.synchronize(),
    }
}

impl Backend {
    pub(crate) fn upload(self, data: &[f32], mode: TransferMode) -> Result<Storage> {
        Ok(match self {
            Backend::Host(host) => Storage::Host(host.upload(data)?),
            Backend::Cuda(gpu) => Storage::Cuda(gpu.upload(data, mode)?),
        })
    }

    /// Like [`Backend::upload`], but a host device keeps `data` without copying it.
    pub(crate) fn upload_owned(self, data: Vec<f32>) -> Result<Storage> {
        Ok(match self {
            Backend::Host(host) => Storage::Host(host.upload_owned(data)?),
            Backend::Cuda(gpu) => Storage::Cuda(gpu.upload(&data, TransferMode::Pageable)?),
        })
    }

    pub(crate) fn zeros(self, len: usize) -> Result<Storage> {
        Ok(match self {
            Backend::Host(host) => Storage::Host(host.zeros(len)?),
            Backend::Cuda(gpu) => Storage::Cuda(gpu.zeros(len)?),
        })
    }
}

/// Tensor data on one backend.
#[derive(Debug)]
pub(crate) enum Storage {
    Host(HostStorage),
    Cuda(CudaStorage),
}

/// Applies the same method to two storages of one backend. Operands reach here only after the
/// device check, so they always share a backend.
macro_rules! same_backend {
    ($lhs:expr, $rhs:expr, |$a:ident, $b:ident| $body:expr) => {
        match ($lhs, $rhs) {
            (Storage::Host($a), Storage::Host($b)) => Storage::Host($body?),
            (Storage::Cuda($a), Storage::Cuda($b)) => Storage::Cuda($body?),
            _ => unreachable!("operands on different backends passed the device check"),
        }
    };
}

impl Storage {
    pub(crate) fn download(&self, mode: TransferMode) -> Result<Vec<f32>> {
        match self {
            Storage::Host(host) => Ok(host.data.clone()),
            Storage::Cuda(cuda) => cuda.download(mode),
        }
    }

    pub(crate) fn binary(&self, op: BinaryOp, rhs: &Storage) -> Result<Storage> {
        Ok(same_backend!(self, rhs, |a, b| a.binary(op, b)))
    }

    pub(crate) fn matmul(&self, rhs: &Storage, dims: Matmul) -> Result<Storage> {
        Ok(same_backend!(self, rhs, |a, b| a.matmul(b, dims)))
    }

    pub(crate) fn relu(&self) -> Result<Storage> {
        Ok(match self {
            Storage::Host(host) => Storage::Host(host.relu()?),
            Storage::Cuda(cuda) => Storage::Cuda(cuda.relu()?),
        })
    }

    pub(crate) fn sum(&self) -> Result<Storage> {
        Ok(match self {
            Storage::Host(host) => Storage::Host(host.sum()?),
            Storage::Cuda(cuda) => Storage::Cuda(cuda.sum()?),
        })
    }
}

/// Checks that `device` exists, without setting it up.
pub(crate) fn check(device: &Device) -> Result<()> {
    let Device::Cuda(ordinal) = *device else {
        return Ok(());
    };
    match gpus()? {
        Gpus::Absent { reason } => Err(Error::NoGpu {
            device: *device,
            reason: reason.clone(),
        }),
        gpus if ordinal >= gpus.count() => Err(Error::DeviceOutOfRange {
            device: *device,
            count: gpus.count(),
        }),
        _ => Ok(()),
    }
}
