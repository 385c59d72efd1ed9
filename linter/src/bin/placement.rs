//! `placement`: the same linter as `cargo placement`, under the name Python users install with
//! pip (`pip install ./linter`) and run on a project without cargo: `placement [PATH]`.

#[path = "../cli.rs"]
mod cli;

fn main() -> std::process::ExitCode {
    cli::main(false)
}
