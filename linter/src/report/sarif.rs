//! SARIF 2.1.0 for code scanning (`github/codeql-action/upload-sarif`): one run, every rule
//! with its documentation, results with repository-relative locations and fingerprints that
//! survive line moves.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};

use crate::diagnostic::Level;
use crate::project::locate;
use crate::project::locate::FindingKey;
use crate::project::{LintedFile, Outcome};
use crate::rules::RULES;

fn level(level: Level) -> &'static str {
    match level {
        Level::Deny => "error",
        Level::Warn | Level::Allow => "warning",
    }
}

/// 64-bit FNV-1a: small, and stable across versions of Rust, as fingerprints must be.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// GitHub limits descriptions to 1024 characters.
fn limited(text: &str) -> String {
    if text.chars().count() <= 1024 {
        text.to_owned()
    } else {
        text.chars().take(1021).collect::<String>() + "..."
    }
}

fn section(doc: &str, title: &str) -> String {
    doc.split(&format!("## {title}"))
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// The command that explains a rule, as the user runs the linter (`placement explain` or
/// `cargo placement explain`).
fn explain_command(tool: &str) -> &'static str {
    match tool {
        "cargo-placement" => "cargo placement explain",
        _ => "placement explain",
    }
}

fn rules(tool: &str) -> Vec<Value> {
    RULES
        .iter()
        .map(|rule| {
            let doc = rule.documentation();
            let mut configuration = json!({ "level": level(rule.default_level) });
            if rule.default_level == Level::Allow {
                configuration["enabled"] = json!(false);
            }
            json!({
                "id": format!("placement::{}", rule.name),
                "name": rule.name,
                "shortDescription": { "text": limited(&rule.summary()) },
                "fullDescription": { "text": limited(&section(&doc, "What it does").replace('\n', " ")) },
                "help": {
                    "text": format!("{}\n\nRun `{} {}` for the whole documentation.", section(&doc, "Why is this bad?"), explain_command(tool), rule.name),
                    "markdown": doc,
                },
                "defaultConfiguration": configuration,
                "properties": { "tags": ["placement", "gpu"], "precision": "high" },
            })
        })
        .collect()
}

fn region(file: &LintedFile, span: &std::ops::Range<usize>) -> Value {
    let (start_line, start_column) = file.lines.position(&file.text, span.start);
    let (end_line, end_column) = file.lines.position(&file.text, span.end);
    let mut region = json!({ "startLine": start_line, "startColumn": start_column, "endLine": end_line, "endColumn": end_column });
    // In a notebook the lines are counted in the code cells joined in order; the cell and the
    // line inside it are the region's properties.
    let place = file.place(span.start);
    if let Some(cell) = place.cell {
        region["properties"] = json!({ "cell": cell, "lineInCell": place.line });
    }
    region
}

fn location(uri: &str, file: &LintedFile, span: &std::ops::Range<usize>) -> Value {
    json!({
        "physicalLocation": {
            "artifactLocation": { "uri": uri, "uriBaseId": "%SRCROOT%" },
            "region": region(file, span),
        }
    })
}

fn fingerprint(key: &FindingKey, occurrence: usize) -> String {
    let text = format!(
        "{}\u{0}{}\u{0}{}\u{0}{}\u{0}{occurrence}",
        key.rule, key.file, key.item, key.snippet
    );
    format!("{:016x}", fnv1a(&text))
}

/// What a URI path may hold as it is: RFC 3986's unreserved characters and `/`; everything else
/// (spaces, `%`, `#`, `?`, line breaks, non-ASCII) is percent-encoded.
const URI_PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn uri(path: &str) -> String {
    utf8_percent_encode(path, URI_PATH).to_string()
}

