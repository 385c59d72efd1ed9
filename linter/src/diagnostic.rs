//! What a rule reports: [`Finding`]s of a [`Rule`] at a [`Level`], with their suggestions. Nothing
//! here knows how a finding was found, nor anything of the project around its file.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use serde::Deserialize;

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
    /// The finding is in a method of a Python class whose base `base` (a dotted path) is
    /// another module's: it stands if the project's class hierarchy makes that base a
    /// `torch.nn.Module` subclass.
    ModuleClass { base: String },
    /// The finding is in a Python function where one of `parameters` (each by its place among
    /// a call's arguments, `#0`, and by its name) brings the model's tensor: it stands if model
    /// code hands the function `function` (a dotted path) its tensors there, directly or
    /// through other such functions.
    Fed {
        function: String,
        parameters: Vec<String>,
    },
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
            message: one_line(&message),
            label: one_line(&label.into()),
            help: help.into(),
            related: Vec::new(),
            suggestion: None,
            requires: None,
        }
    }
}

/// A message as one line of plain text, whatever source it quotes: code quoted across lines keeps
/// its first line, elided (`.cuda(1, x="""…`), and control characters are written as escapes
/// (`\u{1b}`), so that no linted file can forge a line of a report or drive the terminal that
/// shows it.
pub fn one_line(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for (at, part) in message.split('`').enumerate() {
        if at > 0 {
            out.push('`');
        }
        let part = match part.split_once('\n') {
            // Inside backticks: code, cut at its first line.
            Some((first, _)) if at % 2 == 1 => {
                out.push_str(&escaped(first.trim_end()));
                out.push('…');
                continue;
            }
            _ => part,
        };
        out.push_str(&escaped(part));
    }
    out
}

/// Text with each control character written as an escape (`\u{1b}`), line breaks as spaces.
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
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

/// A rule: its name, default level and documentation. Each is declared, with its check, in its
/// own file under `rules/` (`declare_rule!`).
pub struct Rule {
    pub name: &'static str,
    pub default_level: Level,
    /// The rule's doc comment: What it does / Why is this bad? / Example / Use instead /
    /// In Python / Known limits.
    pub doc: &'static str,
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
