//! The formats and options for CI and editors: SARIF against the official schema, stable
//! fingerprints, GitHub annotations, `short`, baselines, statistics, `--with-check` for
//! rust-analyzer, and the errors of bad input.

mod common;

use std::path::Path;

use cargo_metadata::Message;
use common::{demo, demo_copy, placement, stderr, stdout};
use serde_json::Value;

fn sarif(path: &Path, extra: &[&str]) -> Value {
    let mut args = vec![path.to_str().unwrap(), "--message-format", "sarif"];
    args.extend_from_slice(extra);
    let output = placement(&args);
    assert_ne!(output.status.code(), Some(2), "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).expect("SARIF is JSON")
}

fn schema() -> jsonschema::Validator {
    // The official schema, published by OASIS for validating SARIF, kept in the repository.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-schema-2.1.0.json");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).expect("the schema compiles")
}

fn assert_valid(validator: &jsonschema::Validator, document: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(document)
        .map(|error| format!("{error} at {}", error.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what}: SARIF invalid:\n{}",
        errors.join("\n")
    );
}

#[test]
fn sarif_validates_for_every_fixture_and_the_demo() {
    let validator = schema();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rules/fixtures");
    let mut results = 0;
    for rule in cargo_placement::rules::RULES {
        let document = sarif(&fixtures.join(rule.name), &["-W", "silent_cpu_fallback"]);
        assert_valid(&validator, &document, rule.name);
        results += document["runs"][0]["results"].as_array().unwrap().len();
    }
    assert!(results > 20, "the fixtures make findings: {results}");

    let document = sarif(&demo(), &[]);
    assert_valid(&validator, &document, "demo");
    let run = &document["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "cargo-placement");
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), cargo_placement::rules::RULES.len());
    for rule in rules {
        for field in ["shortDescription", "fullDescription", "help"] {
            assert!(
                !rule[field]["text"].as_str().unwrap().is_empty(),
                "{rule}: {field}"
            );
        }
    }
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 18);
    let first = &results[0];
    assert_eq!(first["ruleId"], "placement::hardcoded_device");
    let location = &first["locations"][0]["physicalLocation"];
    // Relative to the repository root, which is where GitHub reads it from.
    assert_eq!(
        location["artifactLocation"]["uri"],
        "tests/demo/models/src/encoder.rs"
    );
    assert_eq!(location["region"]["startLine"], 10);
    assert_eq!(location["region"]["startColumn"], 39);
}

