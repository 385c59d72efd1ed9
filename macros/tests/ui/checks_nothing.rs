use placement::device_check;

#[device_check]
fn label(steps: usize, name: &str) -> String {
    format!("{name}: {steps}")
}

fn main() {}
