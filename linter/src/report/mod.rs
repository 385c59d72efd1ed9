//! Printing findings: for people ([`human`]) and for tools ([`json`]), each as it is rendered
//! into a [`sink::Sink`] (or any `fmt::Write`).

pub mod github;
pub mod human;
pub mod json;
pub mod sarif;
pub mod short;
pub mod sink;

use crate::diagnostic::Level;

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
    /// `path:line:col: level[rule]: message`, one per line.
    Short,
    /// GitHub Actions annotations, shown on the pull request's diff.
    Github,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
}

impl MessageFormat {
    /// Whether the output is for a program, so nothing else may go to stdout.
    pub fn is_machine(self) -> bool {
        !matches!(self, MessageFormat::Human | MessageFormat::Short)
    }
}

/// rustc's name for a level.
pub fn rustc_level(level: Level) -> &'static str {
    match level {
        Level::Deny => "error",
        Level::Warn | Level::Allow => "warning",
    }
}
