//! Findings rendered with miette, rustc-like: the rule, `file:line:col`, a label on the exact
//! tokens and a help line.

use std::fmt::Write as _;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, MietteError,
    MietteSpanContents, Severity, SourceCode, SourceSpan, SpanContents,
};

use crate::rules::Level;
use crate::{Diagnostic, LintedFile, Outcome};

/// How to draw: colours and terminal links only where a person is looking.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    pub color: bool,
    pub links: bool,
    pub width: usize,
}

impl Style {
    /// Plain text, for files, CI logs, JSON `rendered` fields and snapshots.
    pub const PLAIN: Style = Style {
        color: false,
        links: false,
        width: 100,
    };

    fn handler(self) -> GraphicalReportHandler {
        let theme = if self.color {
            GraphicalTheme::unicode()
        } else {
            GraphicalTheme::unicode_nocolor()
        };
        GraphicalReportHandler::new_themed(theme)
            .with_links(self.links)
            .with_width(self.width)
    }
}

/// A few lines of a file around a diagnostic, numbered as in the whole file. miette finds
/// spans by scanning its source from the start; handing it only this window keeps rendering
/// proportional to the snippet, not to the file.
struct Window {
    name: String,
    text: String,
    /// Byte offset and 0-based line of the window's start in the file.
    offset: usize,
    first_line: usize,
}

impl Window {
    fn new(file: &LintedFile, diagnostic: &Diagnostic) -> Window {
        let spans = std::iter::once(&diagnostic.finding.span)
            .chain(diagnostic.finding.related.iter().map(|(span, _)| span));
        let (start, end) = spans.fold((usize::MAX, 0), |(lo, hi), span| {
            (lo.min(span.start), hi.max(span.end))
        });
        // Enough lines on both sides for miette's context lines.
        let first_line = file.lines.line_of(start).saturating_sub(3);
        let last_line = file.lines.line_of(end) + 4;
        let offset = file.lines.line_start(first_line);
        let stop = if last_line >= file.lines.line_count() {
            file.text.len()
        } else {
            file.lines.line_start(last_line)
        };
        let name = file.unit.relative.clone();
        Window {
            name,
            text: file.text[offset..stop].to_owned(),
            offset,
            first_line,
        }
    }
}

impl SourceCode for Window {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner = SourceSpan::new(span.offset().saturating_sub(self.offset).into(), span.len());
        let contents =
            self.text
                .as_str()
                .read_span(&inner, context_lines_before, context_lines_after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            contents.data(),
            SourceSpan::new(
                (contents.span().offset() + self.offset).into(),
                contents.span().len(),
            ),
            contents.line() + self.first_line,
            contents.column(),
            contents.line_count() + self.first_line,
        )))
    }
}

fn source_span(range: &std::ops::Range<usize>) -> SourceSpan {
    SourceSpan::new(range.start.into(), range.end.saturating_sub(range.start))
}

/// One diagnostic, rendered.
pub fn render(file: &LintedFile, diagnostic: &Diagnostic, style: Style) -> String {
    let finding = &diagnostic.finding;
    let mut labels = vec![LabeledSpan::new_primary_with_span(
        Some(finding.label.clone()),
        source_span(&finding.span),
    )];
    labels.extend(
        finding.related.iter().map(|(span, label)| {
            LabeledSpan::new_with_span(Some(label.clone()), source_span(span))
        }),
    );
    let severity = if diagnostic.level == Level::Deny {
        Severity::Error
    } else {
        Severity::Warning
    };
    let report = miette::Report::new(
        MietteDiagnostic::new(finding.message.clone())
            .with_code(format!("placement::{}", finding.rule))
            .with_severity(severity)
            .with_help(finding.help.clone())
            .with_labels(labels),
    )
    .with_source_code(Window::new(file, diagnostic));
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = style.handler().render_report(&mut out, report.as_ref());
    out
}

/// Every diagnostic of the outcome, then a summary line.
pub fn write(outcome: &Outcome, style: Style, out: &mut String) {
    for file in &outcome.files {
        for diagnostic in &file.diagnostics {
            out.push_str(&render(file, diagnostic, style));
            out.push('\n');
        }
    }
    let _ = writeln!(out, "{}", summary(outcome));
}

/// `found 1 error and 3 warnings in 12 files`.
pub fn summary(outcome: &Outcome) -> String {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let files = match outcome.baselined {
        0 => plural(outcome.files_linted, "file"),
        n => format!(
            "{} ({n} more in the baseline)",
            plural(outcome.files_linted, "file")
        ),
    };
    match (outcome.count(Level::Deny), outcome.count(Level::Warn)) {
        (0, 0) => format!("no placement findings in {files}"),
        (errors, 0) => format!("found {} in {files}", plural(errors, "error")),
        (0, warnings) => format!("found {} in {files}", plural(warnings, "warning")),
        (errors, warnings) => format!(
            "found {} and {} in {files}",
            plural(errors, "error"),
            plural(warnings, "warning")
        ),
    }
}
