//! The rules: one file each, one registry. A rule looks at the [`Event`]s the resolver found in
//! a file and turns some of them into [`Finding`]s. Its doc comment, in fixed sections, is what
//! `cargo placement explain RULE` prints.

mod device_mismatch;
mod hardcoded_device;
mod implicit_device;
mod late_visible_devices;
mod parse_error;
mod silent_cpu_fallback;
mod stray_set_device;
mod transfer_in_loop;

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use serde::Deserialize;

use crate::resolve::Event;

/// How a rule's findings are treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Not reported.
    Allow,
    /// Reported; the exit status stays 0.
    Warn,
    /// Reported; the exit status is 1.
    Deny,
}

impl FromStr for Level {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "allow" => Ok(Level::Allow),
            "warn" => Ok(Level::Warn),
            "deny" => Ok(Level::Deny),
            other => Err(format!(
                "`{other}` is not a level; use `allow`, `warn` or `deny`"
            )),
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Allow => "allow",
            Level::Warn => "warn",
            Level::Deny => "deny",
        })
    }
}

/// One finding of a rule, before its level and file are attached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static Rule,
    /// The exact tokens at fault.
    pub span: Range<usize>,
    /// What is wrong: short, lowercase, no final period, code in backticks.
    pub message: String,
    /// The primary label, on `span`.
    pub label: String,
    /// What to do instead.
    pub help: String,
    /// Other places that explain the finding.
    pub related: Vec<(Range<usize>, String)>,
    /// A replacement an editor can apply, where one is known.
    pub suggestion: Option<Suggestion>,
    /// What must hold, once every file is walked, for the finding to stand.
    pub requires: Option<Requirement>,
}

/// A condition on the rest of the crate, decided once every file is linted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// The finding is in the non-public function `helper` (as calls name it), which uses the
    /// current context without making one current: it stands unless the crate calls `helper`,
    /// and every caller made a context current first (or is such a helper itself).
    SomeCallerDoesNotBind { helper: String },
}

impl Finding {
    /// A finding of `rule` with no related places and no suggestion.
    pub fn new(
        rule: &'static Rule,
        span: Range<usize>,
        message: String,
        label: impl Into<String>,
        help: impl Into<String>,
    ) -> Finding {
        Finding {
            rule,
            span,
            message,
            label: label.into(),
            help: help.into(),
            related: Vec::new(),
            suggestion: None,
            requires: None,
        }
    }
}

/// A replacement for some source text, with rustc's applicability.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    pub span: Range<usize>,
    pub replacement: String,
    /// What it does, for the editor's quick-fix menu.
    pub message: String,
    pub applicability: Applicability,
}

/// rustc's applicability levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applicability {
    /// Certain: it can be applied without review.
    MachineApplicable,
    /// Probably what is wanted, but it changes behaviour or may not compile as is.
    MaybeIncorrect,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::MachineApplicable => "MachineApplicable",
            Applicability::MaybeIncorrect => "MaybeIncorrect",
        }
    }
}

/// A rule: its name, default level, documentation and check, declared together in the rule's
/// file with [`declare_rule!`].
pub struct Rule {
    pub name: &'static str,
    pub default_level: Level,
    /// The rule's doc comment: What it does / Why is this bad? / Example / Use instead /
    /// In Python / Known limits.
    pub doc: &'static str,
    /// Words an event of the analyses as a finding, or not. `None` for findings made before
    /// any analysis runs (`parse_error`).
    check: Option<fn(&Event<'_>, Language) -> Option<Finding>>,
}

/// The language of the file a finding is in, for the wording of its help: the hazards are the
/// same, the fixes are written in each language's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    Rust,
    Python,
}

impl Language {
    /// `rust` or `python` for Rust and Python.
    pub fn pick(self, rust: &'static str, python: &'static str) -> &'static str {
        match self {
            Language::Rust => rust,
            Language::Python => python,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A rule shows as its name: its documentation is for `explain`.
impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Rule({})", self.name)
    }
}

/// Rules are the same when they have the same name: there is one of each.
impl PartialEq for Rule {
    fn eq(&self, other: &Rule) -> bool {
        self.name == other.name
    }
}

impl Eq for Rule {}

