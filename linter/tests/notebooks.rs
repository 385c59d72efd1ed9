//! Jupyter notebooks, linted as a user runs the linter on a folder that holds them: each
//! notebook's code cells as one program, positions by cell in every format, magics and
//! markdown skipped, broken notebooks reported while the rest is linted, allow comments and
//! baselines that work cell by cell.

mod common;

use std::path::{Path, PathBuf};

use cargo_metadata::Message;
use common::{placement, stderr, stdout, write_files};
use serde_json::Value;

/// `train.ipynb` (a finding of each rule that applies to programs, magics, markdown and raw
/// cells, allow comments), `broken.ipynb` (not JSON) and `old.ipynb` (nbformat 3).
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/notebooks")
}

/// A copy of fixture notebooks in a folder of their own.
fn copy_of(names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for name in names {
        std::fs::copy(fixtures().join(name), dir.path().join(name)).expect("copy");
    }
    dir
}

fn alone(name: &str) -> tempfile::TempDir {
    copy_of(&[name])
}

const RULES_ON: &[&str] = &[
    "-W",
    "unplaced_tensor",
    "-W",
    "unused_allow",
    "-W",
    "silent_cpu_fallback",
];

fn run(path: &Path, format: &str) -> std::process::Output {
    let mut args = vec![path.to_str().unwrap(), "--message-format", format];
    args.extend_from_slice(RULES_ON);
    placement(&args)
}

#[test]
fn findings_name_their_cell_and_the_rest_is_still_linted() {
    let dir = copy_of(&["broken.ipynb", "old.ipynb", "train.ipynb"]);
    let output = run(dir.path(), "short");
    // The broken notebooks are `parse_error`s, which deny.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    insta::assert_snapshot!("notebooks_short", stdout(&output));
}

#[test]
fn findings_for_people_show_the_cell_alone() {
    let dir = alone("train.ipynb");
    let output = run(&dir.path().join("train.ipynb"), "human");
    insta::assert_snapshot!("notebooks_human", stdout(&output));
}

