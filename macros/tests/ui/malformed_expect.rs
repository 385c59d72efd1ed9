use placement::{Tensor, device_check};

#[device_check(expect = "cuda")]
fn bare(_x: &Tensor) {}

#[device_check(expect = "gpu:1")]
fn unknown(_x: &Tensor) {}

#[device_check(expect = 0)]
fn number(_x: &Tensor) {}

#[device_check(expect("cuda:0"))]
fn list(_x: &Tensor) {}

fn main() {}
