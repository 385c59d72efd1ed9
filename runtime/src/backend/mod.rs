//! The backends behind [`Device`]: the CPU, simulated GPUs and real GPUs, and the process-wide
//! choice between simulated and real GPUs.
//!
//! Each backend implements two crate-private traits, as candle's `BackendDevice` and
//! `BackendStorage`: [`BackendDevice`] for a device (allocation, transfers, statistics, events)
//! and [`BackendStorage`] for the data it holds (the kernels). [`Backend`], [`Storage`] and
//! [`Event`] are enums over the backends, dispatched in the three macros below: adding a backend
//! means a variant in each and the two trait impls. Tensors call in only after
//! [`crate::Tensor`] has checked, in one place, that operands share a device; where storages of
//! two backends still meet, the result is an error, not a panic.

pub(crate) mod cuda;
pub(crate) mod host;
pub mod simulated;

use std::env::{self, VarError};
use std::sync::{LazyLock, OnceLock};
use std::time::Instant;

use cudarc::driver::CudaEvent;

use self::cuda::{CudaGpu, CudaGpus, CudaStorage};
use self::host::{HostBackend, HostStorage};
use crate::memory::Tracker;
use crate::shape::Len;
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

/// The dimensions of a row-major `m×k · k×n` product, and its element count `m·n`, checked by
/// the caller.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Matmul {
    pub(crate) m: usize,
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) len: Len,
}

