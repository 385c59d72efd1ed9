//! `CUDA_VISIBLE_DEVICES` renumbers simulated GPUs as the driver renumbers real ones. The
//! environment is read once per process, so this binary holds a single test.

use placement::{Device, Error, Tensor};

#[test]
fn visible_devices_are_renumbered_from_zero() {
    // SAFETY: this binary's only test sets the variables before anything else runs.
    unsafe {
        std::env::set_var("PLACEMENT_SIMULATED_GPUS", "1GiB,2GiB,3GiB");
        std::env::set_var("CUDA_VISIBLE_DEVICES", "2,0");
    }
    let devices = placement::devices().unwrap();
    let names: Vec<_> = devices
        .iter()
        .map(|d| (d.device, d.name.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![
            (Device::Cuda(0), "simulated GPU 2 (3.0 GiB)"),
            (Device::Cuda(1), "simulated GPU 0 (1.0 GiB)"),
        ]
    );
    assert_eq!(
        placement::mem_get_info(&Device::Cuda(0)).unwrap().1,
        3 << 30
    );
    let err = Tensor::zeros(&[1], &Device::Cuda(2)).unwrap_err();
    assert_eq!(
        err,
        Error::DeviceOutOfRange {
            device: Device::Cuda(2),
            count: 2
        }
    );
}
