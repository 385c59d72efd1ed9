//! Hostile and unusual files: deep nesting, huge and invalid files, a closed pipe, byte order
//! marks, shebangs and non-ASCII text. None of them crashes the run or moves a position; a
//! file that cannot be linted is reported and the others are linted.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};

use cargo_metadata::Message;
use common::{demo, placement, stderr, stdout, write_files};

const GPU_ONE: &str = "pub fn f() -> tch::Device { tch::Device::Cuda(1) }\n";

#[test]
fn deep_nesting_is_linted_or_reported_never_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let blocks = format!(
        "pub fn f() -> i32 {{{} tch::Device::Cuda(1); 1 {}}}\n",
        "{".repeat(450),
        "}".repeat(450)
    );
    let parens = format!(
        "pub fn f() {{ let _ = {}tch::Device::Cuda(2){}; }}\n",
        "(".repeat(1_024),
        ")".repeat(1_024)
    );
    let chain = format!(
        "pub fn f() {{ let _ = tch::Device::Cuda(3){}; }}\n",
        ".clone()".repeat(5_000)
    );
    let abyss = format!(
        "pub fn f() {{{}{}}}\n",
        "{".repeat(200_000),
        "}".repeat(200_000)
    );
    write_files(
        dir.path(),
        &[
            ("blocks.rs", &blocks),
            ("parens.rs", &parens),
            ("chain.rs", &chain),
            ("abyss.rs", &abyss),
        ],
    );
    let output = placement(&[dir.path().to_str().unwrap(), "--message-format", "short"]);
    // The file too deep to lint fails the run.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let out = stdout(&output);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(lines[0].starts_with("abyss.rs:1:") && lines[0].contains("nesting too deep"));
    assert!(lines[1].starts_with("blocks.rs:1:") && lines[1].contains("ordinal `1`"));
    assert!(lines[2].starts_with("chain.rs:1:") && lines[2].contains("ordinal `3`"));
    assert!(lines[3].starts_with("parens.rs:1:") && lines[3].contains("ordinal `2`"));
}

#[test]
fn files_over_the_size_limit_are_reported_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let generated = format!("// generated\n{}", "pub const X: u8 = 0;\n".repeat(100));
    write_files(
        dir.path(),
        &[
            ("placement.toml", "max_file_size = \"1KiB\"\n"),
            ("generated.rs", &generated),
            ("gpu.rs", GPU_ONE),
        ],
    );
    let output = placement(&[dir.path().to_str().unwrap(), "--message-format", "short"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "generated.rs:1:1: error[parse_error]: file is too large to lint (2.1 KiB, over the limit of 1.0 KiB)\n\
         gpu.rs:1:47: warning[hardcoded_device]: hard-coded GPU ordinal `1` in `tch::Device::Cuda`\n"
    );
    std::fs::write(
        dir.path().join("placement.toml"),
        "max_file_size = \"lots\"\n",
    )
    .unwrap();
    let output = placement(&[dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("max_file_size") && err.contains("`lots` is not a size"),
        "{err}"
    );
}

#[test]
fn invalid_utf8_is_reported_at_its_first_bad_byte() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("gpu.rs", GPU_ONE)]);
    std::fs::write(
        dir.path().join("latin1.rs"),
        b"// caf\xe9\npub fn f() -> tch::Device { tch::Device::Cuda(1) }\n",
    )
    .unwrap();
    let output = placement(&[dir.path().to_str().unwrap(), "--message-format", "short"]);
    assert_eq!(
        stdout(&output),
        "gpu.rs:1:47: warning[hardcoded_device]: hard-coded GPU ordinal `1` in `tch::Device::Cuda`\n\
         latin1.rs:1:7: error[parse_error]: file is not valid UTF-8\n",
        "not linted past the bad byte"
    );
}

