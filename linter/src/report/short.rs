//! `path:line:col: level[rule]: message`, one finding per line, for grep and terminals.

use super::rustc_level;
use crate::project::Outcome;

pub fn write(outcome: &Outcome, out: &mut String) {
    for file in &outcome.files {
        for diagnostic in &file.diagnostics {
            let finding = &diagnostic.finding;
            let (line, column) = file.lines.position(&file.text, finding.span.start);
            out.push_str(&format!(
                "{}:{line}:{column}: {}[{}]: {}\n",
                file.unit.relative,
                rustc_level(diagnostic.level),
                finding.rule.name,
                finding.message
            ));
        }
    }
    for error in &outcome.internal_errors {
        out.push_str(&format!(
            "{}: error[internal_error]: {}\n",
            error.unit.relative,
            error.describe()
        ));
    }
}
