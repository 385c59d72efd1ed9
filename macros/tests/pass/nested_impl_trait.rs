//! An `impl Trait` inside the return type: a mismatch is still returned as the error.
#![deny(warnings)]

use placement::{Device, Error, Tensor, device_check};

#[device_check]
fn values(x: &Tensor, y: &Tensor) -> placement::Result<impl Iterator<Item = f32>> {
    Ok(x.add(y)?.to_vec()?.into_iter())
}

#[device_check(output)]
fn pairs(x: &Tensor) -> placement::Result<(Tensor, impl Fn(f32) -> f32)> {
    Ok((x.clone(), |v| v * 2.0))
}

fn main() {
    placement::simulated::configure("1GiB").unwrap();
    let cpu = Tensor::ones(&[2], &Device::Cpu).unwrap();
    assert_eq!(values(&cpu, &cpu).unwrap().sum::<f32>(), 4.0);
    let gpu = Tensor::ones(&[2], &Device::Cuda(0)).unwrap();
    assert!(matches!(values(&cpu, &gpu), Err(Error::DeviceCheck(_))));
    let (tensor, double) = pairs(&cpu).unwrap();
    assert_eq!((tensor.device(), double(2.0)), (Device::Cpu, 4.0));
}
