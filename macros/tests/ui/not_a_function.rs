use placement::device_check;

#[device_check]
struct Linear {
    weight: placement::Tensor,
}

#[device_check]
impl Linear {}

fn main() {}
