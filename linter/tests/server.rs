//! `placement server` driven by an LSP client over stdio, as an editor drives it: a buffer
//! opened and typed into gets diagnostics from its unsaved text, with what the rest of the
//! workspace told it; fixed, they are cleared; code actions allow and explain a rule; the
//! server shuts down when asked.

mod common;

#[path = "common/lsp.rs"]
mod lsp;

use common::write_files;
use lsp::{Client, uri};
use serde_json::{Value, json};

fn binary() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("cargo-placement")
}

/// A package with a device chooser in one module, re-exported by the package.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(
        dir.path(),
        &[
            ("pkg/__init__.py", "from .devices import pick\n"),
            (
                "pkg/devices.py",
                "import torch\n\n\ndef pick():\n    return \"cuda\" if torch.cuda.is_available() else \"cpu\"\n",
            ),
            ("pkg/model.py", "import torch\n"),
            (
                "pkg/stray.py",
                "import torch\n\n\ndef warm(rank):\n    torch.cuda.set_device(rank)\n",
            ),
        ],
    );
    dir
}

const CALLS_CHOOSER: &str = "import torch\n\nfrom pkg import pick\n\n\ndef load():\n    return torch.zeros(2, device=pick())\n";
const FIXED: &str =
    "import torch\n\n\ndef load(device):\n    return torch.zeros(2, device=device)\n";

#[test]
fn diagnostics_follow_the_buffer_as_it_is_typed() {
    let dir = workspace();
    let mut client = Client::start(&binary(), dir.path(), json!({}));
    // The whole run publishes the files with findings.
    let stray = uri(&dir.path().join("pkg/stray.py"));
    let found = client.diagnostics(&stray);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["code"], "stray_set_device");

    let model = uri(&dir.path().join("pkg/model.py"));
    client.open(&model, "python", "import torch\n");
    assert_eq!(client.diagnostics(&model), Vec::<Value>::new());
    // Unsaved text that calls another module's chooser, through the package's re-export.
    client.change(&model, 2, CALLS_CHOOSER);
    let found = client.diagnostics(&model);
    assert_eq!(found.len(), 1, "{found:?}");
    let diagnostic = &found[0];
    assert_eq!(diagnostic["code"], "implicit_device");
    assert_eq!(diagnostic["source"], "placement");
    assert_eq!(diagnostic["severity"], 2);
    assert_eq!(
        diagnostic["range"],
        json!({"start": {"line": 6, "character": 33}, "end": {"line": 6, "character": 39}})
    );
    let href = diagnostic["codeDescription"]["href"].as_str().unwrap();
    let doc = std::fs::read_to_string(href.strip_prefix("file://").unwrap()).unwrap();
    assert!(
        doc.starts_with("# implicit_device (default: warn)"),
        "{doc}"
    );

    // Allow it on its line, or explain the rule.
    let actions = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": model},
            "range": diagnostic["range"],
            "context": {"diagnostics": [diagnostic]},
        }),
    );
    let titles: Vec<&str> = (actions.as_array().unwrap().iter())
        .map(|action| action["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "Allow `implicit_device` on this line",
            "Explain `implicit_device`"
        ]
    );
    let edit = &actions[0]["edit"]["changes"][&model][0];
    assert_eq!(edit["newText"], "    # placement: allow(implicit_device)\n");
    assert_eq!(edit["range"]["start"], json!({"line": 6, "character": 0}));
    let command = &actions[1]["command"];
    client.request(
        "workspace/executeCommand",
        json!({"command": command["command"], "arguments": command["arguments"]}),
    );
    let shown = client.wait(|message| message["method"] == "window/showMessage");
    assert!(
        (shown["params"]["message"].as_str().unwrap()).starts_with("# implicit_device"),
        "{shown}"
    );

    // Fixed: cleared.
    client.change(&model, 3, FIXED);
    assert_eq!(client.diagnostics(&model), Vec::<Value>::new());
    assert_eq!(client.shut_down(), Some(0));
}

#[test]
fn levels_come_from_the_initialization_options() {
    let dir = workspace();
    let options = json!({"levels": {"stray_set_device": "deny"}});
    let mut client = Client::start(&binary(), dir.path(), options);
    let found = client.diagnostics(&uri(&dir.path().join("pkg/stray.py")));
    assert_eq!(found[0]["severity"], 1, "{found:?}");
    assert_eq!(client.shut_down(), Some(0));
}

#[test]
fn saving_lints_the_workspace_again() {
    let dir = workspace();
    let mut client = Client::start(&binary(), dir.path(), json!({}));
    let stray = uri(&dir.path().join("pkg/stray.py"));
    assert_eq!(client.diagnostics(&stray).len(), 1);
    // Fixed on disk and saved from another buffer: the whole run clears it.
    std::fs::write(dir.path().join("pkg/stray.py"), "import torch\n").unwrap();
    let devices = uri(&dir.path().join("pkg/devices.py"));
    client.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": devices}}),
    );
    assert_eq!(client.diagnostics(&stray), Vec::<Value>::new());
    assert_eq!(client.shut_down(), Some(0));
}

