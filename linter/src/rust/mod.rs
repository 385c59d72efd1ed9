//! The Rust front end: reading and parsing files with `syn` ([`parse`]), the workspace model of
//! every crate's modules, items and re-exports built from a lexer's summary of each file
//! ([`model`]) and where each file is in it ([`workspace`]), and the walk that resolves each file against it and reports [`Event`]s
//! ([`resolve`]), from a skeleton of a big file whose function bodies are parsed one by one
//! ([`skeleton`]).
//!
//! [`Event`]: crate::analysis::Event

pub mod model;
pub mod parse;
pub mod resolve;
pub mod skeleton;
pub mod workspace;
