//! Findings rendered with miette, rustc-like: the rule, `file:line:col`, a label on the exact
//! tokens and a help line.

use std::fmt;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, MietteError,
    MietteSpanContents, Severity, SourceCode, SourceSpan, SpanContents,
};

use crate::diagnostic::Level;
use crate::project::{Diagnostic, LintedFile, Outcome};

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
    /// Characters of the first line left out before the window (a long line is cut).
    first_column: usize,
    /// Where a control character of the file was replaced by its picture in `text` (`␛` for
    /// ESC), as its offset in the file's window and the bytes the window has grown by then.
    grown: Vec<(usize, usize)>,
}

/// A file's text as a terminal may show it: each control character (ESC, BEL, a C1 control)
/// drawn as a picture of itself (`␛`, `␇`, `�`), and a lone carriage return as a line break, as rustc
/// draws them, so that a linted file cannot retitle, recolour or rewrite the terminal. Returns
/// the text and where it grew ([`Window::grown`]).
fn shown(text: &str) -> (String, Vec<(usize, usize)>) {
    let mut out = String::with_capacity(text.len());
    let mut grown = Vec::new();
    let mut extra = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let picture = match c {
            '\n' | '\t' => None,
            '\r' if chars.peek().is_some_and(|(_, next)| *next == '\n') => None,
            // A lone carriage return ends a line, as the line index counts it.
            '\r' => {
                out.push('\n');
                continue;
            }
            '\0'..='\u{1f}' => char::from_u32(0x2400 + u32::from(c)),
            '\u{7f}' => Some('\u{2421}'),
            c if c.is_control() => Some('\u{fffd}'),
            _ => None,
        };
        match picture {
            Some(picture) => {
                out.push(picture);
                extra += picture.len_utf8() - c.len_utf8();
                grown.push((at, extra));
            }
            None => out.push(c),
        }
    }
    (out, grown)
}

/// Lines longer than this (generated code, minified data) are shown cut around the finding:
/// miette cannot draw labels past column 65,535, and nobody reads such a line whole.
pub(super) const LONG_LINE: usize = 1_000;
/// Bytes shown on each side of a finding on a long line.
pub(super) const LONG_LINE_CONTEXT: usize = 120;

impl Window {
    fn new(file: &LintedFile, diagnostic: &Diagnostic) -> Window {
        let spans = std::iter::once(&diagnostic.finding.span)
            .chain(diagnostic.finding.related.iter().map(|(span, _)| span));
        let (start, end) = spans.fold((usize::MAX, 0), |(lo, hi), span| {
            (lo.min(span.start), hi.max(span.end))
        });
        // Enough lines on both sides for miette's context lines; in a notebook, of the cell
        // alone, named with it and counted in it.
        let mut first_line = file.lines.line_of(start).saturating_sub(3);
        let mut last_line = file.lines.line_of(end) + 4;
        let mut name = file.unit.relative.clone();
        let mut cell_start = 0;
        if let Some(cells) = &file.cells {
            // The finding's own cell; places in other cells go unlabelled.
            let line = file.lines.line_of(diagnostic.finding.span.start);
            let (first, next) = cells.lines_of(line);
            first_line = first_line.max(first);
            last_line = next.map_or(last_line, |next| last_line.min(next));
            cell_start = first;
            name = format!("{name}:cell {}", cells.locate(line).0);
        }
        let offset = file.lines.line_start(first_line).min(file.text.len());
        let stop = if last_line >= file.lines.line_count() {
            file.text.len()
        } else {
            file.lines.line_start(last_line)
        };
        let text = &file.text[offset..stop];
        if text.lines().all(|line| line.len() <= LONG_LINE) {
            let (text, grown) = shown(text);
            return Window {
                name,
                text,
                offset,
                first_line: first_line - cell_start,
                first_column: 0,
                grown,
            };
        }
        // Only the finding's own line, cut around it.
        let primary = &diagnostic.finding.span;
        let line = file.lines.line_of(primary.start);
        let line_start = file.lines.line_start(line).min(file.text.len());
        let line_end = line_start + file.lines.line_text(&file.text, line).len();
        let mut from = primary
            .start
            .saturating_sub(LONG_LINE_CONTEXT)
            .max(line_start);
        while !file.text.is_char_boundary(from) {
            from -= 1;
        }
        let mut to = (primary.end.min(line_end) + LONG_LINE_CONTEXT).min(line_end);
        while !file.text.is_char_boundary(to) {
            to += 1;
        }
        let (text, grown) = shown(&file.text[from..to]);
        Window {
            name,
            text,
            offset: from,
            first_line: line - cell_start,
            first_column: file.text[line_start..from].chars().count(),
            grown,
        }
    }

    /// Where a byte offset of the file is in the window as shown, counted from the file's start.
    fn shown_at(&self, at: usize) -> usize {
        let inside = at.saturating_sub(self.offset);
        let before = self
            .grown
            .partition_point(|(replaced, _)| *replaced < inside);
        let extra = before.checked_sub(1).map_or(0, |last| self.grown[last].1);
        at + extra
    }

