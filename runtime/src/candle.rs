//! `Placed` for candle tensors (the `candle` feature), so candle model code can use
//! `#[device_check]` and `#[derive(Placed)]`.

use candle_core::DeviceLocation;

use crate::{Device, Error, Placed, Result, TensorPath};

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

    fn move_tensors(&mut self, _: &TensorPath<'_>, device: &Device) -> Result<()> {
        let target = match device {
            Device::Cpu => candle_core::Device::Cpu,
            Device::Cuda(ordinal) => {
                candle_core::Device::new_cuda(*ordinal).map_err(candle_error)?
            }
        };
        *self = candle_core::Tensor::to_device(self, &target).map_err(candle_error)?;
        Ok(())
    }
}
