//! Timing work on a device. Every device queues its work on one stream; an [`Event`] marks a
//! point in that stream (a CUDA event on a GPU, the host clock where work runs synchronously).

use std::time::Instant;

use cudarc::driver::CudaEvent;

use crate::backend::cuda::CudaGpu;
use crate::backend::{self, Backend};
use crate::{Device, Error, Result};

/// A point in a device's stream of work.
#[derive(Debug)]
pub struct Event {
    device: Device,
    mark: Mark,
}

#[derive(Debug)]
enum Mark {
    Host(Instant),
    Cuda {
        gpu: &'static CudaGpu,
        event: CudaEvent,
    },
}

impl Event {
    /// Marks the point after all work queued on `device` so far.
    pub fn record(device: &Device) -> Result<Event> {
        let mark = match backend::get(device)? {
            Backend::Host(_) => Mark::Host(Instant::now()),
            Backend::Cuda(gpu) => Mark::Cuda {
                gpu,
                event: gpu.record_event()?,
            },
        };
        Ok(Event {
            device: *device,
            mark,
        })
    }

    /// The device whose stream this event marks.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Milliseconds of device time from this event to `end`, waiting for `end` to complete.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`] when the events mark different devices.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        match (&self.mark, &end.mark) {
            (Mark::Host(start), Mark::Host(stop)) if self.device == end.device => {
                Ok(stop.duration_since(*start).as_secs_f32() * 1e3)
            }
            (Mark::Cuda { gpu, event: start }, Mark::Cuda { event: stop, .. })
                if self.device == end.device =>
            {
                gpu.elapsed_ms(start, stop)
            }
            _ => Err(Error::DeviceMismatch {
                op: "elapsed_ms",
                lhs: self.device,
                rhs: end.device,
            }),
        }
    }
}
