//! `path:line:col: level[rule]: message`, one finding per line, for grep and terminals; in a
//! notebook `path:cell N:line:col: ...`, the line counted in the cell.

use std::fmt;

use super::rustc_level;
use crate::project::Outcome;

pub fn write(outcome: &Outcome, out: &mut dyn fmt::Write) -> fmt::Result {
    for file in &outcome.files {
        for diagnostic in &file.diagnostics {
            let finding = &diagnostic.finding;
            writeln!(
                out,
                "{}:{}: {}[{}]: {}",
                file.unit.relative,
                file.place(finding.span.start),
                rustc_level(diagnostic.level),
                finding.rule.name,
                finding.message
            )?;
        }
    }
    for error in &outcome.internal_errors {
        writeln!(
            out,
            "{}: error[internal_error]: {}",
            error.unit.relative,
            error.describe()
        )?;
    }
    Ok(())
}
