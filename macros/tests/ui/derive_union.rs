use placement::Placed;

#[derive(Placed)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
