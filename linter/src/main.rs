//! `cargo placement`: lints device placement in Rust tensor programs and PyTorch code.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main(true)
}