/// The whole SARIF document, of the binary `tool` (`placement` or `cargo-placement`).
pub fn document(outcome: &Outcome, tool: &str) -> Value {
    let prefix = outcome.session.repository_prefix();
    let mut results = Vec::new();
    for file in &outcome.files {
        let uri = uri(&format!("{prefix}{}", file.unit.relative));
        let keys = file.keys();
        let occurrences = locate::occurrences(&keys);
        for ((diagnostic, key), occurrence) in file.diagnostics.iter().zip(&keys).zip(occurrences) {
            let finding = &diagnostic.finding;
            let index = RULES
                .iter()
                .position(|rule| *rule == finding.rule)
                .unwrap_or(0);
            let related: Vec<Value> = finding
                .related
                .iter()
                .enumerate()
                .map(|(id, (span, label))| {
                    let mut related = location(&uri, file, span);
                    related["id"] = json!(id);
                    related["message"] = json!({ "text": label });
                    related
                })
                .collect();
            results.push(json!({
                "ruleId": format!("placement::{}", finding.rule.name),
                "ruleIndex": index,
                "level": level(diagnostic.level),
                "message": { "text": format!("{}. {}: {}", finding.message, finding.label, finding.help) },
                "locations": [location(&uri, file, &finding.span)],
                "relatedLocations": related,
                "partialFingerprints": { "placementFinding/v1": fingerprint(key, occurrence) },
                "fixes": finding.suggestion.iter().map(|suggestion| json!({
                    "description": { "text": suggestion.message },
                    "artifactChanges": [{
                        "artifactLocation": { "uri": uri, "uriBaseId": "%SRCROOT%" },
                        "replacements": [{
                            "deletedRegion": region(file, &suggestion.span),
                            "insertedContent": { "text": suggestion.replacement },
                        }],
                    }],
                })).collect::<Vec<_>>(),
            }));
        }
    }
    let root = outcome
        .session
        .repository_root()
        .unwrap_or(&outcome.session.root);
    let root_uri = format!(
        "file://{}/",
        uri(crate::source::path_name(root).trim_end_matches('/'))
    );
    // A file that a bug of ours stopped (the run did not finish its work), and each file the
    // run could not read or parse (it was not analysed: its `parse_error` result says why).
    let notification = |level: &str, text: &str, relative: &str| {
        json!({
            "level": level,
            "message": { "text": text },
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {
                        "uri": uri(&format!("{prefix}{relative}")),
                        "uriBaseId": "%SRCROOT%",
                    }
                }
            }],
        })
    };
    let internal = (outcome.internal_errors.iter())
        .map(|error| notification("error", &error.describe(), &error.unit.relative));
    let unanalysed = outcome.files.iter().flat_map(|file| {
        (file.diagnostics.iter())
            .filter(|diagnostic| diagnostic.finding.rule.name == "parse_error")
            .map(|diagnostic| {
                let text = format!("not analysed: {}", diagnostic.finding.message);
                notification("warning", &text, &file.unit.relative)
            })
    });
    let notifications: Vec<Value> = internal.chain(unanalysed).collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": tool,
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": rules(tool),
                }
            },
            "originalUriBaseIds": { "%SRCROOT%": { "uri": root_uri } },
            "invocations": [{
                "executionSuccessful": outcome.internal_errors.is_empty(),
                "toolExecutionNotifications": notifications,
            }],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }]
    })
}

/// The SARIF document: one JSON value, built whole before it is written.
pub fn write(outcome: &Outcome, tool: &str, out: &mut dyn std::fmt::Write) -> std::fmt::Result {
    let document =
        serde_json::to_string_pretty(&document(outcome, tool)).expect("SARIF serializes");
    writeln!(out, "{document}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(uri("src/gpu pick/a%b.rs"), "src/gpu%20pick/a%25b.rs");
        assert_eq!(uri("src/\n#?é.rs"), "src/%0A%23%3F%C3%A9.rs");
        assert_eq!(
            uri("crates/ml-core/src/lib_v2.rs"),
            "crates/ml-core/src/lib_v2.rs"
        );
    }
}
