//! Where a tensor lives.

use std::fmt;
use std::str::FromStr;

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

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let name = s.trim();
        if name == "cpu" {
            return Ok(Device::Cpu);
        }
        if name == "cuda" {
            return Err(ParseDeviceError {
                reason: "`cuda` does not name a device: it means whatever GPU is current; \
                         write the ordinal, for example `cuda:0`"
                    .to_owned(),
            });
        }
        if let Some(ordinal) = name.strip_prefix("cuda:") {
            return ordinal
                .parse::<usize>()
                .map(Device::Cuda)
                .map_err(|_| ParseDeviceError {
                    reason: format!(
                        "`{name}` has no valid GPU ordinal after `cuda:`; \
                         write a non-negative integer, for example `cuda:0`"
                    ),
                });
        }
        Err(ParseDeviceError {
            reason: format!(
                "`{name}` is not a device; write `cpu` or `cuda:N`, for example `cuda:0`"
            ),
        })
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

    #[test]
    fn bare_cuda_suggests_an_ordinal() {
        let err = "cuda".parse::<Device>().unwrap_err().to_string();
        assert!(err.contains("cuda:0"), "{err}");
        assert!(err.contains("current"), "{err}");
    }

    #[test]
    fn malformed_names_are_rejected() {
        for bad in ["cuda:", "cuda:-1", "cuda:x", "gpu:0", "CPU", ""] {
            let err = bad.parse::<Device>().unwrap_err().to_string();
            assert!(err.contains("cuda:0"), "{bad:?}: {err}");
        }
    }
}
