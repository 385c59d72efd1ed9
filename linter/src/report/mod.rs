//! Printing findings: for people ([`human`]) and for tools ([`json`]).

pub mod human;
pub mod json;

use crate::rules::Level;

/// The `--message-format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MessageFormat {
    /// Rendered for people, like rustc.
    Human,
    /// One cargo `compiler-message` JSON object per line.
    Json,
    /// As `json`, with ANSI colours in the `rendered` field (rust-analyzer asks for this).
    #[value(name = "json-diagnostic-rendered-ansi")]
    JsonRenderedAnsi,
}

/// rustc's name for a level.
pub fn rustc_level(level: Level) -> &'static str {
    match level {
        Level::Deny => "error",
        Level::Warn | Level::Allow => "warning",
    }
}
