//! Inner attributes of the body stay inside it.
#![deny(warnings)]

use placement::{Device, Tensor, device_check};

#[device_check]
fn scale(x: &Tensor) -> placement::Result<Tensor> {
    #![allow(clippy::let_and_return)]
    let y = x.add(x);
    y
}

fn main() {
    let x = Tensor::ones(&[2], &Device::Cpu).unwrap();
    assert_eq!(scale(&x).unwrap().to_vec().unwrap(), vec![2.0, 2.0]);
}
