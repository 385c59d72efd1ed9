use placement::{Placed, Tensor, device_check};

#[derive(Placed)]
struct Cached<T> {
    weight: Tensor,
    history: Vec<T>,
}

#[device_check]
fn forward(layer: &Cached<f32>, x: &Tensor) -> placement::Result<()> {
    let _ = (layer, x);
    Ok(())
}

fn main() {}