#[test]
fn cargo_json_counts_lines_in_the_joined_cells_and_names_the_cell() {
    let dir = alone("train.ipynb");
    let output = run(dir.path(), "json");
    let text = stdout(&output);
    // `cargo_metadata`, the consumer of cargo's messages, reads them.
    let messages: Vec<_> = Message::parse_stream(text.as_bytes())
        .filter_map(|message| match message.expect("readable") {
            Message::CompilerMessage(message) => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(messages.len(), 7);
    // The line a span quotes is the line it counts in the joined code cells, and its cell is a
    // property of the span.
    let code: Vec<String> = joined_code(&fixtures().join("train.ipynb"));
    let mut cells = Vec::new();
    for line in text.lines() {
        let message: Value = serde_json::from_str(line).expect("JSON");
        let Some(spans) = message["message"]["spans"].as_array() else {
            continue;
        };
        for span in spans {
            let at = span["line_start"].as_u64().unwrap() as usize;
            assert_eq!(span["text"][0]["text"], code[at - 1], "{span}");
        }
        cells.push(spans[0]["cell"].as_u64().expect("a cell"));
    }
    assert_eq!(cells, [3, 5, 6, 7, 8, 9, 10]);
}

/// The code cells of a notebook joined, line by line, as the linter counts them.
fn joined_code(path: &Path) -> Vec<String> {
    let notebook: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut lines = Vec::new();
    for cell in notebook["cells"].as_array().unwrap() {
        if cell["cell_type"] == "code" {
            let source: String = (cell["source"].as_array().unwrap().iter())
                .map(|line| line.as_str().unwrap())
                .collect();
            lines.extend(source.lines().map(str::to_owned));
        }
    }
    lines
}

#[test]
fn sarif_and_github_annotations_carry_the_cell() {
    let dir = alone("train.ipynb");
    let output = run(dir.path(), "sarif");
    let document: Value = serde_json::from_str(&stdout(&output)).expect("SARIF is JSON");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    assert!(validator.is_valid(&document));
    let region = &document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["properties"]["cell"], 3);
    assert_eq!(region["properties"]["lineInCell"], 3);
    assert_eq!(region["startLine"], 9);

    // The runner would place a line in the notebook's JSON: the annotation is the file's, and
    // its message says where in the notebook.
    let output = run(dir.path(), "github");
    let first = stdout(&output).lines().next().unwrap().to_owned();
    assert!(
        first.starts_with(
            "::error file=train.ipynb,title=placement%3A%3Adevice_mismatch::cell 3:3:5: `x @ w`"
        ),
        "{first}"
    );
}

#[test]
fn a_notebook_given_by_name_is_linted() {
    let dir = alone("train.ipynb");
    let output = placement(&[dir.path().join("train.ipynb").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("train.ipynb:cell 3:3:5"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn outputs_do_not_count_towards_the_size_limit() {
    let dir = alone("train.ipynb");
    let path = dir.path().join("train.ipynb");
    let mut notebook: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // 2 MB of an embedded image, over a limit of 64 KiB.
    let image = "A".repeat(2 << 20);
    notebook["cells"][2]["outputs"] = serde_json::json!([
        {"output_type": "display_data", "data": {"image/png": image}, "metadata": {}}
    ]);
    std::fs::write(&path, notebook.to_string()).unwrap();
    write_files(
        dir.path(),
        &[("placement.toml", "max_file_size = \"64 KiB\"\n")],
    );
    let output = placement(&[dir.path().to_str().unwrap(), "--message-format", "short"]);
    let out = stdout(&output);
    assert!(
        out.contains("train.ipynb:cell 3:3:5: error[device_mismatch]"),
        "{out}"
    );
    assert!(!out.contains("too large"), "{out}");
}

#[test]
fn baselines_match_across_edits_of_other_cells() {
    let dir = alone("train.ipynb");
    let root = dir.path().to_str().unwrap();
    let baseline = dir.path().join("baseline.json");
    let baseline = baseline.to_str().unwrap();
    let output = placement(&[root, "--write-baseline", baseline]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    // A cell gains lines above every finding, and a new finding appears in a new cell.
    let path = dir.path().join("train.ipynb");
    let mut notebook: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let cells = notebook["cells"].as_array_mut().unwrap();
    cells[1]["source"] = serde_json::json!([
        "import math\n",
        "import sys\n",
        "import os\n",
        "\n",
        "import torch\n",
        "from torch import nn\n"
    ]);
    cells.push(serde_json::json!({
        "cell_type": "code", "metadata": {}, "execution_count": null, "outputs": [],
        "source": ["u = torch.ones(2, device=\"cuda:0\")\n", "v = torch.ones(2)\n", "uv = u + v\n"],
    }));
    std::fs::write(&path, notebook.to_string()).unwrap();
    let output = placement(&[root, "--baseline", baseline, "--message-format", "short"]);
    let out = stdout(&output);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with("train.ipynb:cell 12:3:6: error[device_mismatch]"),
        "{out}"
    );
}

#[test]
fn a_module_that_notebooks_import_is_library_code() {
    let dir = tempfile::tempdir().expect("temp dir");
    let agent = "import torch\n\n\ndef act(x):\n    return x.to(\"cuda:1\")\n\n\n\
                 if __name__ == \"__main__\":\n    act(torch.zeros(2))\n";
    write_files(dir.path(), &[("agent.py", agent)]);
    let root = dir.path().to_str().unwrap();
    // Alone, it is a program: its own main guard runs it.
    let output = placement(&[root, "--message-format", "short"]);
    assert_eq!(stdout(&output), "");
    let notebook = serde_json::json!({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {},
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": null, "outputs": [],
                   "source": ["from agent import act\n", "import torch\n", "act(torch.zeros(2))\n"]}],
    });
    write_files(dir.path(), &[("play.ipynb", &notebook.to_string())]);
    let output = placement(&[root, "--message-format", "short"]);
    assert_eq!(
        stdout(&output),
        "agent.py:5:17: warning[hardcoded_device]: hard-coded GPU ordinal `1` in `\"cuda:1\"`\n"
    );
}
