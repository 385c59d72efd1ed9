//! The PyTorch-style implicit API: a per-thread *current device* that code can change and read.
//!
//! It is kept beside the explicit API for two reasons: so that the cost of implicit placement
//! and of its fix can be measured side by side, and so that `cargo placement` has real code to
//! flag. New code should pass a [`Device`] explicitly instead.
//!
//! As with CUDA's current device, the setting belongs to the calling thread: a new thread
//! starts at [`default_device`], whatever its parent had set. As in PyTorch, asking for the
//! current GPU where there is none is an error, never a silent fall back to the CPU.

use std::cell::Cell;
use std::marker::PhantomData;

use crate::{Device, Result, Tensor, backend};

thread_local! {
    static CURRENT: Cell<Option<Device>> = const { Cell::new(None) };
}

/// Where a thread starts: `cuda:0`.
///
/// # Errors
/// Why there is no `cuda:0`: [`crate::Error::NoGpu`] without a GPU,
/// [`crate::Error::DeviceOutOfRange`] when none is visible, [`crate::Error::GpuConfig`] for a
/// malformed `PLACEMENT_SIMULATED_GPUS` or `CUDA_VISIBLE_DEVICES`.
pub fn default_device() -> Result<Device> {
    let device = Device::Cuda(0);
    backend::check(&device)?;
    Ok(device)
}

/// This thread's current device (like `torch.cuda.current_device()`): the last one set on this
/// thread, else [`default_device`].
///
/// # Errors
/// As [`default_device`], when no device was set on this thread.
pub fn current_device() -> Result<Device> {
    CURRENT.get().map_or_else(default_device, Ok)
}

/// Makes `device` this thread's current device (like `torch.cuda.set_device`). Prefer passing
/// devices explicitly, or [`DeviceGuard`] for a scoped change.
///
/// # Errors
/// When `device` does not exist: [`crate::Error::NoGpu`], [`crate::Error::DeviceOutOfRange`].
pub fn set_device(device: Device) -> Result<()> {
    backend::check(&device)?;
    CURRENT.set(Some(device));
    Ok(())
}

/// Makes a device current until the guard drops, then restores the previous one, also when
/// unwinding from a panic (like `with torch.cuda.device(n):`).
///
/// The guard restores the thread it was made on, so it cannot be sent to another thread.
#[derive(Debug)]
#[must_use = "the previous device is restored as soon as the guard is dropped"]
pub struct DeviceGuard {
    previous: Option<Device>,
    _not_send: PhantomData<*const ()>,
}

impl DeviceGuard {
    /// Makes `device` current for the guard's lifetime.
    ///
    /// # Errors
    /// As [`set_device`]; the current device is unchanged then.
    pub fn new(device: Device) -> Result<DeviceGuard> {
        let previous = CURRENT.get();
        set_device(device)?;
        Ok(DeviceGuard {
            previous,
            _not_send: PhantomData,
        })
    }
}

impl Drop for DeviceGuard {
    fn drop(&mut self) {
        CURRENT.set(self.previous);
    }
}

impl Tensor {
    /// This tensor on the thread's [`current_device`] (like PyTorch's `.cuda()`): where it goes
    /// depends on whatever code ran before on this thread. Prefer [`Tensor::to_device`].
    ///
    /// # Errors
    /// As [`current_device`] (no GPU, or a malformed GPU configuration), or the move's.
    pub fn cuda(&self) -> Result<Tensor> {
        self.to_device(&current_device()?)
    }
}
