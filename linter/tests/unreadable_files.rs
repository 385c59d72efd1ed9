//! A source file that cannot be read (a link to nothing, no permission) is a finding like a file
//! that cannot be parsed: a strict run fails, and SARIF says the file was not analysed.

mod common;

use common::{command, stderr, stdout};

#[cfg(unix)]
#[test]
fn a_file_that_cannot_be_read_fails_a_strict_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ok.py"), "import torch\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("gone.py"), dir.path().join("dangling.py")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("gone.rs"), dir.path().join("dangling.rs")).unwrap();
    let output = command()
        .arg(dir.path())
        .args(["--message-format", "short", "-D", "warnings"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let out = stdout(&output);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "dangling.py:1:1: error[parse_error]: cannot read the file: it does not exist (a link \
             to nothing?)",
            "dangling.rs:1:1: error[parse_error]: cannot read the file: it does not exist (a link \
             to nothing?)",
        ],
        "{out}"
    );
    // Said once, as a finding, not again as a note of the walk.
    assert!(!stderr(&output).contains("dangling"), "{}", stderr(&output));

    let sarif = command()
        .arg(dir.path())
        .args(["--message-format", "sarif"])
        .output()
        .unwrap();
    let document: serde_json::Value = serde_json::from_str(&stdout(&sarif)).unwrap();
    let notifications = &document["runs"][0]["invocations"][0]["toolExecutionNotifications"];
    let uris: Vec<&str> = notifications
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(uris, ["dangling.py", "dangling.rs"]);
}
