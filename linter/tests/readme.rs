//! The README's section on CI, editors and pre-commit is run: every `cargo placement` command
//! it shows (in shell blocks, workflow `run:` steps and the pre-commit `entry`) on a copy of the
//! demo project, and the rust-analyzer command on a crate with a rustc warning and a placement
//! finding.

mod common;

use assert_cmd::Command;
use cargo_metadata::Message;
use common::{demo_copy, stderr, stdout};

fn section() -> &'static str {
    let readme = include_str!("../../README.md");
    let start = readme
        .find("<!-- ci-commands:start -->")
        .expect("start marker");
    let end = readme.find("<!-- ci-commands:end -->").expect("end marker");
    &readme[start..end]
}

/// The `cargo placement …` commands of the section, as argument lists after `placement`.
fn commands() -> Vec<Vec<String>> {
    section()
        .lines()
        .map(|line| {
            line.trim()
                .trim_start_matches("- ")
                .trim_start_matches("run: ")
                .trim_start_matches("entry: ")
        })
        .filter(|line| line.starts_with("cargo placement"))
        .map(|line| line.split_whitespace().skip(2).map(str::to_owned).collect())
        .collect()
}

#[test]
fn ci_commands_run_on_the_demo() {
    let commands = commands();
    assert!(commands.len() >= 6, "{commands:?}");
    let copy = demo_copy();
    for args in &commands {
        let output = Command::cargo_bin("cargo-placement")
            .unwrap()
            .args(args)
            .current_dir(copy.path())
            .output()
            .unwrap();
        let code = output.status.code();
        assert!(
            code == Some(0) || code == Some(1),
            "`cargo placement {}` failed: {}",
            args.join(" "),
            stderr(&output)
        );
        if args.contains(&"github".to_owned()) {
            assert!(
                stdout(&output).lines().all(|line| line.starts_with("::")),
                "{}",
                stdout(&output)
            );
            assert_eq!(code, Some(1), "-D warnings fails the step");
        }
    }
    let sarif: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(copy.path().join("placement.sarif")).unwrap(),
    )
    .unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert!(copy.path().join("placement-baseline.json").is_file());
}

#[test]
fn the_editor_command_gives_cargo_and_placement_messages() {
    let section = section();
    let start = section
        .find("\"rust-analyzer.check.overrideCommand\": [")
        .expect("VS Code setting")
        + 39;
    let end = start + section[start..].find(']').unwrap() + 1;
    let command: Vec<String> = serde_json::from_str(&section[start..end]).expect("a JSON array");
    assert_eq!(command[..2], ["cargo", "placement"]);
    assert!(
        section.contains(&format!(
            "overrideCommand = {{ {} }}",
            command
                .iter()
                .map(|a| format!("{a:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        "Neovim gives the same command"
    );

    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/check_and_lint");
    let target = tempfile::tempdir().unwrap();
    let output = Command::cargo_bin("cargo-placement")
        .unwrap()
        .args(&command[1..])
        .current_dir(&fixture)
        .env("CARGO_TARGET_DIR", target.path())
        .output()
        .unwrap();
    let codes: Vec<String> = Message::parse_stream(stdout(&output).as_bytes())
        .filter_map(|message| match message.unwrap() {
            Message::CompilerMessage(message) => message.message.code.map(|code| code.code),
            _ => None,
        })
        .collect();
    assert!(
        codes.iter().any(|code| code == "unused_variables"),
        "{codes:?}"
    );
    assert!(
        codes
            .iter()
            .any(|code| code == "placement::late_visible_devices"),
        "{codes:?}"
    );
}