    /// A span of the file as a span of the window as shown.
    fn shown_span(&self, span: &std::ops::Range<usize>) -> SourceSpan {
        source_span(&(self.shown_at(span.start)..self.shown_at(span.end)))
    }

    /// Whether a span lies in the window, to be labelled.
    fn holds(&self, span: &std::ops::Range<usize>) -> bool {
        self.offset <= span.start && span.end <= self.offset + self.text.len()
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
        // miette counts columns in bytes; rustc (and the JSON spans) count characters.
        let start = contents.span().offset();
        let column = match self.text[..start].rfind('\n') {
            Some(at) => self.text[at + 1..start].chars().count(),
            None => self.first_column + self.text[..start].chars().count(),
        };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            contents.data(),
            SourceSpan::new((start + self.offset).into(), contents.span().len()),
            contents.line() + self.first_line,
            column,
            contents.line_count() + self.first_line,
        )))
    }
}

/// The finding's help; in a notebook, where its places in other cells are, which the window of
/// its own cell does not show (`a device is first used here: cell 3:1:30`).
fn help(file: &LintedFile, finding: &crate::diagnostic::Finding, window: &Window) -> String {
    let mut help = finding.help.clone();
    if file.cells.is_some() {
        for (span, label) in finding
            .related
            .iter()
            .filter(|(span, _)| !window.holds(span))
        {
            help.push_str(&format!("\n{label}: {}", file.place(span.start)));
        }
    }
    help
}

fn source_span(range: &std::ops::Range<usize>) -> SourceSpan {
    SourceSpan::new(range.start.into(), range.end.saturating_sub(range.start))
}

/// One diagnostic, rendered.
pub fn render(file: &LintedFile, diagnostic: &Diagnostic, style: Style) -> String {
    let finding = &diagnostic.finding;
    let window = Window::new(file, diagnostic);
    let primary = finding.span.start..finding.span.end.min(window.offset + window.text.len());
    let mut labels = vec![LabeledSpan::new_primary_with_span(
        Some(finding.label.clone()),
        window.shown_span(&primary),
    )];
    labels.extend(
        finding
            .related
            .iter()
            .filter(|(span, _)| window.holds(span))
            .map(|(span, label)| {
                LabeledSpan::new_with_span(Some(label.clone()), window.shown_span(span))
            }),
    );
    let severity = if diagnostic.level == Level::Deny {
        Severity::Error
    } else {
        Severity::Warning
    };
    let report = miette::Report::new(
        MietteDiagnostic::new(finding.message.clone())
            .with_code(format!("placement::{}", finding.rule.name))
            .with_severity(severity)
            .with_help(help(file, finding, &window))
            .with_labels(labels),
    )
    .with_source_code(window);
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = style.handler().render_report(&mut out, report.as_ref());
    out
}

/// Every diagnostic of the outcome, the files a bug of ours stopped, then a summary line.
pub fn write(outcome: &Outcome, style: Style, out: &mut dyn fmt::Write) -> fmt::Result {
    for file in &outcome.files {
        for diagnostic in &file.diagnostics {
            writeln!(out, "{}", render(file, diagnostic, style))?;
        }
    }
    for error in &outcome.internal_errors {
        let report = miette::Report::new(
            MietteDiagnostic::new(error.describe())
                .with_code("placement::internal_error")
                .with_severity(Severity::Error),
        );
        style
            .handler()
            .render_report(&mut &mut *out, report.as_ref())?;
        writeln!(out)?;
    }
    writeln!(out, "{}", summary(outcome))
}

/// `found 1 error and 3 warnings in 2 of 12 files`: the findings, in how many of the files
/// linted.
pub fn summary(outcome: &Outcome) -> String {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let linted = plural(outcome.files_linted, "file");
    let with_findings = (outcome.files.iter())
        .filter(|file| {
            (file.diagnostics.iter()).any(|d| matches!(d.level, Level::Deny | Level::Warn))
        })
        .count();
    let baselined = match outcome.baselined {
        0 => String::new(),
        n => format!(" ({n} more in the baseline)"),
    };
    let files = format!("{with_findings} of {linted}{baselined}");
    let found = match (outcome.count(Level::Deny), outcome.count(Level::Warn)) {
        (0, 0) => format!("no placement findings in {linted}{baselined}"),
        (errors, 0) => format!("found {} in {files}", plural(errors, "error")),
        (0, warnings) => format!("found {} in {files}", plural(warnings, "warning")),
        (errors, warnings) => format!(
            "found {} and {} in {files}",
            plural(errors, "error"),
            plural(warnings, "warning")
        ),
    };
    match outcome.internal_errors.len() {
        0 => found,
        n => format!(
            "{found}; {} could not be linted because of a bug in cargo-placement",
            plural(n, "file")
        ),
    }
}
