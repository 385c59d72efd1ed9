//! Cargo's JSON messages: one `compiler-message` per finding, as `cargo check
//! --message-format=json` prints them, so `cargo_metadata::Message::parse_stream` and
//! rust-analyzer accept them; then `build-finished`.

use serde::Serialize;
use serde_json::{Value, json};

use super::human::{self, Style};
use super::rustc_level;
use crate::discover::{FileUnit, Package};
use crate::project::{Diagnostic, LintedFile, Outcome};

#[derive(Serialize)]
struct Span<'a> {
    file_name: &'a str,
    byte_start: usize,
    byte_end: usize,
    line_start: usize,
    line_end: usize,
    column_start: usize,
    column_end: usize,
    is_primary: bool,
    text: Vec<SpanLine<'a>>,
    label: Option<&'a str>,
    suggested_replacement: Option<String>,
    suggestion_applicability: Option<String>,
    expansion: Option<()>,
    /// In a notebook, the 1-based cell of the span's start; the lines are counted in the code
    /// cells joined in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    cell: Option<usize>,
}

#[derive(Serialize)]
struct SpanLine<'a> {
    text: &'a str,
    highlight_start: usize,
    highlight_end: usize,
}

fn span<'a>(
    file: &'a LintedFile,
    range: &std::ops::Range<usize>,
    is_primary: bool,
    label: Option<&'a str>,
) -> Span<'a> {
    let (line_start, column_start) = file.lines.position(&file.text, range.start);
    let (line_end, column_end) = file.lines.position(&file.text, range.end);
    let text = (line_start..=line_end)
        .map(|line| {
            let content = file.lines.line_text(&file.text, line - 1);
            let start = if line == line_start { column_start } else { 1 };
            let end = if line == line_end {
                column_end
            } else {
                content.chars().count() + 1
            };
            around(content, start, end)
        })
        .collect();
    Span {
        file_name: &file.unit.relative,
        byte_start: range.start,
        byte_end: range.end,
        line_start,
        line_end,
        column_start,
        column_end,
        is_primary,
        text,
        label,
        suggested_replacement: None,
        suggestion_applicability: None,
        expansion: None,
        cell: file.place(range.start).cell,
    }
}

/// A line of a span as its JSON quotes it: whole, or on a line longer than
/// [`human::LONG_LINE`] (generated code, minified data) the part around the highlight, so that
/// each message of such a line is not the whole line again.
fn around(content: &str, start: usize, end: usize) -> SpanLine<'_> {
    if content.len() <= human::LONG_LINE {
        return SpanLine {
            text: content,
            highlight_start: start,
            highlight_end: end,
        };
    }
    // Columns are 1-based characters; the part kept starts some characters before.
    let skipped = start.saturating_sub(1 + human::LONG_LINE_CONTEXT);
    let kept = (end - start) + 2 * human::LONG_LINE_CONTEXT;
    let mut chars = content.char_indices().skip(skipped);
    let from = chars.next().map_or(content.len(), |(at, _)| at);
    let to = chars.nth(kept).map_or(content.len(), |(at, _)| at);
    SpanLine {
        text: &content[from..to],
        highlight_start: start - skipped,
        highlight_end: end - skipped,
    }
}

fn target(package: &Package, unit: &FileUnit) -> serde_json::Value {
    match unit.target.and_then(|index| package.targets.get(index)) {
        Some(target) => serde_json::to_value(target).unwrap_or_default(),
        // A file of no target (or no manifest): described as the library it is linted as.
        None => json!({
            "name": unit.crate_name,
            "kind": ["lib"],
            "crate_types": ["lib"],
            "src_path": crate::source::path_name(&unit.path),
            "edition": "2021",
            "doc": false,
            "doctest": false,
            "test": false,
        }),
    }
}

/// The `compiler-message` line of one diagnostic.
pub fn message(
    outcome: &Outcome,
    file: &LintedFile,
    diagnostic: &Diagnostic,
    ansi: bool,
) -> serde_json::Value {
    let package = &outcome.session.packages[file.unit.package];
    let finding = &diagnostic.finding;
    let mut spans = vec![span(file, &finding.span, true, Some(&finding.label))];
    spans.extend(
        finding
            .related
            .iter()
            .map(|(range, label)| span(file, range, false, Some(label))),
    );
    let style = Style {
        color: ansi,
        ..Style::PLAIN
    };
    let child = |message: String, level: &str, spans: Vec<Value>| json!({ "message": message, "code": null, "level": level, "spans": spans, "children": [], "rendered": null });
    let mut children = vec![child(finding.help.clone(), "help", Vec::new())];
    if let Some(suggestion) = &finding.suggestion {
        let mut at =
            serde_json::to_value(span(file, &suggestion.span, true, None)).expect("a span");
        at["suggested_replacement"] = json!(suggestion.replacement);
        at["suggestion_applicability"] = json!(suggestion.applicability.as_str());
        children.push(child(suggestion.message.clone(), "help", vec![at]));
    }
    // In the words of the file's user: `placement` for Python, `cargo placement` for Rust.
    let explain = match file.unit.language {
        crate::source::Language::Python => "placement explain",
        crate::source::Language::Rust => "cargo placement explain",
    };
    children.push(child(
        format!("for more, run `{explain} {}`", finding.rule.name),
        "note",
        Vec::new(),
    ));
    json!({
        "reason": "compiler-message",
        "package_id": package.id,
        "manifest_path": crate::source::path_name(&package.manifest_path),
        "target": target(package, &file.unit),
        "message": {
            "$message_type": "diagnostic",
            "message": finding.message,
            "code": { "code": format!("placement::{}", finding.rule.name), "explanation": null },
            "level": rustc_level(diagnostic.level),
            "spans": spans,
            "children": children,
            "rendered": human::render(file, diagnostic, style),
        },
    })
}

/// A `compiler-message` line per diagnostic, and an `error` one per file that a bug of ours
/// stopped.
pub fn write(outcome: &Outcome, ansi: bool, out: &mut dyn std::fmt::Write) -> std::fmt::Result {
    for file in &outcome.files {
        for diagnostic in &file.diagnostics {
            writeln!(out, "{}", message(outcome, file, diagnostic, ansi))?;
        }
    }
    for error in &outcome.internal_errors {
        let package = &outcome.session.packages[error.unit.package];
        let text = error.describe();
        let line = json!({
            "reason": "compiler-message",
            "package_id": package.id,
            "manifest_path": package.manifest_path,
            "target": target(package, &error.unit),
            "message": {
                "$message_type": "diagnostic",
                "message": text,
                "code": { "code": "placement::internal_error", "explanation": null },
                "level": "error",
                "spans": [],
                "children": [],
                "rendered": format!("error: {text}\n"),
            },
        });
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The closing `build-finished` line.
pub fn finished(success: bool) -> String {
    json!({ "reason": "build-finished", "success": success }).to_string() + "\n"
}
