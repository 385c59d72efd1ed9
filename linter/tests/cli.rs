//! `cargo placement` run as a user runs it, on the bundled demo workspace (`tests/demo`: renamed
//! and workspace-inherited dependencies, a library, a binary with a module, an example) and on
//! copies of it with a broken file, a bad configuration or suppressions.

use cargo_metadata::Message;

mod common;

use common::{demo, demo_copy, placement, stderr, stdout};

#[test]
fn demo_findings_for_people() {
    let demo = demo();
    let output = placement(&["placement", demo.to_str().unwrap(), "--color", "never"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    insta::assert_snapshot!("demo_human", stdout(&output));
}

#[test]
fn demo_findings_for_tools_parse_as_cargo_messages() {
    let demo = demo();
    let output = placement(&[demo.to_str().unwrap(), "--message-format", "json"]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    let mut messages = Vec::new();
    let mut finished = None;
    for message in Message::parse_stream(text.as_bytes()) {
        match message.expect("readable") {
            Message::CompilerMessage(message) => messages.push(message),
            Message::BuildFinished(done) => finished = Some(done.success),
            other => panic!("not a cargo message: {other:?}"),
        }
    }
    assert_eq!(finished, Some(true));
    assert_eq!(messages.len(), 18);
    let summary: Vec<String> = messages
        .iter()
        .map(|m| {
            let span = m
                .message
                .spans
                .iter()
                .find(|s| s.is_primary)
                .expect("primary span");
            let code = m.message.code.as_ref().expect("code").code.clone();
            format!(
                "{}:{}:{} {} [{}] {:?}",
                span.file_name,
                span.line_start,
                span.column_start,
                code,
                m.target.name,
                m.target.kind
            )
        })
        .collect();
    insta::assert_snapshot!("demo_json_summary", summary.join("\n"));
    for message in &messages {
        // The Python files belong to no package of the workspace: to its loose files.
        assert!(
            message.package_id.repr.contains("demo"),
            "{}",
            message.package_id
        );
        let rendered = message.message.rendered.as_deref().expect("rendered");
        assert!(rendered.contains(&message.message.message) && !rendered.contains('\u{1b}'));
        for span in &message.message.spans {
            let line = &span.text[0];
            let highlighted: String = line
                .text
                .chars()
                .skip(line.highlight_start - 1)
                .take(line.highlight_end - line.highlight_start)
                .collect();
            // A notebook's offsets count in its code cells joined (see `notebooks.rs`).
            if span.file_name.ends_with(".ipynb") {
                continue;
            }
            let source = std::fs::read_to_string(demo.join(&span.file_name)).expect("source");
            assert_eq!(
                &source[span.byte_start as usize..span.byte_end as usize],
                highlighted
            );
        }
        assert_eq!(
            message.message.children[0].level,
            cargo_metadata::diagnostic::DiagnosticLevel::Help
        );
    }
}

#[test]
fn deny_levels_set_the_exit_status() {
    let demo = demo();
    let demo = demo.to_str().unwrap();
    let output = placement(&[demo, "-D", "hardcoded_device", "--color", "never"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).ends_with("found 1 error and 17 warnings in 8 of 12 files\n"),
        "{}",
        stdout(&output)
    );
    // Later flags win, as with rustc.
    let output = placement(&[
        demo,
        "-D",
        "hardcoded_device",
        "-A",
        "hardcoded_device",
        "-A",
        "implicit_device",
    ]);
    assert_eq!(output.status.code(), Some(0));
    assert!(
        stdout(&output).ends_with("found 13 warnings in 8 of 12 files\n"),
        "{}",
        stdout(&output)
    );
    let output = placement(&[demo, "-D", "warnings"]);
    assert_eq!(output.status.code(), Some(1));
    let output = placement(&[demo, "-A", "nonsense"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("no rule named `nonsense`"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_broken_file_is_reported_and_the_rest_still_linted() {
    let copy = demo_copy();
    std::fs::write(copy.path().join("models/src/broken.rs"), "pub fn f( {\n").expect("write");
    let output = placement(&[copy.path().to_str().unwrap(), "--color", "never"]);
    // A file that could not be checked fails the run, as with rustc and ruff.
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert!(
        out.contains("placement::parse_error") && out.contains("models/src/broken.rs:"),
        "{out}"
    );
    assert!(
        out.ends_with("found 1 error and 18 warnings in 9 of 13 files\n"),
        "{out}"
    );
    // A project may lower it.
    let output = placement(&[copy.path().to_str().unwrap(), "-W", "parse_error"]);
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn a_bad_configuration_names_the_key() {
    let copy = demo_copy();
    std::fs::write(
        copy.path().join("placement.toml"),
        "[levels]\nimplicit_device = \"loud\"\n",
    )
    .expect("write");
    let output = placement(&[copy.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("placement.toml") && err.contains("implicit_device") && err.contains("loud"),
        "{err}"
    );

    std::fs::write(
        copy.path().join("placement.toml"),
        "entry_point = [\"x\"]\n",
    )
    .expect("write");
    let err = stderr(&placement(&[copy.path().to_str().unwrap()]));
    assert!(err.contains("unknown field `entry_point`"), "{err}");
}

#[test]
fn configuration_and_comments_change_what_is_reported() {
    let copy = demo_copy();
    let config = "entry_points = [\"demo_models::runtime::warm_up\"]\n\n[levels]\nlate_visible_devices = \"deny\"\n";
    std::fs::write(copy.path().join("placement.toml"), config).expect("write");
    let kernels = copy.path().join("models/src/kernels.rs");
    let text = std::fs::read_to_string(&kernels).expect("read");
    let text = text.replace(
        "        self.ctx.bind_to_thread().expect(\"bind the context\");",
        "        // placement: allow(stray_set_device)\n        self.ctx.bind_to_thread().expect(\"bind the context\");",
    );
    std::fs::write(
        &kernels,
        format!("//! placement: allow(implicit_device)\n{text}"),
    )
    .expect("write");
    let output = placement(&[copy.path().to_str().unwrap(), "--color", "never"]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{out}");
    assert!(
        !out.contains("`implicit::set_device`"),
        "configured entry point still flagged:\n{out}"
    );
    assert!(
        !out.contains("bind_to_thread") && !out.contains("mem_get_info"),
        "suppressed:\n{out}"
    );
    assert!(
        out.ends_with("found 6 errors and 7 warnings in 8 of 12 files\n"),
        "{out}"
    );
}

#[test]
fn plain_folders_are_linted_without_a_manifest() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("gpu.rs"),
        "pub fn pick() -> tch::Device { tch::Device::Cuda(2) }\n",
    )
    .expect("write");
    let output = placement(&[dir.path().to_str().unwrap(), "--color", "never"]);
    let out = stdout(&output);
    assert!(
        out.contains("hard-coded GPU ordinal `2`") && out.contains("gpu.rs:1:"),
        "{out}"
    );
}

#[test]
fn rules_are_listed_and_explained() {
    let out = stdout(&placement(&["placement", "rules"]));
    for rule in [
        "hardcoded_device",
        "implicit_device",
        "late_visible_devices",
        "parse_error",
        "stray_set_device",
    ] {
        assert!(out.contains(rule), "{out}");
    }
    let out = stdout(&placement(&["explain", "late_visible_devices"]));
    assert!(
        out.starts_with("# late_visible_devices (default: warn)\n\n## What it does\n"),
        "{out}"
    );
    let output = placement(&["explain", "no_such_rule"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output)
            .contains("the rules are: cuda_at_import, device_mismatch, hardcoded_device")
    );
}

#[test]
fn a_missing_path_is_an_error() {
    let output = placement(&["/no/such/folder"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("/no/such/folder does not exist"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn workspace_metadata_configures_too() {
    let copy = demo_copy();
    // `placement.toml` would take precedence over the manifest's table.
    std::fs::remove_file(copy.path().join("placement.toml")).expect("remove placement.toml");
    let manifest = copy.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("read");
    let config = "\n[workspace.metadata.placement.levels]\nimplicit_device = \"allow\"\n";
    std::fs::write(&manifest, text + config).expect("write");
    let output = placement(&[copy.path().to_str().unwrap(), "--color", "never"]);
    assert!(
        stdout(&output).ends_with("found 2 errors and 10 warnings in 8 of 12 files\n"),
        "{}",
        stdout(&output)
    );

    std::fs::write(
        &manifest,
        std::fs::read_to_string(&manifest)
            .unwrap()
            .replace("\"allow\"", "\"sometimes\""),
    )
    .expect("write");
    let output = placement(&[copy.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("[workspace.metadata.placement]") && err.contains("sometimes"),
        "{err}"
    );
}

#[test]
fn colours_only_when_asked_and_config_from_a_chosen_file() {
    let demo = demo();
    let demo = demo.to_str().unwrap();
    let plain = stdout(&placement(&[demo]));
    assert!(
        !plain.contains('\u{1b}'),
        "no colours or links when not on a terminal"
    );
    let coloured = stdout(&placement(&[demo, "--color", "always"]));
    assert!(coloured.contains("\u{1b}["), "colours on request");

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("strict.toml");
    std::fs::write(&config, "[levels]\ntransfer_in_loop = \"deny\"\n").unwrap();
    let output = placement(&[
        demo,
        "--config",
        config.to_str().unwrap(),
        "--message-format",
        "short",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("error[transfer_in_loop]"),
        "{}",
        stdout(&output)
    );
    let output = placement(&[demo, "--config", "/no/such/config.toml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("/no/such/config.toml"),
        "{}",
        stderr(&output)
    );
}

/// A suppression that silenced nothing is reported when `unused_allow` is on (it is off by
/// default); one that silenced a finding, or names a rule that is off, is not.
#[test]
fn suppressions_that_silence_nothing_are_reported_when_asked() {
    let dir = tempfile::tempdir().expect("temp dir");
    common::write_files(
        dir.path(),
        &[(
            "pkg/gpu.py",
            "import torch\n\n\ndef zeros(device):\n    \
             return torch.zeros(4, device=device)  # placement: allow(hardcoded_device)\n\n\n\
             def first():\n    return torch.device(\"cuda:0\")  # placement: allow(hardcoded_device)\n\n\n\
             def late(model):\n    return model.to(\"cuda\")  # placement: allow(silent_cpu_fallback)\n",
        )],
    );
    let path = dir.path().to_str().expect("a UTF-8 path");
    let run = |args: &[&str]| {
        let mut all = vec![path, "--message-format", "short"];
        all.extend(args);
        stdout(&placement(&all))
    };
    let by_default = run(&[]);
    assert!(!by_default.contains("unused_allow"), "{by_default}");
    let asked = run(&["-W", "unused_allow"]);
    let unused: Vec<&str> = asked
        .lines()
        .filter(|line| line.contains("unused_allow"))
        .collect();
    assert_eq!(
        unused,
        [
            "pkg/gpu.py:5:43: warning[unused_allow]: `placement: allow(hardcoded_device)` silences nothing"
        ],
        "{asked}"
    );
}
