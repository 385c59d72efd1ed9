use placement::device_check;

#[device_check]
fn main() {}
