//! Explicit-device f32 tensors on CUDA (through cudarc), the CPU and simulated GPUs.
//!
//! Every [`Tensor`] lives on the [`Device`] it was created on or moved to; ops never move data
//! on their own, and operands on different devices are an [`Error::DeviceMismatch`] that names
//! the op and both devices. The PyTorch-style current-device API is kept in [`implicit`] for
//! comparison.
//!
//! GPUs are real ones when the CUDA driver is present, or simulated ones when
//! `PLACEMENT_SIMULATED_GPUS` is set (see [`simulated`]), so that multi-GPU code can be tested
//! on any machine.
//!
//! ```
//! use placement::{Device, Tensor};
//!
//! # fn main() -> placement::Result<()> {
//! let cpu = Device::Cpu;
//! let x = Tensor::from_slice(&[1.0, -2.0, 3.0, -4.0], &[2, 2], &cpu)?;
//! let w = Tensor::ones(&[2, 2], &cpu)?;
//! let y = (&x.matmul(&w)? + &x)?.relu()?;
//! assert_eq!(y.to_vec()?, vec![0.0, 0.0, 2.0, 0.0]);
//! # Ok(())
//! # }
//! ```

// The macros' expansions name `::placement`, also inside this crate's own tests.
extern crate self as placement;

mod backend;
#[cfg(feature = "candle")]
mod candle;
mod check;
mod device;
mod discovery;
mod error;
pub mod implicit;
mod memory;
mod placed;
mod shape;
mod tensor;
pub mod timing;
mod transfer;

pub use backend::simulated;
pub use backend::{device_count, synchronize};
pub use check::{__private, CheckMode, DeviceCheckError, set_check_mode};
pub use device::{Device, ParseDeviceError};
pub use discovery::{DeviceInfo, Selection, devices, select_device};
pub use error::{Error, Result};
pub use memory::{max_memory_allocated, mem_get_info, memory_allocated, reset_peak_memory_stats};
pub use placed::{Movable, Moved, Placed, Segment, TensorPath};
pub use placement_macros::{Placed, device_check};
pub use tensor::Tensor;
pub use transfer::TransferMode;

// The README's Rust examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
