use placement::{Placed, Tensor};

#[derive(Placed)]
struct Model {
    #[placed()]
    weight: Tensor,
}

fn main() {}
