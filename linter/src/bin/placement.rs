//! `placement`: the same linter as `cargo placement`, under the name Python users install with
//! pip (`pip install ./linter`) and run on a project without cargo: `placement [PATH]`.

cargo_placement::global_allocator!();

fn main() -> std::process::ExitCode {
    cargo_placement::cli::main(false)
}
