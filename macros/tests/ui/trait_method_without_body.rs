use placement::{Tensor, device_check};

trait Forward {
    #[device_check]
    fn forward(&self, x: &Tensor) -> placement::Result<Tensor>;
}

fn main() {}
