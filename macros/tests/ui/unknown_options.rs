use placement::{Tensor, device_check};

#[device_check(verbose, expect = "cuda:0", retries = 3, expect = "cpu")]
fn linear(x: &Tensor, weight: &Tensor) -> placement::Result<Tensor> {
    x.matmul(weight)
}

fn main() {}
