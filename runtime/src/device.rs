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

/// The largest GPU ordinal a device string can name: the CUDA driver numbers devices with a C
/// `int`, and PyTorch's parser stops at the same bound.
const MAX_ORDINAL: usize = i32::MAX as usize;

/// The grammar of device strings, the same as the macros' and the linter's (all three are tested
/// against `tests/data/device-strings.toml`): `cpu`, `cpu:0` or `cuda:N`, lowercase, without
/// whitespace, sign or leading zeros, as PyTorch's `torch.device` reads them, except that a bare
/// `cuda` is refused because it means "whatever GPU is current".
fn parse(text: &str) -> Result<Device, String> {
    match text {
        "cpu" | "cpu:0" => return Ok(Device::Cpu),
        "cuda" => {
            return Err(
                "`cuda` does not name a device: it means whatever GPU is current; \
                        write the ordinal, for example `cuda:0`"
                    .to_owned(),
            );
        }
        "" => {
            return Err(
                "an empty string is not a device; write `cpu` or `cuda:N`, for example `cuda:0`"
                    .to_owned(),
            );
        }
        _ => {}
    }
    let trimmed = text.trim();
    if trimmed != text && parse(trimmed).is_ok() {
        return Err(format!(
            "{text:?} has whitespace around it; write `{trimmed}`"
        ));
    }
    if let Some(ordinal) = text.strip_prefix("cuda:") {
        return parse_ordinal(text, ordinal).map(Device::Cuda);
    }
    let lowercase = text.to_ascii_lowercase();
    if lowercase != text && parse(&lowercase).is_ok() {
        return Err(format!(
            "`{text}`: device names are lowercase; write `{lowercase}`"
        ));
    }
    if text.starts_with("cpu:") {
        return Err(format!(
            "`{text}`: there is one CPU device, `cpu` (also written `cpu:0`)"
        ));
    }
    Err(format!(
        "`{text}` is not a device; write `cpu` or `cuda:N`, for example `cuda:0`"
    ))
}

fn parse_ordinal(text: &str, digits: &str) -> Result<usize, String> {
    if digits.is_empty() {
        return Err(format!(
            "`{text}` has no GPU ordinal after `cuda:`; write one, for example `cuda:0`"
        ));
    }
    if !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(format!(
            "`{text}`: write the GPU ordinal in plain decimal digits, for example `cuda:0`"
        ));
    }
    let significant = digits.trim_start_matches('0');
    if digits.len() > 1 && digits.starts_with('0') {
        let ordinal = if significant.is_empty() {
            "0"
        } else {
            significant
        };
        return Err(format!(
            "`{text}` has a leading zero; write `cuda:{ordinal}`"
        ));
    }
    match digits.parse::<usize>() {
        Ok(ordinal) if ordinal <= MAX_ORDINAL => Ok(ordinal),
        _ => Err(format!(
            "`{text}` is past {MAX_ORDINAL}, the largest GPU ordinal the CUDA driver can number"
        )),
    }
}

impl FromStr for Device {
    type Err = ParseDeviceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s).map_err(|reason| ParseDeviceError { reason })
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
