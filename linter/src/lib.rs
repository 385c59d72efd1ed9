//! `cargo placement`: a static placement linter for Rust tensor programs.
//!
//! The pipeline (discover → parse → resolve → rules → report) is described in the project's
//! design notes; this crate is filled in by the linter work that follows the runtime.
