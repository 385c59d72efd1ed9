//! Which GPUs exist, and choosing one instead of defaulting to GPU 0.

use bytesize::ByteSize;

use crate::backend::{self, Gpus};
use crate::{Device, Error, Result};

/// What is known about one GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device, by visible ordinal.
    pub device: Device,
    /// The driver's name for it (`NVIDIA H200`), or the simulated GPU's.
    pub name: String,
    /// Total memory in bytes.
    pub total_memory: u64,
    /// Free memory in bytes, at the time of the call.
    pub free_memory: u64,
    /// `(major, minor)` where known; simulated GPUs have none.
    pub compute_capability: Option<(u32, u32)>,
}

/// The visible GPUs, in ordinal order; empty when there are none.
///
/// Real GPUs are set up (context, kernels) on the first query, as they would be on first use.
///
/// # Errors
/// A malformed GPU configuration, or a driver failure on one of the GPUs.
pub fn devices() -> Result<Vec<DeviceInfo>> {
    (0..backend::gpus()?.count())
        .map(|ordinal| info(Device::Cuda(ordinal)))
        .collect()
}

fn info(device: Device) -> Result<DeviceInfo> {
    let (free_memory, total_memory) = backend::mem_get_info(&device)?;
    let backend = backend::get(&device)?;
    Ok(DeviceInfo {
        device,
        name: backend.name()?,
        total_memory,
        free_memory,
        compute_capability: backend.compute_capability()?,
    })
}

/// How [`select_device`] chooses a GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// The GPU with the most free memory (the lowest ordinal among equals).
    MostFreeMemory,
    /// The first of these ordinals that is visible.
    Preferred(Vec<usize>),
    /// The GPU with the most free memory among those with at least this many bytes free.
    MinFreeMemory(u64),
}

/// Chooses a GPU, so that jobs stop crowding onto GPU 0 because nothing chose one.
///
/// # Errors
/// [`Error::NoDeviceQualifies`] naming the criterion and what each GPU offered.
pub fn select_device(selection: &Selection) -> Result<Device> {
    let gpus = devices()?;
    let most_free = |min_free: u64| {
        gpus.iter()
            .filter(|info| info.free_memory >= min_free)
            // Among equals, the lowest ordinal wins.
            .max_by(|a, b| {
                a.free_memory
                    .cmp(&b.free_memory)
                    .then(b.device.cmp(&a.device))
            })
            .map(|info| info.device)
    };
    let chosen = match selection {
        Selection::MostFreeMemory => most_free(0),
        Selection::Preferred(ordinals) => ordinals
            .iter()
            .map(|&ordinal| Device::Cuda(ordinal))
            .find(|device| gpus.iter().any(|info| info.device == *device)),
        Selection::MinFreeMemory(bytes) => most_free(*bytes),
    };
    chosen.ok_or_else(|| Error::NoDeviceQualifies {
        criterion: describe(selection),
        seen: describe_gpus(&gpus),
    })
}

fn describe(selection: &Selection) -> String {
    match selection {
        Selection::MostFreeMemory => "most free memory".to_owned(),
        Selection::Preferred(ordinals) => {
            let names: Vec<String> = ordinals
                .iter()
                .map(|&ordinal| Device::Cuda(ordinal).to_string())
                .collect();
            format!("first of [{}]", names.join(", "))
        }
        Selection::MinFreeMemory(bytes) => {
            format!("at least {} free", ByteSize(*bytes).display().iec())
        }
    }
}

fn describe_gpus(gpus: &[DeviceInfo]) -> String {
    if gpus.is_empty() {
        return match backend::gpus() {
            Ok(Gpus::Absent { reason }) => format!("no GPU is visible ({reason})"),
            _ => "no GPU is visible".to_owned(),
        };
    }
    let each: Vec<String> = gpus
        .iter()
        .map(|info| {
            format!(
                "{} has {} of {} free",
                info.device,
                ByteSize(info.free_memory).display().iec(),
                ByteSize(info.total_memory).display().iec()
            )
        })
        .collect();
    each.join(", ")
}
