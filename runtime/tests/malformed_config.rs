//! A malformed `PLACEMENT_SIMULATED_GPUS` is an error on every GPU use, naming the variable and
//! the bad entry, while the CPU keeps working. One test: the environment is read once per process.

use placement::{Device, Error, Tensor, implicit};

#[test]
fn malformed_simulated_gpus_are_reported_and_cpu_still_works() {
    // SAFETY: this binary's only test sets the variable before anything else runs.
    unsafe { std::env::set_var("PLACEMENT_SIMULATED_GPUS", "24GiB,lots") };
    let err = Tensor::zeros(&[2], &Device::Cuda(0)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::GpuConfig {
                variable: "PLACEMENT_SIMULATED_GPUS",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "invalid PLACEMENT_SIMULATED_GPUS=\"24GiB,lots\": entry 1 (\"lots\") is not a memory \
         size; write one memory size per GPU, separated by commas, for example `24GiB,24GiB,80GiB`"
    );
    assert_eq!(placement::devices().unwrap_err(), err);
    assert_eq!(placement::device_count().unwrap_err(), err);
    assert_eq!(placement::simulated::configure("1GiB").unwrap_err(), err);
    assert_eq!(implicit::set_device(Device::Cuda(0)).unwrap_err(), err);

    // The implicit API reports the configuration instead of falling back to the CPU.
    assert_eq!(implicit::current_device().unwrap_err(), err);
    let x = Tensor::ones(&[2], &Device::Cpu).unwrap();
    assert_eq!(x.cuda().unwrap_err(), err);

    // Nothing GPU-related is needed for CPU work.
    assert_eq!((&x + &x).unwrap().to_vec().unwrap(), vec![2.0, 2.0]);
}
