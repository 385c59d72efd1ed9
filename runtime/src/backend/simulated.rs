//! Simulated GPUs: `cuda:0..N-1` computed on the CPU, each with its own storage and memory limit,
//! so that multi-GPU placement logic can be tested on machines without a GPU.
//!
//! Set `PLACEMENT_SIMULATED_GPUS=24GiB,24GiB,80GiB` in the environment, or call [`configure`]
//! before the process first touches a device. `CUDA_VISIBLE_DEVICES` is honoured as the CUDA
//! driver does: the listed physical GPUs are renumbered from 0 in the order given, and a negative
//! entry ends the list, so `-1` hides every GPU. Where the driver would quietly drop the rest of
//! the list (an entry that is not an ordinal, such as a UUID or MIG id, one past the last GPU, or
//! one listed twice), the simulation reports the value as malformed instead.

use std::str::FromStr;

use bytesize::ByteSize;

use super::host::HostBackend;
use super::{Gpus, VISIBLE_DEVICES_VAR};
use crate::{Device, Error, Result};

/// The environment variable that turns simulated GPUs on.
pub const SIMULATED_GPUS_VAR: &str = "PLACEMENT_SIMULATED_GPUS";

/// Uses simulated GPUs with these memory sizes (`"24GiB,24GiB,80GiB"`) for this process,
/// instead of real ones. `CUDA_VISIBLE_DEVICES` is read now and applied.
///
/// Call it before the first tensor, device query or implicit-device call; calling it again with
/// the same spec is a no-op, so each test of a test binary may call it.
///
/// # Errors
/// [`Error::GpuConfig`] for a malformed spec or `CUDA_VISIBLE_DEVICES`;
/// [`Error::AlreadyInitialized`] when the process already set up other GPUs.
pub fn configure(spec: &str) -> Result<()> {
    let mut fresh = false;
    let current = super::GPUS.get_or_init(|| {
        fresh = true;
        from_spec(spec, std::env::var(VISIBLE_DEVICES_VAR).ok().as_deref())
    });
    match current {
        Ok(_) if fresh => Ok(()),
        Ok(Gpus::Simulated { spec: existing, .. }) if existing == spec => Ok(()),
        Ok(gpus) => Err(Error::AlreadyInitialized {
            current: gpus.describe(),
        }),
        Err(err) => Err(err.clone()),
    }
}

/// Builds the simulated GPUs of `spec`, renumbered by `visible` (a `CUDA_VISIBLE_DEVICES` value).
pub(super) fn from_spec(spec: &str, visible: Option<&str>) -> Result<Gpus> {
    let sizes = parse_sizes(spec)?;
    let order = match visible {
        Some(value) => parse_visible(value, sizes.len())?,
        None => (0..sizes.len()).collect(),
    };
    let gpus = order
        .iter()
        .enumerate()
        .map(|(ordinal, &physical)| {
            let size = sizes[physical];
            let name = format!(
                "simulated GPU {physical} ({})",
                ByteSize(size).display().iec()
            );
            HostBackend::new(Device::Cuda(ordinal), Some(size), name)
        })
        .collect();
    Ok(Gpus::Simulated {
        spec: spec.to_owned(),
        gpus,
    })
}

fn config_error(variable: &'static str, value: &str, reason: String) -> Error {
    Error::GpuConfig {
        variable,
        value: value.to_owned(),
        reason,
    }
}

/// `"24GiB,24GiB,80GiB"` → bytes per GPU; an empty spec means no GPU.
fn parse_sizes(spec: &str) -> Result<Vec<u64>> {
    if spec.trim().is_empty() {
        return Ok(Vec::new());
    }
    spec.split(',')
        .enumerate()
        .map(|(index, entry)| {
            let entry = entry.trim();
            let bad = |why: &str| {
                config_error(
                    SIMULATED_GPUS_VAR,
                    spec,
                    format!(
                        "entry {index} ({entry:?}) {why}; write one memory size per GPU, \
                         separated by commas, for example `24GiB,24GiB,80GiB`"
                    ),
                )
            };
            if !entry.chars().any(|c| c.is_ascii_alphabetic()) {
                return Err(bad("has no unit"));
            }
            match ByteSize::from_str(entry) {
                Ok(size) if size.as_u64() > 0 => Ok(size.as_u64()),
                Ok(_) => Err(bad("is zero bytes")),
                Err(_) => Err(bad("is not a memory size")),
            }
        })
        .collect()
}

