//! Where a tensor lives.

use std::fmt;
use std::str::FromStr;

use placement_device_name::DeviceName;

/// A device that holds tensor storage: the host CPU or one GPU, by ordinal.
///
/// `Cuda(n)` is the n-th *visible* GPU, as the CUDA driver numbers them after applying
/// `CUDA_VISIBLE_DEVICES`; with simulated GPUs it is the n-th simulated one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Device {
    /// Host memory, computed on the CPU.
    Cpu,
    /// The GPU with this ordinal.
    Cuda(usize),
}

impl Device {
    /// Whether this is a GPU (real or simulated).
    pub fn is_cuda(&self) -> bool {
        matches!(self, Device::Cuda(_))
    }

    /// The Rust expression that names this device, for messages that tell the user what to write.
    pub fn to_rust(&self) -> String {
        match self {
            Device::Cpu => "Device::Cpu".to_owned(),
            Device::Cuda(ordinal) => format!("Device::Cuda({ordinal})"),
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(ordinal) => write!(f, "cuda:{ordinal}"),
        }
    }
}

/// Why a string is not a device name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct ParseDeviceError {
    reason: String,
}

impl FromStr for Device {
    type Err = ParseDeviceError;

    /// The grammar of device strings, the same as the macros' and the linter's
    /// (`placement-device-name`): `cpu`, `cpu:0` or `cuda:N`, lowercase, without whitespace, sign
    /// or leading zeros, as PyTorch's `torch.device` reads them, except that a bare `cuda` is
    /// refused because it means "whatever GPU is current".
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match placement_device_name::parse(s) {
            Ok(DeviceName::Cpu) => Ok(Device::Cpu),
            Ok(DeviceName::Cuda(ordinal)) => Ok(Device::Cuda(ordinal)),
            Err(reason) => Err(ParseDeviceError { reason }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_parse_round_trip() {
        for device in [Device::Cpu, Device::Cuda(0), Device::Cuda(7)] {
            assert_eq!(device.to_string().parse::<Device>(), Ok(device));
        }
        assert_eq!(Device::Cuda(3).to_string(), "cuda:3");
        assert_eq!(Device::Cpu.to_string(), "cpu");
    }
}
