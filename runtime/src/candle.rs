//! `Placed` for candle tensors (the `candle` feature), so candle model code can use
//! `#[device_check]` and `#[derive(Placed)]`.

use candle_core::DeviceLocation;

use crate::{Device, Error, Movable, Moved, Placed, Result, TensorPath};

/// Our name for a candle device; Metal devices have none, and are not checked.
fn device_of(tensor: &candle_core::Tensor) -> Option<Device> {
    match tensor.device().location() {
        DeviceLocation::Cpu => Some(Device::Cpu),
        DeviceLocation::Cuda { gpu_id } => Some(Device::Cuda(gpu_id)),
        DeviceLocation::Metal { .. } => None,
    }
}

fn candle_error(err: candle_core::Error) -> Error {
    Error::Library {
        library: "candle",
        message: err.to_string(),
    }
}

impl Placed for candle_core::Tensor {
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
        if let Some(device) = device_of(self) {
            visit(path, device);
        }
    }

    fn visit_tensors_mut(
        &mut self,
        path: &TensorPath<'_>,
        visit: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> Result<()>,
    ) -> Result<()> {
        visit(path, self)
    }
}

impl Movable for candle_core::Tensor {
    fn copy_to(&self, device: &Device) -> Result<Moved> {
        let target = match device {
            Device::Cpu => candle_core::Device::Cpu,
            Device::Cuda(ordinal) => {
                candle_core::Device::new_cuda(*ordinal).map_err(candle_error)?
            }
        };
        let copy = candle_core::Tensor::to_device(self, &target).map_err(candle_error)?;
        Ok(Moved::new(copy))
    }

    fn replace(&mut self, copy: Moved) -> std::result::Result<(), Moved> {
        *self = copy.downcast()?;
        Ok(())
    }
}
