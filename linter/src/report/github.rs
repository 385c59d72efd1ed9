//! GitHub Actions workflow commands, so that findings appear on the pull request's diff:
//! `::warning file=…,line=…,col=…,endLine=…,endColumn=…,title=…::message`.

use std::fmt;

use super::rustc_level;
use crate::project::Outcome;

/// `%`, CR and LF in the message.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// As [`escape_data`], and `:` and `,`, which end a property.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

pub fn write(outcome: &Outcome, out: &mut dyn fmt::Write) -> fmt::Result {
    let prefix = outcome.session.repository_prefix();
    for file in &outcome.files {
        for diagnostic in &file.diagnostics {
            let finding = &diagnostic.finding;
            let (line, column) = file.lines.position(&file.text, finding.span.start);
            let (end_line, end_column) = file.lines.position(&file.text, finding.span.end);
            let path = escape_property(&format!("{prefix}{}", file.unit.relative));
            let title = escape_property(&format!("placement::{}", finding.rule.name));
            // The runner drops columns of an annotation that spans lines.
            let columns = if line == end_line {
                format!(",col={column},endColumn={end_column}")
            } else {
                String::new()
            };
            let message = escape_data(&format!("{}\nhelp: {}", finding.message, finding.help));
            // The runner places lines in the file as it is stored, a notebook's JSON: a
            // notebook's annotation is the file's, and says its cell and line.
            let place = file.place(finding.span.start);
            if place.cell.is_some() {
                writeln!(
                    out,
                    "::{} file={path},title={title}::{}",
                    rustc_level(diagnostic.level),
                    escape_data(&format!("{place}: ")) + &message
                )?;
                continue;
            }
            writeln!(
                out,
                "::{} file={path},line={line}{columns},endLine={end_line},title={title}::{message}",
                rustc_level(diagnostic.level)
            )?;
        }
    }
    for error in &outcome.internal_errors {
        let path = escape_property(&format!("{prefix}{}", error.unit.relative));
        writeln!(
            out,
            "::error file={path},title=placement%3A%3Ainternal_error::{}",
            escape_data(&error.describe())
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_runner() {
        assert_eq!(escape_data("50% of\r\nit"), "50%25 of%0D%0Ait");
        assert_eq!(
            escape_property("placement::rule,a"),
            "placement%3A%3Arule%2Ca"
        );
    }
}
