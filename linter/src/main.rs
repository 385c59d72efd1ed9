//! `cargo placement`: lints device placement in Rust tensor programs and PyTorch code.

cargo_placement::global_allocator!();

fn main() -> std::process::ExitCode {
    cargo_placement::cli::main(true)
}
