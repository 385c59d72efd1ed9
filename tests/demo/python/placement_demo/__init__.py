"""The demo's Python side: a model library, a training script and a test, linted with the
Rust crates by the same rules."""
