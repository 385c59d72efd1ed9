//! Baselines, for adopting the linter on a big codebase: `--write-baseline FILE` records
//! today's findings, `--baseline FILE` reports only the others. Findings are matched by rule,
//! file, enclosing item and their own source text (see [`crate::project::locate`]), never by line, so a
//! baseline survives edits elsewhere in a file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::project::Outcome;
use crate::project::locate::FindingKey;

/// Bumped when the file's meaning changes; a baseline of another format is refused.
const FORMAT: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BaselineFile {
    tool: String,
    format: u32,
    version: String,
    findings: Vec<Recorded>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Recorded {
    #[serde(flatten)]
    key: FindingKey,
    /// How many findings share this key.
    count: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("cannot read the baseline {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the baseline {path} is not a cargo-placement baseline ({reason}); write a new one with --write-baseline"
    )]
    Corrupt { path: PathBuf, reason: String },
    #[error(
        "the baseline {path} was written by cargo-placement {version} (format {format}); this is {} \
         (format {FORMAT}): write a new one with --write-baseline",
        env!("CARGO_PKG_VERSION")
    )]
    OtherVersion {
        path: PathBuf,
        version: String,
        format: u32,
    },
    #[error("cannot write the baseline {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A loaded baseline: how many findings of each key it accepts.
#[derive(Debug, Default)]
pub struct Baseline {
    remaining: HashMap<FindingKey, usize>,
}

impl Baseline {
    pub fn load(path: &Path) -> Result<Baseline, BaselineError> {
        let text = std::fs::read_to_string(path).map_err(|source| BaselineError::Read {
            path: path.to_owned(),
            source,
        })?;
        let file: BaselineFile =
            serde_json::from_str(&text).map_err(|err| BaselineError::Corrupt {
                path: path.to_owned(),
                reason: err.to_string(),
            })?;
        if file.tool != "cargo-placement" {
            return Err(BaselineError::Corrupt {
                path: path.to_owned(),
                reason: format!("it was written by `{}`", file.tool),
            });
        }
        if file.format != FORMAT || file.version != env!("CARGO_PKG_VERSION") {
            return Err(BaselineError::OtherVersion {
                path: path.to_owned(),
                version: file.version,
                format: file.format,
            });
        }
        let remaining = file
            .findings
            .into_iter()
            .map(|recorded| (recorded.key, recorded.count))
            .collect();
        Ok(Baseline { remaining })
    }

    /// Drops the findings the baseline accepts from `outcome`; returns how many.
    pub fn apply(mut self, outcome: &mut Outcome) -> usize {
        let mut baselined = 0;
        for file in &mut outcome.files {
            let keys = file.keys();
            let mut keys = keys.into_iter();
            file.diagnostics.retain(|_| {
                let key = keys.next().expect("one key per diagnostic");
                match self.remaining.get_mut(&key) {
                    Some(count) if *count > 0 => {
                        *count -= 1;
                        baselined += 1;
                        false
                    }
                    _ => true,
                }
            });
        }
        outcome.files.retain(|file| !file.diagnostics.is_empty());
        baselined
    }
}

/// Records every finding of `outcome` in `path`.
pub fn write(outcome: &Outcome, path: &Path) -> Result<usize, BaselineError> {
    let mut counts: HashMap<FindingKey, usize> = HashMap::new();
    for file in &outcome.files {
        for key in file.keys() {
            *counts.entry(key).or_default() += 1;
        }
    }
    let mut findings: Vec<Recorded> = counts
        .into_iter()
        .map(|(key, count)| Recorded { key, count })
        .collect();
    findings.sort_by(|a, b| a.key.cmp(&b.key));
    let total = findings.iter().map(|recorded| recorded.count).sum();
    let file = BaselineFile {
        tool: "cargo-placement".to_owned(),
        format: FORMAT,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        findings,
    };
    let text = serde_json::to_string_pretty(&file).expect("a baseline serializes");
    crate::source::replace_whole(path, (text + "\n").as_bytes()).map_err(|source| {
        BaselineError::Write {
            path: path.to_owned(),
            source,
        }
    })?;
    Ok(total)
}