#[test]
fn a_closed_pipe_ends_the_run_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cargo-placement"))
        .args([demo().to_str().unwrap(), "--message-format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before anything is written (`| head -0`).
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
}

#[test]
fn positions_ignore_a_byte_order_mark_and_a_shebang_and_count_characters() {
    let dir = tempfile::tempdir().unwrap();
    let bom = "\u{feff}#!/usr/bin/env run-cargo-script\n// \u{e9}t\u{e9}\n\
               pub fn f() -> tch::Device { let \u{e9}t\u{e9} = 0; tch::Device::Cuda(1) }\n";
    let suppressed = concat!(
        "\u{feff}pub fn g() -> tch::Device { tch::Device::Cuda(1) } // placement: ",
        "allow(hardcoded_device)\n"
    );
    write_files(
        dir.path(),
        &[("bom.rs", bom), ("suppressed.rs", suppressed)],
    );
    let root = dir.path().to_str().unwrap();
    let output = placement(&[root, "--message-format", "json"]);
    let messages: Vec<_> = Message::parse_stream(stdout(&output).as_bytes())
        .filter_map(|message| match message.unwrap() {
            Message::CompilerMessage(message) => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(
        messages.len(),
        1,
        "the suppression holds after a byte order mark"
    );
    let span = &messages[0].message.spans[0];
    let column = bom
        .lines()
        .nth(2)
        .unwrap()
        .chars()
        .position(|c| c == '1')
        .unwrap()
        + 1;
    assert_eq!((span.line_start, span.column_start), (3, column));
    assert_eq!(&bom[span.byte_start as usize..span.byte_end as usize], "1");
    // The human header and the JSON `rendered` say the same line and column as the spans.
    let header = format!("[bom.rs:3:{column}]");
    let rendered = messages[0].message.rendered.as_deref().unwrap();
    assert!(rendered.contains(&header), "{rendered}");
    let human = stdout(&placement(&[root, "--color", "never"]));
    assert!(human.contains(&header), "{human}");

    // A baseline records the flagged text itself.
    let baseline = dir.path().join("baseline.json");
    placement(&[root, "--write-baseline", baseline.to_str().unwrap()]);
    let recorded = std::fs::read_to_string(&baseline).unwrap();
    assert!(recorded.contains("\"snippet\": \"1\""), "{recorded}");
}

#[test]
fn sarif_uris_are_percent_encoded() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("gpu pick/100%.rs", GPU_ONE)]);
    let output = placement(&[dir.path().to_str().unwrap(), "--message-format", "sarif"]);
    let document: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let location = &document["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "gpu%20pick/100%25.rs");
}

/// A lone carriage return (an old Mac file's line break) ends a line, as Python and editors take
/// it: findings land on their own lines, and an `allow` comment silences only its own.
#[test]
fn lone_carriage_returns_end_lines() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[(
            "old_mac.py",
            "import torch\rx = torch.zeros(3).cuda(1)\r\
             y = torch.zeros(3).cuda(2)  # placement: allow(hardcoded_device)\r",
        )],
    );
    let output = placement(&[dir.path().to_str().unwrap(), "--message-format", "short"]);
    assert_eq!(
        stdout(&output).lines().collect::<Vec<_>>(),
        ["old_mac.py:2:25: warning[hardcoded_device]: hard-coded GPU ordinal `1` in `.cuda(1)`"],
        "{}",
        stderr(&output)
    );
}

/// `.cuda()` after a line break (a comment, a backslash) is reported at the method, on its own
/// line: the message quotes the call, and an `allow` comment there applies.
#[test]
fn a_call_after_a_line_break_is_reported_at_its_method() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[(
            "broken.py",
            "import torch\n\n\ndef f(x):\n    y = (x  # move\n         .cuda())\n    z = x \\\n        \
             .cuda()  # placement: allow(implicit_device)\n    return y, z\n",
        )],
    );
    let output = placement(&[dir.path().to_str().unwrap(), "--message-format", "short"]);
    assert_eq!(
        stdout(&output).lines().collect::<Vec<_>>(),
        ["broken.py:6:10: warning[implicit_device]: `.cuda()` uses whatever device is current"],
        "{}",
        stderr(&output)
    );
}

/// Many findings on one long line (generated code): each JSON message quotes the part of the
/// line around its own finding, not the whole line again, so the report grows with the findings
/// rather than with findings times the line.
#[test]
fn json_quotes_a_long_line_around_each_finding() {
    let dir = tempfile::tempdir().unwrap();
    let calls = vec!["x.cuda()"; 3_000].join(", ");
    write_files(
        dir.path(),
        &[(
            "generated.py",
            &format!("import torch\n\n\ndef f(x):\n    return [{calls}]\n"),
        )],
    );
    let output = placement(&[dir.path().to_str().unwrap(), "--message-format", "json"]);
    let out = stdout(&output);
    let messages: Vec<_> = Message::parse_stream(out.as_bytes())
        .filter_map(|message| match message.unwrap() {
            Message::CompilerMessage(message) => Some(message.message),
            _ => None,
        })
        .collect();
    assert_eq!(messages.len(), 3_000);
    for message in &messages {
        let line = &message.spans[0].text[0];
        assert!(line.text.len() < 400, "{}", line.text.len());
        let highlighted: String = line
            .text
            .chars()
            .skip(line.highlight_start - 1)
            .take(line.highlight_end - line.highlight_start)
            .collect();
        assert_eq!(highlighted, ".cuda()");
    }
    assert!(out.len() < 20 << 20, "{} bytes", out.len());
}

/// A Python file that is not UTF-8 is reported in Python's words (its coding declaration), not
/// in rustc's.
#[test]
fn a_python_file_that_is_not_utf8_is_reported_in_pythons_words() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("latin1.py"),
        b"# -*- coding: latin-1 -*-\n# caf\xe9\nimport torch\n",
    )
    .unwrap();
    let output = placement(&[dir.path().to_str().unwrap(), "--color", "never"]);
    let out = stdout(&output);
    assert!(
        out.contains("latin1.py:2:6") && out.contains("coding"),
        "{out}"
    );
    assert!(!out.contains("rustc"), "{out}");
}