fn fingerprints(document: &Value) -> Vec<String> {
    let mut all: Vec<String> = document["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| {
            result["partialFingerprints"]["placementFinding/v1"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    all.sort();
    all
}

#[test]
fn fingerprints_survive_lines_moving() {
    let copy = demo_copy();
    let before = fingerprints(&sarif(copy.path(), &[]));
    let unique: std::collections::HashSet<_> = before.iter().collect();
    assert_eq!(
        unique.len(),
        before.len(),
        "every finding has its own fingerprint"
    );
    let encoder = copy.path().join("models/src/encoder.rs");
    let text = std::fs::read_to_string(&encoder).unwrap();
    std::fs::write(
        &encoder,
        format!("// A comment\n// that moves everything down.\n\n{text}"),
    )
    .unwrap();
    assert_eq!(fingerprints(&sarif(copy.path(), &[])), before);
}

#[test]
fn github_annotations_and_short_lines() {
    let demo = demo();
    let output = placement(&[demo.to_str().unwrap(), "--message-format", "github"]);
    let lines: Vec<String> = stdout(&output).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 18);
    assert!(lines[0].starts_with(
        "::warning file=tests/demo/models/src/encoder.rs,line=10,col=39,endColumn=40,endLine=10,\
         title=placement%3A%3Ahardcoded_device::hard-coded GPU ordinal `1` in `Device::new_cuda`%0Ahelp: "
    ), "{}", lines[0]);
    assert!(
        lines
            .iter()
            .all(|line| !line.contains('\r') && line.starts_with("::warning "))
    );

    let output = placement(&[
        demo.to_str().unwrap(),
        "--message-format",
        "short",
        "-D",
        "device_mismatch",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert!(out.contains("trainer/src/main.rs:18:20: error[device_mismatch]: `.matmul()` combines a tensor on cpu with one on cuda:1\n"), "{out}");
    assert_eq!(out.lines().count(), 18);
}

#[test]
fn statistics_count_findings_per_rule() {
    let demo = demo();
    let output = placement(&[
        demo.to_str().unwrap(),
        "--message-format",
        "short",
        "--statistics",
    ]);
    let out = stdout(&output);
    let table: Vec<&str> = out.lines().skip(18).collect();
    assert_eq!(table[0], "     4  implicit_device");
    assert_eq!(table.len(), 7, "{out}");
    // Machine formats keep stdout for the report.
    let output = placement(&[
        demo.to_str().unwrap(),
        "--message-format",
        "sarif",
        "--statistics",
    ]);
    assert!(serde_json::from_str::<Value>(&stdout(&output)).is_ok());
    assert!(stderr(&output).contains("     4  implicit_device"));
}

#[test]
fn baselines_hide_known_findings_across_edits() {
    let copy = demo_copy();
    let root = copy.path().to_str().unwrap();
    let baseline = copy.path().join("placement-baseline.json");
    // Recording is an adoption step: it lists what it records and succeeds, whatever the levels.
    let output = placement(&[
        root,
        "--write-baseline",
        baseline.to_str().unwrap(),
        "-D",
        "warnings",
        "--message-format",
        "short",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("recorded 18 finding(s) in the baseline"),
        "{}",
        stderr(&output)
    );
    assert_eq!(stdout(&output).lines().count(), 18, "{}", stdout(&output));

    let output = placement(&[
        root,
        "--baseline",
        baseline.to_str().unwrap(),
        "--color",
        "never",
    ]);
    assert_eq!(
        stdout(&output),
        "no placement findings in 12 files (18 more in the baseline)\n"
    );

    // Lines move in one file, and a new finding appears in another.
    let encoder = copy.path().join("models/src/encoder.rs");
    let text = std::fs::read_to_string(&encoder).unwrap();
    std::fs::write(&encoder, format!("//! The encoder.\n\n{text}")).unwrap();
    let runtime = copy.path().join("models/src/runtime.rs");
    let text = std::fs::read_to_string(&runtime).unwrap();
    std::fs::write(
        &runtime,
        format!("{text}\npub fn fresh() -> gpu::Device {{\n    Device::Cuda(3)\n}}\n"),
    )
    .unwrap();
    let output = placement(&[
        root,
        "--baseline",
        baseline.to_str().unwrap(),
        "--message-format",
        "short",
    ]);
    let out = stdout(&output);
    assert_eq!(
        out,
        "models/src/runtime.rs:27:18: warning[hardcoded_device]: hard-coded GPU ordinal `3` in `Device::Cuda`\n"
    );
}

#[test]
fn bad_input_is_an_error_that_names_the_file() {
    let copy = demo_copy();
    let root = copy.path().to_str().unwrap();
    let bad = copy.path().join("corrupt.json");
    std::fs::write(&bad, "{ this is not json").unwrap();
    let output = placement(&[root, "--baseline", bad.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("corrupt.json is not a cargo-placement baseline"),
        "{}",
        stderr(&output)
    );

    let old = copy.path().join("old.json");
    placement(&[root, "--write-baseline", old.to_str().unwrap()]);
    let text = std::fs::read_to_string(&old)
        .unwrap()
        .replace(env!("CARGO_PKG_VERSION"), "0.0.1");
    std::fs::write(&old, text).unwrap();
    let output = placement(&[root, "--baseline", old.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("was written by cargo-placement 0.0.1"),
        "{}",
        stderr(&output)
    );

    for flag in ["--write-baseline", "--output"] {
        let output = placement(&[root, flag, "/no/such/folder/file.json"]);
        assert_eq!(output.status.code(), Some(2), "{flag}");
        assert!(
            stderr(&output).contains("/no/such/folder/file.json"),
            "{flag}: {}",
            stderr(&output)
        );
    }

    // A report and a baseline replace what was there whole, through a temporary file beside it
    // that is renamed over it: nothing else is left in the folder.
    let folder = tempfile::tempdir().unwrap();
    for (flag, name) in [
        ("--write-baseline", "baseline.json"),
        ("--output", "report.txt"),
    ] {
        let file = folder.path().join(name);
        std::fs::write(
            &file,
            "an old file, longer than what replaces it ".repeat(500),
        )
        .unwrap();
        placement(&[root, flag, file.to_str().unwrap()]);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains("an old file"), "{flag}: {text}");
    }
    let mut names: Vec<String> = std::fs::read_dir(folder.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["baseline.json", "report.txt"]);

    let output = placement(&[root, "--message-format", "xml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("invalid value 'xml'"),
        "{}",
        stderr(&output)
    );
    assert!(stdout(&output).is_empty(), "no silent empty report");
}

#[test]
fn with_check_forwards_cargo_then_appends_placement() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/check_and_lint");
    let target = tempfile::tempdir().unwrap();
    let output = assert_cmd::Command::cargo_bin("cargo-placement")
        .unwrap()
        .args([
            "placement",
            "--message-format=json",
            "--with-check",
            "check",
        ])
        .current_dir(&fixture)
        .env("CARGO_TARGET_DIR", target.path())
        .output()
        .unwrap();
    let text = stdout(&output);
    let mut codes = Vec::new();
    let mut finished = Vec::new();
    for message in Message::parse_stream(text.as_bytes()) {
        match message.unwrap() {
            Message::CompilerMessage(message) => codes.push(
                message
                    .message
                    .code
                    .map(|code| code.code)
                    .unwrap_or_default(),
            ),
            Message::BuildFinished(done) => finished.push(done.success),
            Message::CompilerArtifact(_) | Message::BuildScriptExecuted(_) => {}
            other => panic!("unexpected line: {other:?}"),
        }
    }
    assert!(codes.contains(&"unused_variables".to_owned()), "{codes:?}");
    assert_eq!(
        codes.last().map(String::as_str),
        Some("placement::late_visible_devices"),
        "{codes:?}"
    );
    assert_eq!(finished, [true], "one build-finished, at the end");
}

#[test]
fn editors_get_the_suggested_guard() {
    let demo = demo();
    let output = placement(&[demo.to_str().unwrap(), "--message-format", "json"]);
    let suggestion = Message::parse_stream(stdout(&output).as_bytes())
        .filter_map(|message| match message.unwrap() {
            Message::CompilerMessage(message) => Some(message.message),
            _ => None,
        })
        .flat_map(|message| message.children)
        .flat_map(|child| child.spans)
        .find(|span| span.suggested_replacement.is_some())
        .expect("a suggestion");
    assert_eq!(
        suggestion.suggested_replacement.as_deref(),
        Some("let _device_guard = implicit::DeviceGuard::new")
    );
    assert_eq!(
        suggestion.suggestion_applicability,
        Some(cargo_metadata::diagnostic::Applicability::MaybeIncorrect)
    );
    assert_eq!(suggestion.file_name, "models/src/runtime.rs");

    let fixes: Vec<Value> = sarif(&demo, &[])["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|result| result["fixes"].as_array().unwrap().clone())
        .collect();
    assert_eq!(fixes.len(), 1);
    assert_eq!(
        fixes[0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"],
        "let _device_guard = implicit::DeviceGuard::new"
    );
}
