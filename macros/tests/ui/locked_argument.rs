use std::sync::{Arc, Mutex, RwLock};

use placement::{Placed, Tensor, device_check};

#[device_check]
fn mutex(weight: &Mutex<Tensor>, x: &Tensor) -> placement::Result<()> {
    let _ = (weight, x);
    Ok(())
}

#[device_check]
fn shared(weights: Arc<RwLock<Vec<Tensor>>>, x: &Tensor) -> placement::Result<()> {
    let _ = (weights, x);
    Ok(())
}

#[derive(Placed)]
struct Model {
    weight: Mutex<Tensor>,
}

fn main() {}
