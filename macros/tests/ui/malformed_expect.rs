use placement::{Tensor, device_check};

#[device_check(expect = "cuda")]
fn bare(x: &Tensor) {}

#[device_check(expect = "gpu:1")]
fn unknown(x: &Tensor) {}

#[device_check(expect = 0)]
fn number(x: &Tensor) {}

#[device_check(expect("cuda:0"))]
fn list(x: &Tensor) {}

fn main() {}
