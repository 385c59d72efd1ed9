//! Any bytes given to the notebook reader are read or refused without a panic, and a notebook
//! read keeps its code's shape: the text that is linted is as long as the code shown, line for
//! line, and every line of it is in a cell.
//!
//! ruff's parser panics on some IPython syntax (an automatic-quote `,` line where an expression
//! goes); the reader catches that and refuses the cell. libFuzzer's panic hook aborts on every
//! panic, caught or not, so the target lets ruff's parser's own panics unwind to the reader.

#![no_main]

use std::sync::Once;

use cargo_placement::notebook;
use libfuzzer_sys::fuzz_target;

static HOOK: Once = Once::new();

fuzz_target!(|data: &[u8]| {
    HOOK.call_once(|| {
        let abort = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_ruff = (info.location()).is_some_and(|at| at.file().contains("ruff_python_parser"));
            if !in_ruff {
                abort(info);
            }
        }));
    });
    let Ok(read) = notebook::read(data) else {
        return;
    };
    assert_eq!(read.python.len(), read.code.len());
    assert_eq!(read.python.lines().count(), read.code.lines().count());
    for (blanked, shown) in read.python.lines().zip(read.code.lines()) {
        assert_eq!(blanked.len(), shown.len());
    }
    for line in 0..read.code.lines().count() {
        let (cell, _) = read.cells.locate(line);
        assert!(cell >= 1);
    }
});
