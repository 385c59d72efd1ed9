//! Any bytes given to the notebook reader are read or refused without a panic, and a notebook
//! read keeps its code's shape: the text that is linted is as long as the code shown, line for
//! line, and every line of it is in a cell.

#![no_main]

use cargo_placement::notebook;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
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
