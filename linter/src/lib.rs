//! `cargo placement`: a static placement linter for Rust tensor programs and PyTorch code.
//!
//! One design with two front ends. The modules are layers, each using only those listed
//! before it:
//! - [`source`]: languages, file roles, text and positions, limits, what could not be read;
//! - [`notebook`]: Jupyter notebooks read as one Python program, and their cells' positions;
//! - [`diagnostic`]: what a rule reports ([`diagnostic::Finding`], [`diagnostic::Rule`],
//!   [`diagnostic::Level`]);
//! - [`api`]: what each library's calls mean for placement, as one table per library;
//! - [`analysis`]: the vocabulary both front ends report in ([`analysis::Event`]) and the
//!   facts one file tells the others;
//! - [`rules`]: one file per rule, wording events as findings;
//! - [`config`]: `placement.toml`, `[workspace.metadata.placement]`, `[tool.placement]`;
//! - [`discover`]: which files, in which package, with which configuration (through
//!   `cargo metadata` or the manifests, never building anything);
//! - [`rust`] and [`python`]: the front ends, each parsing its files, modelling what names
//!   mean across the project and walking each file into events;
//! - [`project`]: the driver (the passes, the facts decided across files, the thread pool,
//!   suppressions and levels applied last);
//! - [`report`] and [`baseline`]: the formats for people (miette) and tools (cargo JSON,
//!   SARIF, GitHub annotations), and accepted findings;
//! - [`server`]: `placement server`, the linter as a language server for editors;
//! - [`cli`]: the command line both binaries run (`cargo placement` and `placement`).

pub mod source;

pub mod notebook;

pub mod diagnostic;

pub mod api;

pub mod analysis;

pub mod rules;

pub mod config;

pub mod discover;

pub mod python;
pub mod rust;

pub mod project;

pub mod baseline;
pub mod report;

pub mod server;

pub mod cli;

#[cfg(test)]
mod fixtures;

/// Declares the allocator of a binary of the linter (its two commands, its benches): jemalloc, as
/// ruff ships it, with one arena: the files each thread parses and frees are many, and an arena
/// for each thread keeps what it freed from the others (a whole run over candle, burn, tch-rs and
/// cudarc peaked at 196-202 MiB with an arena for each thread, 143-155 MiB with one). The
/// system's allocator on Windows.
#[macro_export]
macro_rules! global_allocator {
    () => {
        #[cfg(not(windows))]
        #[global_allocator]
        static ALLOCATOR: $crate::jemalloc::Jemalloc = $crate::jemalloc::Jemalloc;

        /// jemalloc's options, read when it starts.
        #[cfg(not(windows))]
        #[unsafe(export_name = "_rjem_malloc_conf")]
        static MALLOC_CONF: &[u8; 10] = b"narenas:1\0";
    };
}

#[cfg(not(windows))]
#[doc(hidden)]
pub use tikv_jemallocator as jemalloc;
