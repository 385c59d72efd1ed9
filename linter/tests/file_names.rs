//! Files are reported under their own names in every format: a name that is not UTF-8 has its
//! bytes escaped (`bad\xFF.py`), never replaced, and a backslash in a Unix file name is part of
//! the name, not a separator. No name makes a report fail.

mod common;

use cargo_metadata::Message;
use common::{report, stderr, stdout};

const CUDA: &str = "import torch\nx = torch.zeros(3).cuda()\n";

/// The file names of the JSON report's primary spans.
fn json_file_names(out: &str) -> Vec<String> {
    Message::parse_stream(out.as_bytes())
        .map(|message| message.expect("cargo_metadata reads every message"))
        .filter_map(|message| match message {
            Message::CompilerMessage(message) => Some(message.message.spans[0].file_name.clone()),
            _ => None,
        })
        .collect()
}

/// The findings of a folder in short and JSON form, each run exiting 0 (warnings only).
fn short_and_json(dir: &std::path::Path) -> (String, Vec<String>) {
    (report(dir, "short"), json_file_names(&report(dir, "json")))
}

#[cfg(unix)]
#[test]
fn a_name_that_is_not_utf8_is_reported_with_its_bytes_escaped() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let name = std::ffi::OsStr::from_bytes(b"bad\xffname.py");
    std::fs::write(dir.path().join(name), CUDA).unwrap();
    let (short, json) = short_and_json(dir.path());
    assert!(
        short.starts_with("bad\\xFFname.py:2:19: warning[implicit_device]"),
        "{short}"
    );
    assert_eq!(json, ["bad\\xFFname.py"]);
}

#[cfg(unix)]
#[test]
fn a_backslash_in_a_file_name_is_part_of_the_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("back\\slash.py"), CUDA).unwrap();
    let (short, json) = short_and_json(dir.path());
    assert!(
        short.starts_with("back\\slash.py:2:19: warning[implicit_device]"),
        "{short}"
    );
    assert_eq!(json, ["back\\slash.py"]);
}

/// The `placement` binary speaks of itself: its version, SARIF's tool and the explain command
/// a Python file's report points to are `placement`'s.
#[test]
fn the_placement_binary_names_itself() {
    let placement = || std::process::Command::new(env!("CARGO_BIN_EXE_placement"));
    let version = placement().arg("--version").output().unwrap();
    assert!(
        stdout(&version).starts_with("placement "),
        "{}",
        stdout(&version)
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), CUDA).unwrap();
    let sarif = placement()
        .arg(dir.path())
        .args(["--message-format", "sarif"])
        .output()
        .unwrap();
    let document: serde_json::Value = serde_json::from_str(&stdout(&sarif)).unwrap();
    assert_eq!(document["runs"][0]["tool"]["driver"]["name"], "placement");
    let json = placement()
        .arg(dir.path())
        .args(["--message-format", "json"])
        .output()
        .unwrap();
    assert!(
        stdout(&json).contains("for more, run `placement explain implicit_device`"),
        "{}",
        stdout(&json)
    );
    // No Cargo manifest that does not exist: the folder of a Python project without one.
    for line in stdout(&json).lines() {
        let message: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(manifest) = message["manifest_path"].as_str() {
            assert!(std::path::Path::new(manifest).exists(), "{manifest}");
        }
    }
    let empty = tempfile::tempdir().unwrap();
    let nothing = placement().arg(empty.path()).output().unwrap();
    assert!(
        stderr(&nothing).contains("no Python or Rust files found"),
        "{}",
        stderr(&nothing)
    );
}

#[test]
fn files_no_project_claims_are_named_from_the_current_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("work/pkg")).unwrap();
    std::fs::write(dir.path().join("work/pkg/x.py"), CUDA).unwrap();
    let short = |cwd: &str, arg: &str| {
        let output = common::command()
            .args([arg, "--message-format", "short"])
            .current_dir(dir.path().join(cwd))
            .output()
            .unwrap();
        stdout(&output)
    };
    // From a folder above, a file or a folder is named as the terminal there opens it.
    assert!(
        short("work", "pkg/x.py").starts_with("pkg/x.py:2:19: "),
        "{}",
        short("work", "pkg/x.py")
    );
    assert!(
        short("work", "pkg").starts_with("pkg/x.py:2:19: "),
        "{}",
        short("work", "pkg")
    );
    assert!(
        short("work/pkg", ".").starts_with("x.py:2:19: "),
        "{}",
        short("work/pkg", ".")
    );
    // A project's configuration makes its folder the root, wherever the run starts.
    std::fs::write(dir.path().join("work/pkg/placement.toml"), "").unwrap();
    assert!(
        short("work", "pkg").starts_with("x.py:2:19: "),
        "{}",
        short("work", "pkg")
    );
}
