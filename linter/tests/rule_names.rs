//! The code a report prints is accepted back wherever a rule is named, and the command line
//! reads levels as rustc and clippy do: `placement::implicit_device` is `implicit_device`, `-A
//! a,b` is two rules, `-A warnings` and `-D warnings` set every rule at `warn`, levels after `--`
//! are levels, `--select` runs only some rules, and a rule that does not exist is an error.

mod common;

use common::{command, stderr, stdout};

/// A folder with one finding of each of two rules at `warn`, and a fallback (off by default).
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.py"),
        "import torch\n\n\ndef load(model):\n    return model.cuda(1), model.cuda()\n\n\n\
         def pick(index):\n    return torch.device(f\"cuda:{index}\" if torch.cuda.is_available() else \"cpu\")\n",
    )
    .unwrap();
    dir
}

/// The rules of a short report, and the exit status.
fn rules_reported(dir: &tempfile::TempDir, args: &[&str]) -> (Vec<String>, Option<i32>) {
    let output = command()
        .arg(dir.path())
        .args(["--message-format", "short"])
        .args(args)
        .output()
        .unwrap();
    let rules = stdout(&output)
        .lines()
        .filter_map(|line| Some(line.split_once(": ")?.1.split_once(':')?.0.to_owned()))
        .collect();
    (rules, output.status.code())
}

#[test]
fn the_printed_code_names_a_rule_everywhere() {
    let dir = project();
    let (rules, _) = rules_reported(&dir, &["-A", "placement::hardcoded_device"]);
    assert_eq!(rules, ["warning[implicit_device]"]);
    let (rules, _) = rules_reported(&dir, &["-A", "hardcoded_device,implicit_device"]);
    assert!(rules.is_empty(), "{rules:?}");
    std::fs::write(
        dir.path().join("placement.toml"),
        "[levels]\n\"placement::implicit_device\" = \"deny\"\n",
    )
    .unwrap();
    let (rules, status) = rules_reported(&dir, &[]);
    assert_eq!(
        rules,
        ["warning[hardcoded_device]", "error[implicit_device]"]
    );
    assert_eq!(status, Some(1));
    let explain = command()
        .args(["explain", "placement::implicit_device"])
        .output()
        .unwrap();
    assert!(
        stdout(&explain).starts_with("# implicit_device"),
        "{}",
        stderr(&explain)
    );
}

#[test]
fn warnings_and_levels_after_the_separator_read_as_rustc_reads_them() {
    let dir = project();
    let (rules, status) = rules_reported(&dir, &["-A", "warnings"]);
    assert!(rules.is_empty(), "{rules:?}");
    assert_eq!(status, Some(0));
    let (rules, status) = rules_reported(&dir, &["--", "-D", "warnings"]);
    assert_eq!(rules, ["error[hardcoded_device]", "error[implicit_device]"]);
    assert_eq!(status, Some(1));
    // The last of `-A warnings` and `-D warnings` wins.
    let (_, status) = rules_reported(&dir, &["-D", "warnings", "-A", "warnings"]);
    assert_eq!(status, Some(0));
}

#[test]
fn select_runs_only_the_rules_named() {
    let dir = project();
    let (rules, _) = rules_reported(&dir, &["--select", "silent_cpu_fallback"]);
    assert_eq!(rules, ["warning[silent_cpu_fallback]"]);
    let (rules, _) = rules_reported(
        &dir,
        &["--select", "hardcoded_device", "-D", "hardcoded_device"],
    );
    assert_eq!(rules, ["error[hardcoded_device]"]);
}

#[test]
fn a_rule_that_does_not_exist_is_an_error() {
    let dir = project();
    for args in [
        &["-A", "no_such_rule"][..],
        &["--select", "hardcoded_device,nope"],
    ] {
        let output = command().arg(dir.path()).args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).contains("no rule named `"),
            "{}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty());
    }
}

/// `per_file_ignores` (`per-file-ignores`, as ruff spells it) keeps rules quiet in the files a
/// glob matches, and only there.
#[test]
fn per_file_ignores_silence_rules_in_matching_files() {
    let dir = tempfile::tempdir().unwrap();
    let code = "import torch\n\n\ndef f(x):\n    return x.cuda(), x.cuda(1)\n";
    std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
    std::fs::create_dir_all(dir.path().join("notebooks")).unwrap();
    std::fs::write(dir.path().join("pkg/__init__.py"), "").unwrap();
    std::fs::write(dir.path().join("pkg/m.py"), code).unwrap();
    std::fs::write(dir.path().join("notebooks/helpers.py"), code).unwrap();
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[tool.placement.per-file-ignores]\n\"notebooks/**\" = [\"implicit_device\", \
         \"placement::hardcoded_device\"]\n",
    )
    .unwrap();
    let output = command()
        .arg(dir.path())
        .args(["--message-format", "short"])
        .output()
        .unwrap();
    let out = stdout(&output);
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(
        out.lines().all(|line| line.starts_with("pkg/m.py:")),
        "{out}"
    );
}

/// A rule name no rule has, in a configuration or an `allow` comment, is a warning that names
/// the command listing the rules as the user ran it: `placement rules` for a Python user.
#[test]
fn unknown_rule_names_point_to_the_command_that_lists_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[tool.placement.levels]\nbogus_rule = \"deny\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("a.py"),
        "import torch  # placement: allow(other_bogus)\n",
    )
    .unwrap();
    for (binary, listing) in [
        ("placement", "`placement rules`"),
        ("cargo-placement", "`cargo placement rules`"),
    ] {
        let mut command = assert_cmd::Command::cargo_bin(binary).unwrap();
        if binary == "cargo-placement" {
            command.arg("placement");
        }
        let output = command.arg(dir.path()).output().unwrap();
        let err = stderr(&output);
        assert!(
            err.contains("unknown rule `bogus_rule` in the levels of"),
            "{err}"
        );
        assert!(
            err.contains("unknown rule `other_bogus` in a `placement: allow`"),
            "{err}"
        );
        assert!(
            err.contains(&format!("note: {listing} lists the rules")),
            "{err}"
        );
        assert!(
            !err.contains("cargo") || binary == "cargo-placement",
            "{err}"
        );
    }
}
