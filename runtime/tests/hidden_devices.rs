//! `CUDA_VISIBLE_DEVICES=-1` hides every GPU, as the CUDA driver reads it, so that a job told to
//! stay off the GPUs sees the same devices with simulated GPUs as on a real machine. The
//! environment is read once per process, so this binary holds a single test.

use placement::{Device, Error, Tensor, implicit};

#[test]
fn minus_one_hides_every_gpu() {
    // SAFETY: this binary's only test sets the variables before anything else runs.
    unsafe {
        std::env::set_var("PLACEMENT_SIMULATED_GPUS", "1GiB,1GiB");
        std::env::set_var("CUDA_VISIBLE_DEVICES", "-1");
    }
    assert_eq!(placement::device_count(), Ok(0));
    assert_eq!(placement::devices(), Ok(Vec::new()));
    let hidden = Error::DeviceOutOfRange {
        device: Device::Cuda(0),
        count: 0,
    };
    assert_eq!(Tensor::zeros(&[1], &Device::Cuda(0)).unwrap_err(), hidden);
    assert_eq!(
        hidden.to_string(),
        "cuda:0 does not exist: no GPU is visible; check CUDA_VISIBLE_DEVICES or list them with \
         `placement::devices()`"
    );
    assert_eq!(implicit::current_device(), Err(hidden.clone()));
    let x = Tensor::ones(&[2], &Device::Cpu).unwrap();
    assert_eq!(x.cuda().unwrap_err(), hidden);
}
