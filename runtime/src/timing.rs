//! Timing work on a device. Every device queues its work on one stream; an [`Event`] marks a
//! point in that stream (a CUDA event on a GPU, the host clock where work runs synchronously).

use crate::backend;
use crate::{Device, Error, Result};

/// A point in a device's stream of work.
#[derive(Debug)]
pub struct Event {
    device: Device,
    mark: backend::Event,
}

impl Event {
    /// Marks the point after all work queued on `device` so far.
    ///
    /// # Errors
    /// A device that does not exist, or a driver failure.
    pub fn record(device: &Device) -> Result<Event> {
        Ok(Event {
            device: *device,
            mark: backend::get(device)?.record_event()?,
        })
    }

    /// The device whose stream this event marks.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Milliseconds of device time from this event to `end`, waiting for `end` to complete.
    ///
    /// # Errors
    /// [`Error::EventDevices`] when the events mark different devices, or a driver failure.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        let different = Error::EventDevices {
            start: self.device,
            end: end.device,
        };
        if self.device != end.device {
            return Err(different);
        }
        backend::get(&self.device)?
            .elapsed_ms(&self.mark, &end.mark)
            .unwrap_or(Err(different))
    }
}