impl Rule {
    /// The documentation as Markdown, without the doc comments' leading spaces.
    pub fn documentation(&self) -> String {
        self.doc
            .lines()
            .map(|line| line.strip_prefix(' ').unwrap_or(line))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The first sentence of "What it does", for short descriptions.
    pub fn summary(&self) -> String {
        let doc = self.documentation();
        let body = doc.split("## What it does").nth(1).unwrap_or(&doc);
        let paragraph = body
            .trim()
            .split("\n\n")
            .next()
            .unwrap_or_default()
            .replace('\n', " ");
        match paragraph.find(": ").or_else(|| paragraph.find(". ")) {
            Some(end) => paragraph[..end].to_owned(),
            None => paragraph.trim_end_matches('.').to_owned(),
        }
    }
}

/// Declares a rule once, in its own file: its doc comment (the documentation `explain` prints),
/// its name, its default level and the check that words events as findings.
///
/// ```ignore
/// declare_rule! {
///     /// ## What it does
///     /// ...
///     pub(crate) static HARDCODED_DEVICE = ("hardcoded_device", Warn, check);
/// }
/// ```
macro_rules! declare_rule {
    ($(#[doc = $doc:literal])* $vis:vis static $rule:ident = ($name:literal, $level:ident, $check:expr);) => {
        $(#[doc = $doc])*
        $vis static $rule: $crate::rules::Rule = $crate::rules::Rule {
            name: $name,
            default_level: $crate::rules::Level::$level,
            doc: concat!($($doc, "\n"),*),
            check: $check,
        };
    };
}
use declare_rule;

/// Every rule, sorted by name. Adding a rule is its file (declaration and check), a line here,
/// and, for a rule about something no analysis reports yet, an [`Event`] variant and the
/// analysis module (under `resolve/analysis/`) that emits it.
pub static RULES: &[&Rule] = &[
    &device_mismatch::DEVICE_MISMATCH,
    &hardcoded_device::HARDCODED_DEVICE,
    &implicit_device::IMPLICIT_DEVICE,
    &late_visible_devices::LATE_VISIBLE_DEVICES,
    &parse_error::PARSE_ERROR,
    &silent_cpu_fallback::SILENT_CPU_FALLBACK,
    &stray_set_device::STRAY_SET_DEVICE,
    &transfer_in_loop::TRANSFER_IN_LOOP,
];

pub fn find(name: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|rule| rule.name == name)
}

/// Every finding the rules make of the events of a file in `language`.
pub fn check(events: &[Event<'_>], language: Language) -> Vec<Finding> {
    events
        .iter()
        .flat_map(|event| check_event(event, language))
        .collect()
}

/// The findings the rules make of one event.
pub fn check_event<'e>(
    event: &'e Event<'_>,
    language: Language,
) -> impl Iterator<Item = Finding> + 'e {
    RULES
        .iter()
        .filter_map(move |rule| rule.check?(event, language))
}

pub use parse_error::{finding as parse_error, unlinted};

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rule has a failing and a passing fixture, checked as `fixtures.rs` describes.
    #[test]
    fn fixtures() {
        for rule in RULES {
            crate::fixtures::check_rule(rule);
        }
    }

    #[test]
    fn registry_is_sorted_and_documented() {
        let names: Vec<_> = RULES.iter().map(|rule| rule.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted, "keep RULES sorted by name");
        for rule in RULES {
            let doc = rule.documentation();
            for section in [
                "## What it does",
                "## Why is this bad?",
                "## Example",
                "## Use instead",
                "## In Python",
                "## Known limits",
            ] {
                assert!(
                    doc.contains(section),
                    "rule `{}` lacks the section `{section}`",
                    rule.name
                );
            }
            assert!(!rule.summary().is_empty(), "{}", rule.name);
        }
    }
}

#[cfg(test)]
mod readme {
    use super::RULES;

    #[test]
    fn readme_rule_table_matches_the_rules() {
        let readme = include_str!("../../../README.md");
        for rule in RULES {
            let row = format!(
                "| `{}` | {} | {} |",
                rule.name,
                rule.default_level,
                rule.summary()
            );
            assert!(readme.contains(&row), "README.md lacks the row\n{row}");
        }
    }
}
