use placement::{Placed, Tensor};

#[derive(Placed)]
struct Model {
    weight: Tensor,
    #[placed(skip = true)]
    cache: Tensor,
}

fn main() {}
