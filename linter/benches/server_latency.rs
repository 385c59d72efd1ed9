//! Time from an edit to its diagnostics in `placement server`, as an editor sees it: an LSP
//! client over stdio opens a file of a workspace, waits for the whole run, then replaces the
//! buffer's text (the file, alternately with a line added at its end) and times each change to
//! the diagnostics published for it.
//!
//! ```text
//! cargo bench -p cargo-placement --bench server_latency -- ROOT FILE [--rounds N] [--append TEXT]
//! ```
//! `--append TEXT` edits with TEXT added at the end in place of a comment: a function that
//! chooses a device, for example, changes what the file tells the others.
//! With no argument it edits the demo's `python/train.py`, too small to say much: give it a
//! large file of a large workspace (a 5,000-line module of a PyTorch project, a big candle
//! file).

#[path = "../tests/common/lsp.rs"]
mod lsp;

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;

/// What to time (`cargo bench` adds `--bench`).
#[derive(clap::Parser)]
struct Args {
    /// The workspace; the demo when not given.
    root: Option<PathBuf>,
    /// The file of the workspace to edit.
    file: Option<PathBuf>,
    /// How many edits to time.
    #[arg(long, default_value_t = 41)]
    rounds: usize,
    /// The text each other edit adds at the end of the file (`\n` for a line break).
    #[arg(long, default_value = "# an edit")]
    append: String,
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() {
    let args = <Args as clap::Parser>::parse();
    let rounds = args.rounds;
    let appended = args.append.replace("\\n", "\n");
    let (root, file) = match (args.root, args.file) {
        (Some(root), Some(file)) => (root, file),
        _ => {
            let demo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/demo");
            (demo.clone(), demo.join("python/train.py"))
        }
    };
    let root = root.canonicalize().expect("the workspace");
    let file = file.canonicalize().expect("the file");
    let text = std::fs::read_to_string(&file).expect("the file's text");
    let edited = format!("{text}\n{appended}\n");
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_cargo-placement"));
    let started = Instant::now();
    let mut client = lsp::Client::start(&binary, &root, json!({}));
    let uri = lsp::uri(&file);
    let language = match file.extension().and_then(|ext| ext.to_str()) {
        Some("rs") => "rust",
        _ => "python",
    };
    client.open(&uri, language, &text);
    // Published once the whole run has finished.
    let found = client.diagnostics(&uri).len();
    println!(
        "{}: {} lines, {found} diagnostic(s); the whole workspace linted and the file published in {:.0?}",
        file.display(),
        text.lines().count(),
        started.elapsed()
    );
    let mut times = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let text = if round % 2 == 0 { &edited } else { &text };
        let change = Instant::now();
        client.change(&uri, round + 1, text);
        client.diagnostics(&uri);
        times.push(change.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "change to diagnostics over {rounds} edits: median {:.1} ms (min {:.1}, max {:.1})",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1]
    );
    client.shut_down();
}
