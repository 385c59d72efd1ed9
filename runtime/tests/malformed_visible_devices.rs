//! A malformed `CUDA_VISIBLE_DEVICES` for simulated GPUs is an error on every GPU use, the
//! implicit API's included, never a quiet fall back to the CPU. One test: the environment is
//! read once per process.

use placement::{Device, Error, Tensor, implicit};

#[test]
fn malformed_visible_devices_are_reported_by_the_implicit_api() {
    // SAFETY: this binary's only test sets the variables before anything else runs.
    unsafe {
        std::env::set_var("PLACEMENT_SIMULATED_GPUS", "1GiB,1GiB");
        std::env::set_var("CUDA_VISIBLE_DEVICES", "GPU-8f6c");
    }
    let err = implicit::current_device().unwrap_err();
    assert!(
        matches!(
            err,
            Error::GpuConfig {
                variable: "CUDA_VISIBLE_DEVICES",
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("\"GPU-8f6c\" is not a GPU ordinal"),
        "{err}"
    );
    let x = Tensor::ones(&[2], &Device::Cpu).unwrap();
    assert_eq!(x.cuda().unwrap_err(), err);
    assert_eq!(placement::device_count().unwrap_err(), err);
}
