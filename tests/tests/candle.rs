//! candle tensors under `#[device_check]` and `#[derive(Placed)]`, through the runtime's
//! `candle` feature. candle builds here without CUDA, so its tensors are on the CPU; mixing
//! them with the runtime's simulated GPUs gives the mismatches.

use candle_core::{DType, Tensor};
use placement::{Device, DeviceCheckError, Placed, device_check};

#[derive(Clone, Debug, Placed)]
struct Linear {
    weight: Tensor,
    bias: Tensor,
}

impl Linear {
    fn new() -> candle_core::Result<Linear> {
        let cpu = candle_core::Device::Cpu;
        Ok(Linear {
            weight: Tensor::ones((3, 2), DType::F32, &cpu)?,
            bias: Tensor::zeros(2, DType::F32, &cpu)?,
        })
    }

    /// candle's own error type has no `From<DeviceCheckError>`: a mismatch panics.
    #[device_check]
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        x.matmul(&self.weight)?.broadcast_add(&self.bias)
    }
}

#[derive(Debug)]
enum ModelError {
    Placement(DeviceCheckError),
}

impl From<DeviceCheckError> for ModelError {
    fn from(error: DeviceCheckError) -> Self {
        ModelError::Placement(error)
    }
}

/// A candle tensor next to one of the runtime's: both are checked.
#[device_check]
fn mixed(features: &Tensor, mask: &placement::Tensor) -> Result<usize, ModelError> {
    Ok(features.elem_count() + mask.elem_count())
}

#[test]
fn candle_models_are_checked_and_moved() {
    placement::simulated::configure("1GiB").expect("simulated GPU");
    let model = Linear::new().unwrap();
    assert_eq!(model.device("model"), Ok(Some(Device::Cpu)));
    let x = Tensor::ones((4, 3), DType::F32, &candle_core::Device::Cpu).unwrap();
    assert_eq!(model.forward(&x).unwrap().dims(), &[4, 2]);
    assert_eq!(
        model.to_device(&Device::Cpu).unwrap().device("model"),
        Ok(Some(Device::Cpu))
    );
    // candle was built without CUDA: moving to a GPU is candle's error, reported as such, at
    // the first tensor.
    let err = model.to_device(&Device::Cuda(0)).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot move `self.weight` to cuda:0, so nothing was moved: candle: "),
        "{err}"
    );

    let cpu_mask = placement::Tensor::ones(&[3], &Device::Cpu).unwrap();
    assert_eq!(mixed(&x, &cpu_mask).unwrap(), 15);
    let gpu_mask = placement::Tensor::ones(&[3], &Device::Cuda(0)).unwrap();
    match mixed(&x, &gpu_mask) {
        Err(ModelError::Placement(error)) => assert_eq!(
            error.to_string(),
            "device mismatch in mixed(features, mask): features is on cpu, mask is on cuda:0; \
             move mask with mask.to_device(&Device::Cpu)"
        ),
        Ok(count) => panic!("expected a device mismatch, got Ok({count})"),
    }
}
