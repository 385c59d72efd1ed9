//! Without simulated GPUs and without the CUDA driver, asking for a GPU is an error value, never
//! a panic (cudarc itself panics when libcuda is missing). On a machine with a GPU this binary
//! checks that the real GPUs were found instead.

use placement::{Device, Error, Selection, Tensor, implicit};

#[test]
fn gpus_without_a_driver_are_errors() {
    // SAFETY: this binary's only test clears the variable before anything else runs.
    unsafe { std::env::remove_var("PLACEMENT_SIMULATED_GPUS") };
    // SAFETY: only probes whether the shared library can be loaded.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        assert!(
            placement::device_count().unwrap() > 0,
            "libcuda is present but saw no GPU"
        );
        return;
    }
    assert_eq!(placement::device_count().unwrap(), 0);
    assert_eq!(placement::devices().unwrap(), vec![]);
    // As in PyTorch, the current GPU of a machine without one is an error, not the CPU.
    assert!(matches!(
        implicit::default_device(),
        Err(Error::NoGpu {
            device: Device::Cuda(0),
            ..
        })
    ));
    assert!(matches!(
        implicit::current_device(),
        Err(Error::NoGpu { .. })
    ));

    let err = Tensor::zeros(&[2], &Device::Cuda(0)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::NoGpu {
                device: Device::Cuda(0),
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "cuda:0 was requested, but no GPU is available: the CUDA driver library (libcuda.so) was \
         not found; use `Device::Cpu`, or simulate GPUs with PLACEMENT_SIMULATED_GPUS=24GiB,24GiB"
    );
    let x = Tensor::ones(&[2], &Device::Cpu).unwrap();
    assert!(matches!(
        x.to_device(&Device::Cuda(0)),
        Err(Error::NoGpu { .. })
    ));
    assert!(matches!(
        implicit::set_device(Device::Cuda(0)),
        Err(Error::NoGpu { .. })
    ));
    assert!(matches!(
        placement::synchronize(&Device::Cuda(1)),
        Err(Error::NoGpu { .. })
    ));
    assert!(matches!(
        placement::mem_get_info(&Device::Cuda(0)),
        Err(Error::NoGpu { .. })
    ));
    let err = placement::select_device(&Selection::MostFreeMemory).unwrap_err();
    assert!(
        err.to_string()
            .contains("no GPU is visible (the CUDA driver library"),
        "{err}"
    );
    // `.cuda()` fails as PyTorch's does, instead of leaving the tensor on the CPU.
    assert!(matches!(x.cuda(), Err(Error::NoGpu { .. })));
    // A current device set explicitly is used as it is.
    implicit::set_device(Device::Cpu).unwrap();
    assert_eq!(implicit::current_device(), Ok(Device::Cpu));
    assert_eq!(x.cuda().unwrap().device(), Device::Cpu);
}
