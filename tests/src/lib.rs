//! End-to-end tests across the placement crates live in this crate's `tests/` folder.
