//! Per-device memory accounting: what tensors hold now, the peak, and (for simulated GPUs) the
//! limit that the allocator enforces.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::{Device, Error, Result, backend};

/// The counters of one device. Every tensor's storage holds an [`Allocation`] against them.
#[derive(Debug)]
pub(crate) struct Tracker {
    device: Device,
    allocated: AtomicU64,
    peak: AtomicU64,
    /// Enforced by [`Tracker::allocate`]; `None` where the driver enforces its own.
    limit: Option<u64>,
}

impl Tracker {
    pub(crate) const fn new(device: Device, limit: Option<u64>) -> Self {
        Tracker {
            device,
            allocated: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            limit,
        }
    }

    pub(crate) fn device(&self) -> Device {
        self.device
    }

    pub(crate) fn allocated(&self) -> u64 {
        self.allocated.load(Ordering::Acquire)
    }

    pub(crate) fn limit(&self) -> Option<u64> {
        self.limit
    }

    /// Reserves `bytes`, failing with [`Error::OutOfMemory`] past the limit.
    pub(crate) fn allocate(&'static self, bytes: u64) -> Result<Allocation> {
        let mut current = self.allocated();
        loop {
            let next = current.saturating_add(bytes);
            if let Some(limit) = self.limit
                && next > limit
            {
                return Err(Error::OutOfMemory {
                    device: self.device,
                    requested: bytes,
                    free: Some(limit.saturating_sub(current)),
                    total: Some(limit),
                });
            }
            match self.allocated.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    self.peak.fetch_max(next, Ordering::AcqRel);
                    return Ok(Allocation {
                        tracker: self,
                        bytes,
                    });
                }
                Err(actual) => current = actual,
            }
        }
    }
}

/// Bytes held against a device's [`Tracker`], given back on drop.
#[derive(Debug)]
pub(crate) struct Allocation {
    tracker: &'static Tracker,
    bytes: u64,
}

impl Drop for Allocation {
    fn drop(&mut self) {
        self.tracker
            .allocated
            .fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// Bytes currently held by tensors on `device` (like `torch.cuda.memory_allocated`).
pub fn memory_allocated(device: &Device) -> Result<u64> {
    Ok(backend::tracker(device)?.allocated())
}

/// The most bytes held at once on `device` since the start or the last
/// [`reset_peak_memory_stats`] (like `torch.cuda.max_memory_allocated`).
pub fn max_memory_allocated(device: &Device) -> Result<u64> {
    Ok(backend::tracker(device)?.peak.load(Ordering::Acquire))
}

/// Starts peak tracking on `device` afresh from what is allocated now.
pub fn reset_peak_memory_stats(device: &Device) -> Result<()> {
    let tracker = backend::tracker(device)?;
    tracker.peak.store(tracker.allocated(), Ordering::Release);
    Ok(())
}

/// Free and total bytes of a GPU, as `cudaMemGetInfo` reports them (for a simulated GPU: its
/// limit less what tensors hold). The CPU has no device memory to report: [`Error::NotAGpu`].
pub fn mem_get_info(device: &Device) -> Result<(u64, u64)> {
    backend::mem_get_info(device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_is_enforced_and_freed_on_drop() {
        static TRACKER: Tracker = Tracker::new(Device::Cuda(9), Some(100));
        let a = TRACKER.allocate(60).unwrap();
        let err = TRACKER.allocate(50).unwrap_err();
        assert_eq!(
            err,
            Error::OutOfMemory {
                device: Device::Cuda(9),
                requested: 50,
                free: Some(40),
                total: Some(100)
            }
        );
        let msg = err.to_string();
        assert!(
            msg.contains("cuda:9") && msg.contains("50 B") && msg.contains("40 B"),
            "{msg}"
        );
        drop(a);
        assert_eq!(TRACKER.allocated(), 0);
        let _b = TRACKER.allocate(100).unwrap();
        assert_eq!(TRACKER.peak.load(Ordering::Acquire), 100);
    }
}
