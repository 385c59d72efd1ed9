//! `cargo placement`: a static placement linter for Rust tensor programs.
//!
//! The pipeline runs in one direction: [`discover`] finds packages, targets and files (through
//! `cargo metadata`, never building anything); each file is parsed with `syn` and walked once by
//! [`resolve`], which resolves paths through imports, renames and local items and reports every
//! use of a known API ([`api`]); the [`rules`] turn those into findings; [`report`] prints them
//! for people (miette) or tools (cargo JSON).

pub mod api;
pub mod baseline;
pub mod config;
pub mod discover;
#[cfg(test)]
mod fixtures;
pub mod locate;
pub mod parse;
pub mod report;
pub mod resolve;
pub mod rules;
pub mod suppress;

use std::path::Path;

use rayon::prelude::*;

use crate::config::Config;
use crate::discover::{FileUnit, Workspace};
use crate::parse::LineIndex;
use crate::resolve::FileContext;
use crate::rules::{Finding, Level};
use crate::suppress::Suppressions;

/// A finding with its level.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub finding: Finding,
    pub level: Level,
}

/// A linted file: its diagnostics, and its text when there is anything to show.
#[derive(Debug)]
pub struct LintedFile {
    pub unit: FileUnit,
    pub text: String,
    pub lines: LineIndex,
    pub diagnostics: Vec<Diagnostic>,
}

impl LintedFile {
    /// The baseline and fingerprint key of each diagnostic, in order.
    pub fn keys(&self) -> Vec<locate::FindingKey> {
        let spans: Vec<(&str, std::ops::Range<usize>)> = self
            .diagnostics
            .iter()
            .map(|d| (d.finding.rule, d.finding.span.clone()))
            .collect();
        locate::keys(&self.unit.relative, &self.text, &spans)
    }
}

/// The result of a run.
#[derive(Debug)]
pub struct Outcome {
    pub workspace: Workspace,
    /// Files with diagnostics, in path order.
    pub files: Vec<LintedFile>,
    pub files_linted: usize,
    /// Findings dropped because a baseline accepts them.
    pub baselined: usize,
    /// Problems of the run itself (unknown rule names, unreadable files), for stderr.
    pub warnings: Vec<String>,
}

impl Outcome {
    pub fn count(&self, level: Level) -> usize {
        self.files
            .iter()
            .flat_map(|file| &file.diagnostics)
            .filter(|d| d.level == level)
            .count()
    }
}

/// Lints one file's text: parse, resolve, check.
pub fn lint_text(text: &str, cx: &FileContext<'_>) -> Vec<Finding> {
    let findings = match parse::parse(text) {
        Ok(file) => rules::check(&resolve::walk(&file, cx)),
        Err(error) => vec![rules::parse_error(&error)],
    };
    // Spans are offsets into a per-thread source map that only grows; every span of this file
    // has been turned into a byte range, so the map can start afresh and memory stays bounded.
    proc_macro2::extra::invalidate_current_thread_spans();
    findings
}

/// Lints the files of a workspace in parallel, keeping only what is reported.
pub fn lint(mut workspace: Workspace, config: &Config) -> Result<Outcome, discover::DiscoverError> {
    let units = workspace.files(|relative| config.excluded(relative))?;
    Ok(lint_files(workspace, config, units, &|| {}))
}

/// Lints the given files of a workspace in parallel, calling `on_file` as each is done.
pub fn lint_files(
    mut workspace: Workspace,
    config: &Config,
    units: Vec<FileUnit>,
    on_file: &(dyn Fn() + Sync),
) -> Outcome {
    let files_linted = units.len();
    let results: Vec<(Option<LintedFile>, Vec<String>)> = units
        .into_par_iter()
        .map(|unit| {
            let result = lint_unit(&workspace, config, unit);
            on_file();
            result
        })
        .collect();
    let mut warnings = std::mem::take(&mut workspace.warnings);
    warnings.extend(config.warnings.iter().cloned());
    let mut files = Vec::new();
    for (file, file_warnings) in results {
        warnings.extend(file_warnings);
        files.extend(file);
    }
    Outcome {
        workspace,
        files,
        files_linted,
        baselined: 0,
        warnings,
    }
}

fn lint_unit(
    workspace: &Workspace,
    config: &Config,
    unit: FileUnit,
) -> (Option<LintedFile>, Vec<String>) {
    let text = match std::fs::read(&unit.path) {
        Ok(bytes) => String::from_utf8(bytes)
            .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned()),
        Err(err) => {
            return (
                None,
                vec![format!("cannot read {}: {err}; skipped", unit.relative)],
            );
        }
    };
    let package = &workspace.packages[unit.package];
    let cx = FileContext {
        api: &config.api,
        krate: &package.krate,
        crate_name: &unit.crate_name,
        role: unit.role,
        module: unit.module.clone(),
        entry_points: &config.entry_points,
    };
    let findings = lint_text(&text, &cx);
    // Most files have no directive: look for one before parsing them all.
    let suppressions = if text.contains("placement:") {
        Suppressions::parse(&text)
    } else {
        Suppressions::default()
    };
    let warnings = suppressions
        .unknown
        .iter()
        .map(|(line, name)| {
            format!(
                "unknown rule `{name}` in a `placement: allow` comment at {}:{}",
                unit.relative,
                line + 1
            )
        })
        .collect();
    if findings.is_empty() {
        return (None, warnings);
    }
    let lines = LineIndex::new(&text);
    let mut diagnostics: Vec<Diagnostic> = findings
        .into_iter()
        .filter(|finding| !suppressions.allows(finding.rule, finding.span.start, &lines))
        .map(|finding| {
            let level = config.level(finding.rule, &package.name);
            Diagnostic { finding, level }
        })
        .filter(|diagnostic| diagnostic.level != Level::Allow)
        .collect();
    if diagnostics.is_empty() {
        return (None, warnings);
    }
    diagnostics.sort_by(|a, b| {
        (a.finding.span.start, a.finding.rule).cmp(&(b.finding.span.start, b.finding.rule))
    });
    diagnostics.dedup_by(|a, b| a.finding == b.finding);
    (
        Some(LintedFile {
            unit,
            text,
            lines,
            diagnostics,
        }),
        warnings,
    )
}

/// Discovers the workspace at `path` and loads its configuration.
pub fn prepare(
    path: &Path,
    config_file: Option<&Path>,
    cli: config::CliLevels,
) -> Result<(Workspace, Config), RunError> {
    let workspace = discover::locate(path)?;
    let source = config::load_workspace(config_file, &workspace.root, workspace.metadata.as_ref())?;
    let mut packages = Vec::new();
    for package in &workspace.packages {
        if let Some(value) = package.metadata.get("placement") {
            let name = format!(
                "[package.metadata.placement] of {}",
                package.manifest_path.display()
            );
            packages.push((
                package.name.clone(),
                name.clone(),
                config::ConfigFile::from_metadata(&name, value)?,
            ));
        }
    }
    let config = Config::new(source, packages, cli)?;
    Ok((workspace, config))
}

/// What stops a run before it lints anything.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Discover(#[from] discover::DiscoverError),
    #[error(transparent)]
    Config(#[from] config::ConfigError),
}
