use placement::{Placed, Tensor, device_check};

#[device_check(crate = 5)]
fn number(_x: &Tensor) {}

#[device_check(crate = "not a path")]
fn text(_x: &Tensor) {}

#[derive(Placed)]
#[placed(crate = "pl", skip)]
struct Model {
    weight: Tensor,
}

fn main() {}
