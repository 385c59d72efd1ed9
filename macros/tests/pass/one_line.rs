//! A checked function written on one line: no `unused_braces` warning.
#![deny(warnings)]

use placement::{Device, Tensor, device_check};

#[device_check] fn first(a: &Tensor, b: &Tensor) -> placement::Result<()> { let _ = (a, b); Ok(()) }

#[device_check] fn second(a: &Tensor) -> usize { a.elem_count() }

fn main() {
    let x = Tensor::ones(&[2], &Device::Cpu).unwrap();
    first(&x, &x).unwrap();
    assert_eq!(second(&x), 2);
}
