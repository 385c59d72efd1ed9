use placement::{Placed, Tensor};

#[derive(Placed)]
#[placed(skip)]
struct Model {
    #[placed(ignore)]
    weight: Tensor,
    #[placed(skip, rename = "b")]
    bias: Tensor,
}

fn main() {}
