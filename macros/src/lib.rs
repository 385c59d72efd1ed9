//! Procedural macros of the placement runtime: `#[device_check]` and `#[derive(Placed)]`.
//!
//! Use them through the runtime's re-exports (`placement::device_check`, `placement::Placed`)
//! once they land; this crate has no macros yet.
