//! What a linted file holds cannot drive the terminal that shows the report, nor forge a line of
//! it: control characters are drawn as pictures in snippets (`␛`, as rustc draws them) and
//! escaped in messages (`\u{1b}`), and a message that quotes code across lines keeps one line.

mod common;

use common::report;

#[test]
fn control_characters_of_a_file_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    // ESC and BEL retitle a terminal; a C1 CSI (U+009B) recolours it; DEL erases.
    std::fs::write(
        dir.path().join("a.py"),
        "import torch\nz = \"\u{1b}]0;t\u{7}\u{9b}31m\u{7f}\"; x = torch.zeros(3).cuda(1)\n",
    )
    .unwrap();
    for format in ["human", "short", "github"] {
        let out = report(dir.path(), format);
        let raw: Vec<char> = out
            .chars()
            .filter(|c| c.is_control() && *c != '\n')
            .collect();
        assert!(raw.is_empty(), "{format}: {raw:?} in {out}");
        let at = if format == "github" {
            "line=2,col=44"
        } else {
            "2:44"
        };
        assert!(out.contains(at), "{format}: {out}");
    }
    let human = report(dir.path(), "human");
    assert!(human.contains("z = \"␛]0;t␇�31m␡\""), "{human}");
}

#[test]
fn a_message_quoting_code_across_lines_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.py"),
        "import torch\nx = torch.zeros(3).cuda(1, non_blocking=\"\"\"\n\
         pkg/other.py:1:1: error[hardcoded_device]: forged\n\"\"\")\n",
    )
    .unwrap();
    let short = report(dir.path(), "short");
    assert_eq!(
        short.lines().collect::<Vec<_>>(),
        [
            "a.py:2:25: warning[hardcoded_device]: hard-coded GPU ordinal `1` in `.cuda(1, \
          non_blocking=\"\"\"…`"
        ],
        "{short}"
    );
}
