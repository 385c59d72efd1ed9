use placement::{Tensor, device_check};

#[device_check]
fn unbounded<T>(input: T, weight: &Tensor) -> placement::Result<()> {
    let _ = (input, weight);
    Ok(())
}

#[device_check]
fn converted(input: impl Into<Tensor>, weight: &Tensor) -> placement::Result<()> {
    let _ = (input.into(), weight);
    Ok(())
}

fn main() {}
