//! `cargo placement`: lints device placement in Rust tensor programs and PyTorch code.

fn main() -> std::process::ExitCode {
    cargo_placement::cli::main(true)
}
