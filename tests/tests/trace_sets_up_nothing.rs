//! `#[device_check(trace)]` reads the memory counters of the devices already set up, and sets up
//! no other: GPUs can still be configured after a traced call on the CPU. One test: the GPUs are
//! chosen once per process.

use placement::{Device, Tensor, device_check};

#[device_check(trace)]
fn double(x: &Tensor) -> placement::Result<Tensor> {
    x.add(x)
}

#[test]
fn a_traced_cpu_call_leaves_the_gpus_unconfigured() {
    let x = Tensor::ones(&[2], &Device::Cpu).unwrap();
    assert_eq!(double(&x).unwrap().to_vec().unwrap(), vec![2.0, 2.0]);
    placement::simulated::configure("1GiB").expect("no GPU was set up by the traced call");
    assert_eq!(placement::device_count(), Ok(1));
}
