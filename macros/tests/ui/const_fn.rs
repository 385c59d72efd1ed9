use placement::device_check;

#[device_check]
const fn size(x: &[u8]) -> usize {
    x.len()
}

fn main() {}
