//! The rules: one file each, one registry. A rule looks at the [`Event`]s the resolver found in
//! a file and turns some of them into [`Finding`]s. Its doc comment, in fixed sections, is what
//! `cargo placement explain RULE` prints.

mod cuda_at_import;
mod device_mismatch;
mod hardcoded_device;
mod implicit_device;
mod late_visible_devices;
mod parse_error;
mod silent_cpu_fallback;
mod stray_set_device;
mod transfer_in_loop;
mod unplaced_tensor;
mod unused_allow;

use crate::analysis::Event;
use crate::diagnostic::{Finding, Rule};
use crate::source::Language;

/// Declares a rule once, in its own file: its doc comment (the documentation `explain` prints),
/// its name, its default level and the check that words events as findings (`None` for
/// findings made before any analysis runs, as `parse_error`'s).
///
/// ```ignore
/// declare_rule! {
///     /// ## What it does
///     /// ...
///     pub(crate) static HARDCODED_DEVICE = ("hardcoded_device", Warn, Some(check));
/// }
/// ```
macro_rules! declare_rule {
    ($(#[doc = $doc:literal])* $vis:vis static $rule:ident = ($name:literal, $level:ident, $check:expr);) => {
        $(#[doc = $doc])*
        $vis static $rule: $crate::diagnostic::Rule = $crate::diagnostic::Rule {
            name: $name,
            default_level: $crate::diagnostic::Level::$level,
            doc: concat!($($doc, "\n"),*),
        };

        /// The rule's check.
        pub(super) const CHECK: Option<super::Check> = $check;
    };
}
use declare_rule;

/// Words an event of the analyses as a finding of its rule, or not.
type Check = fn(&Event<'_>, Language) -> Option<Finding>;

/// The registry, from one list of the rules' modules, sorted by name: [`RULES`] and each rule's
/// check.
macro_rules! registry {
    ($($module:ident::$rule:ident),* $(,)?) => {
        /// Every rule, sorted by name. Adding a rule is its file (declaration and check), a line
        /// here, and, for a rule about something no analysis reports yet, an [`Event`] variant
        /// and the analysis that emits it.
        pub static RULES: &[&Rule] = &[$(&$module::$rule),*];

        /// Each rule's check, beside the rule.
        static CHECKS: &[(&Rule, Option<Check>)] = &[$((&$module::$rule, $module::CHECK)),*];
    };
}

registry! {
    cuda_at_import::CUDA_AT_IMPORT,
    device_mismatch::DEVICE_MISMATCH,
    hardcoded_device::HARDCODED_DEVICE,
    implicit_device::IMPLICIT_DEVICE,
    late_visible_devices::LATE_VISIBLE_DEVICES,
    parse_error::PARSE_ERROR,
    silent_cpu_fallback::SILENT_CPU_FALLBACK,
    stray_set_device::STRAY_SET_DEVICE,
    transfer_in_loop::TRANSFER_IN_LOOP,
    unplaced_tensor::UNPLACED_TENSOR,
    unused_allow::UNUSED_ALLOW,
}

/// What every rule does in Jupyter notebooks, for `rules` and `explain`.
pub const IN_NOTEBOOKS: &str = "\
In Jupyter notebooks (`.ipynb`, linted wherever `.py` files are): a notebook's code cells are one
program, run top to bottom like a script, with IPython's magics (`%time`, `%%bash`, `!pip`, `x?`)
and markdown cells skipped. Findings name the cell and the line in it (`explore.ipynb:cell 4:1:1`),
and `# placement: allow(rule)` works in a cell. The rules about library code flag the project's
modules that notebooks import, not the notebooks; a notebook that is not nbformat 4 JSON is a
`parse_error`.";

/// A rule's whole documentation, as `explain` prints it: its level, its sections, and what it
/// does in notebooks.
pub fn explanation(rule: &Rule) -> String {
    format!(
        "# {} (default: {})\n\n{}\n\n## In notebooks\n\n{IN_NOTEBOOKS}",
        rule.name,
        rule.default_level,
        rule.documentation().trim_end()
    )
}

pub fn find(name: &str) -> Option<&'static Rule> {
    let name = bare_name(name);
    RULES.iter().copied().find(|rule| rule.name == name)
}

/// A rule's name as reports print its code (`placement::implicit_device`) or bare
/// (`implicit_device`), bare: both are accepted wherever a rule is named, as clippy accepts
/// `clippy::x`.
pub fn bare_name(name: &str) -> &str {
    name.strip_prefix("placement::").unwrap_or(name)
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
    CHECKS
        .iter()
        .filter_map(move |(_, check)| check.as_ref()?(event, language))
}

pub use parse_error::{finding as parse_error, unlinted};
pub use unused_allow::finding as unused_allow;

/// The places a held device goes (a name or attribute bound to it, then used where a device
/// goes), as a finding's related places.
fn goes_to(reaches: &[std::ops::Range<usize>]) -> Vec<(std::ops::Range<usize>, String)> {
    reaches
        .iter()
        .map(|at| (at.clone(), "the device goes here".to_owned()))
        .collect()
}

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
