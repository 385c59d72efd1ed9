//! Running `cargo placement` as a user does, on the bundled demo or on copies of it.

#![allow(dead_code, unreachable_pub)] // each test binary uses the part it needs

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;

pub fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/demo")
        .canonicalize()
        .expect("tests/demo")
}

/// The linter, as a user runs it: colours off unless asked for.
pub fn command() -> Command {
    let mut command = Command::cargo_bin("cargo-placement").expect("binary");
    command.env_remove("NO_COLOR");
    command
}

pub fn placement(args: &[&str]) -> Output {
    command().args(args).output().expect("runs")
}

/// The report of `dir` in `format`, from a run that exits 0 (warnings only).
pub fn report(dir: &Path, format: &str) -> String {
    let output = command()
        .arg(dir)
        .args(["--message-format", format])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    stdout(&output)
}

/// Writes `files` (path, text) under `root`, making folders as needed.
pub fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8")
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("utf-8")
}

/// A copy of the demo workspace to change.
pub fn demo_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for entry in walkdir::WalkDir::new(demo()) {
        let entry = entry.expect("walk");
        let relative = entry.path().strip_prefix(demo()).expect("inside");
        let target = dir.path().join(relative);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
    // The copy's path dependency on the runtime must still resolve for `cargo metadata`.
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../runtime")
        .canonicalize()
        .expect("runtime");
    for manifest in ["Cargo.toml", "models/Cargo.toml"] {
        let path = dir.path().join(manifest);
        let text = std::fs::read_to_string(&path).expect("manifest");
        let text = text
            .replace("\"../../runtime\"", &format!("{:?}", runtime))
            .replace("\"../../../runtime\"", &format!("{:?}", runtime));
        std::fs::write(&path, text).expect("write manifest");
    }
    dir
}
