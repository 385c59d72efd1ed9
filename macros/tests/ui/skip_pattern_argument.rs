use placement::{Tensor, device_check};

#[device_check(skip(pair))]
fn add((a, b): (Tensor, Tensor), scale: &Tensor) -> placement::Result<Tensor> {
    a.add(&b)?.mul(scale)
}

#[device_check(skip(self))]
fn free(x: &Tensor, y: &Tensor) -> placement::Result<Tensor> {
    x.add(y)
}

fn main() {}
