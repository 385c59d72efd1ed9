use placement::{Tensor, device_check};

#[device_check]
fn no_arguments() -> usize {
    0
}

#[device_check(skip(x, y))]
fn all_skipped(x: &Tensor, y: &Tensor) -> usize {
    x.elem_count() + y.elem_count()
}

fn main() {}