#[test]
fn notebooks_get_diagnostics_on_their_cells() {
    let dir = workspace();
    let saved = json!({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []});
    write_files(dir.path(), &[("explore.ipynb", &saved.to_string())]);
    let mut client = Client::start(&binary(), dir.path(), json!({}));
    // The whole run is over once it has published the package's finding.
    client.diagnostics(&uri(&dir.path().join("pkg/stray.py")));
    let notebook = uri(&dir.path().join("explore.ipynb"));
    let cell = |at: u32| {
        format!(
            "vscode-notebook-cell:{}#W{at}",
            &notebook["file://".len()..]
        )
    };
    let mismatch = "%matplotlib inline\nimport torch\nx = torch.zeros(2)\ny = torch.zeros(2, device=\"cuda:0\")\nz = x + y\n";
    client.notify(
        "notebookDocument/didOpen",
        json!({
            "notebookDocument": {
                "uri": notebook, "notebookType": "jupyter-notebook", "version": 1,
                "cells": [{"kind": 1, "document": cell(0)}, {"kind": 2, "document": cell(1)}],
            },
            "cellTextDocuments": [
                {"uri": cell(1), "languageId": "python", "version": 1, "text": mismatch},
            ],
        }),
    );
    assert_eq!(client.diagnostics(&cell(0)), Vec::<Value>::new());
    let found = client.diagnostics(&cell(1));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["code"], "device_mismatch");
    assert_eq!(
        found[0]["range"],
        json!({"start": {"line": 4, "character": 4}, "end": {"line": 4, "character": 9}})
    );
    // The cell fixed.
    let fixed = "import torch\nx = torch.zeros(2, device=\"cuda:0\")\n";
    client.notify(
        "notebookDocument/didChange",
        json!({
            "notebookDocument": {"uri": notebook, "version": 2},
            "change": {"cells": {"textContent": [{
                "document": {"uri": cell(1), "version": 2},
                "changes": [{"text": fixed}],
            }]}},
        }),
    );
    client.diagnostics(&cell(0));
    assert_eq!(client.diagnostics(&cell(1)), Vec::<Value>::new());
    assert_eq!(client.shut_down(), Some(0));
}

#[test]
fn rust_buffers_are_linted_as_typed() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(dir.path(), &[("pick.rs", "pub fn pick() {}\n")]);
    let mut client = Client::start(&binary(), dir.path(), json!({}));
    let pick = uri(&dir.path().join("pick.rs"));
    let text = "pub fn pick() -> tch::Device {\n    tch::Device::Cuda(2)\n}\n";
    client.open(&pick, "rust", text);
    let found = client.diagnostics(&pick);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["code"], "hardcoded_device");
    assert_eq!(
        found[0]["range"]["start"],
        json!({"line": 1, "character": 22})
    );
    let fixed = "pub fn pick(n: usize) -> tch::Device {\n    tch::Device::Cuda(n)\n}\n";
    client.change(&pick, 2, fixed);
    assert_eq!(client.diagnostics(&pick), Vec::<Value>::new());
    assert_eq!(client.shut_down(), Some(0));
}

#[test]
fn an_edit_that_changes_what_a_module_tells_relints_its_users() {
    let dir = workspace();
    write_files(dir.path(), &[("pkg/model.py", CALLS_CHOOSER)]);
    let mut client = Client::start(&binary(), dir.path(), json!({}));
    let model = uri(&dir.path().join("pkg/model.py"));
    assert_eq!(client.diagnostics(&model).len(), 1);
    // The chooser's module edited, not saved: `pick` takes the device from its caller now.
    let devices = uri(&dir.path().join("pkg/devices.py"));
    client.open(
        &devices,
        "python",
        "def pick(device=None):\n    return device\n",
    );
    assert_eq!(client.diagnostics(&model), Vec::<Value>::new());
    // Closed without saving: the module is what is on disk again.
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": devices}}),
    );
    assert_eq!(client.diagnostics(&model).len(), 1);
    assert_eq!(client.shut_down(), Some(0));
}

#[test]
fn bad_initialization_options_are_answered_with_why() {
    let dir = workspace();
    let mut client = Client::spawn(&binary(), dir.path());
    let response = client.initialize(dir.path(), json!({"levels": {"implicit_devices": "deny"}}));
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`initializationOptions.levels.implicit_devices`: no rule named"),
        "{response}"
    );
    assert_eq!(client.exit_code(), Some(2));
}