/// A device of one backend.
pub(crate) trait BackendDevice: 'static {
    type Storage: BackendStorage;
    type Event;

    fn tracker(&self) -> &Tracker;
    /// Free and total bytes.
    fn mem_get_info(&self) -> Result<(u64, u64)>;
    fn name(&self) -> Result<String>;
    /// `(major, minor)` where the device has one.
    fn compute_capability(&self) -> Result<Option<(u32, u32)>>;
    /// Waits until all work queued on the device is done.
    fn synchronize(&self) -> Result<()>;

    fn zeros(&'static self, len: Len) -> Result<Self::Storage>;
    fn upload(&'static self, data: &[f32], mode: TransferMode) -> Result<Self::Storage>;
    /// Storage that `fill` writes, `len` elements appended to an empty host buffer. The device's
    /// memory is reserved before the host buffer, and the host buffer fallibly.
    fn generate(&'static self, len: Len, fill: impl FnOnce(&mut Vec<f32>))
    -> Result<Self::Storage>;
    /// Like [`BackendDevice::upload`], but a host device keeps `data` without copying it.
    fn upload_owned(&'static self, data: Vec<f32>) -> Result<Self::Storage>;

    /// Marks the point after all work queued so far.
    fn record_event(&self) -> Result<Self::Event>;
    /// Milliseconds from `start` to `end`, waiting for `end`.
    fn elapsed_ms(&self, start: &Self::Event, end: &Self::Event) -> Result<f32>;
}

/// Tensor data on one backend: the kernels. Operands of two-operand kernels are on the device
/// of `self` (checked before the call).
pub(crate) trait BackendStorage: Sized {
    fn device(&self) -> Device;
    /// The elements, where they are host memory already and can be read without a copy.
    fn host_data(&self) -> Option<&[f32]>;
    fn download(&self, mode: TransferMode) -> Result<Vec<f32>>;
    fn binary(&self, op: BinaryOp, rhs: &Self) -> Result<Self>;
    fn matmul(&self, rhs: &Self, dims: Matmul) -> Result<Self>;
    /// `max(x, 0)` as PyTorch computes it: NaN stays NaN and `-0.0` stays `-0.0`.
    fn relu(&self) -> Result<Self>;
    /// The sum as a one-element storage, with `+0.0` as the identity, as PyTorch's: an empty
    /// sum is `+0.0`, and so is a sum of `-0.0`s.
    fn sum(&self) -> Result<Self>;
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

/// Tensor data on one backend.
#[derive(Debug)]
pub(crate) enum Storage {
    Host(HostStorage),
    Cuda(CudaStorage),
}

/// A point in a device's stream of work.
#[derive(Debug)]
pub(crate) enum Event {
    Host(Instant),
    Cuda(CudaEvent),
}

/// `$body` with `$device` bound to whichever backend's device `$backend` is; with `wrap`, its
/// `Ok` value is wrapped in that enum's variant of the same backend ([`Storage`], [`Event`]).
macro_rules! on_backend {
    ($backend:expr, |$device:ident| $body:expr) => {
        match $backend {
            Backend::Host($device) => $body,
            Backend::Cuda($device) => $body,
        }
    };
    ($backend:expr, |$device:ident| $body:expr, wrap $wrap:ident) => {
        match $backend {
            Backend::Host($device) => $body.map($wrap::Host),
            Backend::Cuda($device) => $body.map($wrap::Cuda),
        }
    };
}

/// `$body` with `$storage` bound to whichever backend's storage `$value` is.
macro_rules! on_storage {
    ($value:expr, |$storage:ident| $body:expr) => {
        match $value {
            Storage::Host($storage) => $body,
            Storage::Cuda($storage) => $body,
        }
    };
}

/// `$body` with both storages bound, when they are on one device (and so of one backend); else
/// the op's device mismatch, as [`crate::Tensor`] reports it before calling in.
macro_rules! on_storages {
    ($op:expr, $lhs:expr, $rhs:expr, |$a:ident, $b:ident| $body:expr) => {
        match ($lhs, $rhs) {
            (Storage::Host($a), Storage::Host($b)) if $a.device() == $b.device() => {
                $body.map(Storage::Host)
            }
            (Storage::Cuda($a), Storage::Cuda($b)) if $a.device() == $b.device() => {
                $body.map(Storage::Cuda)
            }
            (lhs, rhs) => Err(Error::DeviceMismatch {
                op: $op,
                lhs: lhs.device(),
                rhs: rhs.device(),
            }),
        }
    };
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

/// The memory counters of the devices set up so far, without setting up any other.
pub(crate) fn set_up_trackers() -> Vec<&'static Tracker> {
    let mut trackers = vec![CPU.tracker()];
    match GPUS.get() {
        Some(Ok(Gpus::Simulated { gpus, .. })) => {
            trackers.extend(gpus.iter().map(BackendDevice::tracker));
        }
        Some(Ok(Gpus::Cuda(gpus))) => {
            trackers.extend(gpus.set_up().map(BackendDevice::tracker));
        }
        Some(Ok(Gpus::Absent { .. }) | Err(_)) | None => {}
    }
    trackers
}

pub(crate) fn tracker(device: &Device) -> Result<&'static Tracker> {
    Ok(on_backend!(get(device)?, |backend| backend.tracker()))
}

pub(crate) fn mem_get_info(device: &Device) -> Result<(u64, u64)> {
    if !device.is_cuda() {
        return Err(Error::NotAGpu { op: "mem_get_info" });
    }
    on_backend!(get(device)?, |backend| backend.mem_get_info())
}

/// Waits until all work queued on `device` is done (like `torch.cuda.synchronize`). Host
/// devices compute synchronously, so for them this only checks that the device exists.
pub fn synchronize(device: &Device) -> Result<()> {
    on_backend!(get(device)?, |backend| backend.synchronize())
}

impl Backend {
    pub(crate) fn name(self) -> Result<String> {
        on_backend!(self, |backend| backend.name())
    }

    pub(crate) fn compute_capability(self) -> Result<Option<(u32, u32)>> {
        on_backend!(self, |backend| backend.compute_capability())
    }

    pub(crate) fn zeros(self, len: Len) -> Result<Storage> {
        on_backend!(self, |backend| backend.zeros(len), wrap Storage)
    }

    pub(crate) fn upload(self, data: &[f32], mode: TransferMode) -> Result<Storage> {
        on_backend!(self, |backend| backend.upload(data, mode), wrap Storage)
    }

    pub(crate) fn generate(self, len: Len, fill: impl FnOnce(&mut Vec<f32>)) -> Result<Storage> {
        on_backend!(self, |backend| backend.generate(len, fill), wrap Storage)
    }

    pub(crate) fn upload_owned(self, data: Vec<f32>) -> Result<Storage> {
        on_backend!(self, |backend| backend.upload_owned(data), wrap Storage)
    }

    pub(crate) fn record_event(self) -> Result<Event> {
        on_backend!(self, |backend| backend.record_event(), wrap Event)
    }

    /// `None` when the events are not of this backend.
    pub(crate) fn elapsed_ms(self, start: &Event, end: &Event) -> Option<Result<f32>> {
        match (self, start, end) {
            (Backend::Host(host), Event::Host(start), Event::Host(end)) => {
                Some(host.elapsed_ms(start, end))
            }
            (Backend::Cuda(gpu), Event::Cuda(start), Event::Cuda(end)) => {
                Some(gpu.elapsed_ms(start, end))
            }
            _ => None,
        }
    }
}

impl Storage {
    pub(crate) fn device(&self) -> Device {
        on_storage!(self, |storage| storage.device())
    }

    pub(crate) fn download(&self, mode: TransferMode) -> Result<Vec<f32>> {
        on_storage!(self, |storage| storage.download(mode))
    }

    /// A copy on `target`'s device: straight from host memory where the data is there, through
    /// a download otherwise.
    pub(crate) fn copy_to(&self, target: Backend, mode: TransferMode) -> Result<Storage> {
        match on_storage!(self, |storage| storage.host_data()) {
            Some(data) => target.upload(data, mode),
            None => target.upload_owned(self.download(mode)?),
        }
    }

    pub(crate) fn binary(&self, op: BinaryOp, rhs: &Storage) -> Result<Storage> {
        on_storages!(op.name(), self, rhs, |a, b| a.binary(op, b))
    }

    pub(crate) fn matmul(&self, rhs: &Storage, dims: Matmul) -> Result<Storage> {
        on_storages!("matmul", self, rhs, |a, b| a.matmul(b, dims))
    }

    pub(crate) fn relu(&self) -> Result<Storage> {
        on_storage!(self, |storage| storage.relu().map(Storage::from))
    }

    pub(crate) fn sum(&self) -> Result<Storage> {
        on_storage!(self, |storage| storage.sum().map(Storage::from))
    }
}

impl From<HostStorage> for Storage {
    fn from(storage: HostStorage) -> Storage {
        Storage::Host(storage)
    }
}

impl From<CudaStorage> for Storage {
    fn from(storage: CudaStorage) -> Storage {
        Storage::Cuda(storage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storages_of_two_devices_meet_in_an_error() {
        simulated::configure("1MiB").unwrap();
        let len = Len::of_slice(&[0.0]);
        let cpu = get(&Device::Cpu).unwrap().zeros(len).unwrap();
        let gpu = get(&Device::Cuda(0)).unwrap().zeros(len).unwrap();
        let mismatch = |op| Error::DeviceMismatch {
            op,
            lhs: Device::Cpu,
            rhs: Device::Cuda(0),
        };
        assert_eq!(
            cpu.binary(BinaryOp::Add, &gpu).unwrap_err(),
            mismatch("add")
        );
        let dims = Matmul {
            m: 1,
            k: 1,
            n: 1,
            len,
        };
        assert_eq!(cpu.matmul(&gpu, dims).unwrap_err(), mismatch("matmul"));
        assert!(cpu.binary(BinaryOp::Add, &cpu).is_ok());
    }
}