/// A `CUDA_VISIBLE_DEVICES` value → the physical ordinals visible, in their new order.
///
/// As with the driver, a negative entry ends the list (`-1` hides every GPU, `1,-1,0` shows only
/// GPU 1). The driver also silently drops everything from the first invalid entry on; that is
/// almost always a mistake, so here it is an error that names the entry.
fn parse_visible(value: &str, physical: usize) -> Result<Vec<usize>> {
    if value.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut order: Vec<usize> = Vec::new();
    for entry in value.split(',').map(str::trim) {
        let bad = |why: String| config_error(VISIBLE_DEVICES_VAR, value, why);
        let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        if entry.strip_prefix('-').is_some_and(digits) {
            break;
        }
        let ordinal = Some(entry)
            .filter(|entry| digits(entry))
            .and_then(|entry| entry.parse::<usize>().ok())
            .ok_or_else(|| {
                bad(format!(
                    "{entry:?} is not a GPU ordinal; simulated GPUs are named by ordinal only \
                     (no UUIDs or MIG ids), for example `CUDA_VISIBLE_DEVICES=1,0`, and `-1` \
                     hides them all"
                ))
            })?;
        if ordinal >= physical {
            let defined = match physical {
                1 => "1 GPU".to_owned(),
                n => format!("{n} GPUs"),
            };
            return Err(bad(format!(
                "GPU {ordinal} does not exist: {SIMULATED_GPUS_VAR} defines {defined}"
            )));
        }
        if order.contains(&ordinal) {
            return Err(bad(format!("GPU {ordinal} is listed twice")));
        }
        order.push(ordinal);
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BackendDevice;

    const GIB: u64 = 1 << 30;

    #[test]
    fn sizes_parse_in_binary_and_decimal_units() {
        assert_eq!(
            parse_sizes("24GiB, 80GiB").unwrap(),
            vec![24 * GIB, 80 * GIB]
        );
        assert_eq!(parse_sizes("512MiB").unwrap(), vec![512 << 20]);
        assert_eq!(parse_sizes("1GB").unwrap(), vec![1_000_000_000]);
        assert_eq!(parse_sizes("").unwrap(), Vec::<u64>::new());
    }

    #[test]
    fn malformed_sizes_name_the_entry() {
        for (spec, why) in [
            ("24GiB,lots", "entry 1 (\"lots\") is not a memory size"),
            ("24", "entry 0 (\"24\") has no unit"),
            ("24GiB,,8GiB", "entry 1 (\"\") has no unit"),
            ("0GiB", "is zero bytes"),
        ] {
            let msg = parse_sizes(spec).unwrap_err().to_string();
            assert!(msg.contains(why), "{spec}: {msg}");
            assert!(
                msg.contains("PLACEMENT_SIMULATED_GPUS") && msg.contains("24GiB,24GiB"),
                "{msg}"
            );
        }
    }

    #[test]
    fn visible_devices_renumber_from_zero() {
        assert_eq!(parse_visible("2,0", 3).unwrap(), vec![2, 0]);
        assert_eq!(parse_visible("", 3).unwrap(), Vec::<usize>::new());
        let Gpus::Simulated { gpus, .. } = from_spec("1GiB,2GiB,3GiB", Some("2,0")).unwrap() else {
            panic!("expected simulated GPUs")
        };
        assert_eq!(gpus.len(), 2);
        assert_eq!(gpus[0].tracker().limit(), Some(3 * GIB));
        assert_eq!(gpus[0].name().unwrap(), "simulated GPU 2 (3.0 GiB)");
        assert_eq!(gpus[1].tracker().limit(), Some(GIB));
    }

    #[test]
    fn a_negative_entry_ends_the_list_as_in_the_driver() {
        assert_eq!(parse_visible("-1", 3).unwrap(), Vec::<usize>::new());
        assert_eq!(parse_visible(" -1 ", 3).unwrap(), Vec::<usize>::new());
        assert_eq!(parse_visible("1,-1,0", 3).unwrap(), vec![1]);
        assert_eq!(parse_visible("2,-7,not-read", 3).unwrap(), vec![2]);
        let Gpus::Simulated { gpus, .. } = from_spec("1GiB,2GiB", Some("-1")).unwrap() else {
            panic!("expected simulated GPUs")
        };
        assert!(gpus.is_empty());
    }

    #[test]
    fn malformed_visible_devices_are_errors() {
        for (value, why) in [
            ("0,5", "GPU 5 does not exist"),
            ("0,0", "listed twice"),
            ("GPU-8f6c", "is not a GPU ordinal"),
            ("+1", "is not a GPU ordinal"),
            ("-x", "is not a GPU ordinal"),
        ] {
            let msg = parse_visible(value, 2).unwrap_err().to_string();
            assert!(
                msg.contains(why) && msg.contains("CUDA_VISIBLE_DEVICES"),
                "{value}: {msg}"
            );
        }
    }
}
