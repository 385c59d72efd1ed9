//! Jupyter notebooks as the linter reads them: the code cells joined in order as one Python
//! program (a notebook runs its cells top to bottom, like a script), markdown and raw cells
//! skipped, and IPython's magics (`%matplotlib inline`, `%%time`, `!nvidia-smi`, `x = !ls`,
//! `model?`) blanked out so that they are neither parsed nor flagged.
//!
//! Findings point into the joined code; [`Cells`] turns its lines back into a cell's number
//! and a line inside that cell, as ruff reports notebooks (`explore.ipynb:cell 4:1:1`).
//! Outputs are never kept: `serde` reads past them, so that only a notebook's code stays in
//! memory once it is read, however many images its outputs embed.

use ruff_python_ast::token::TokenKind;
use ruff_text_size::Ranged;
use serde::Deserialize;

use crate::source::LineIndex;

/// A notebook's code, ready to lint.
#[derive(Debug)]
pub struct Notebook {
    /// The code cells joined in order, as written: what findings point into and reports show.
    pub code: String,
    /// [`Notebook::code`] with the magics blanked, byte for byte as long and with the same
    /// lines: what is parsed and linted.
    pub python: String,
    /// Where each cell starts in the code.
    pub cells: Cells,
}

/// Where each code cell starts among the lines of the joined code.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cells {
    /// (0-based first line in the joined code, the cell's 1-based place in the notebook),
    /// by line.
    starts: Vec<(usize, usize)>,
}

impl Cells {
    /// The cell holding the 0-based `line` of the joined code: its 1-based number among all
    /// the notebook's cells (markdown included: the cell a reader counts to), and the 0-based
    /// line inside it.
    pub fn locate(&self, line: usize) -> (usize, usize) {
        let at = self.starts.partition_point(|(start, _)| *start <= line);
        match at.checked_sub(1).map(|at| self.starts[at]) {
            Some((start, cell)) => (cell, line - start),
            None => (1, line),
        }
    }

    /// The lines of the joined code that the cell holding the 0-based `line` spans: its first,
    /// and the next cell's first (none for the last cell).
    pub fn lines_of(&self, line: usize) -> (usize, Option<usize>) {
        let at = self.starts.partition_point(|(start, _)| *start <= line);
        let first = at.checked_sub(1).map_or(0, |at| self.starts[at].0);
        (first, self.starts.get(at).map(|(start, _)| *start))
    }

    /// Whether the 0-based `line` of the joined code is the first of a cell after another.
    pub fn starts_cell(&self, line: usize) -> bool {
        line > 0 && self.starts.iter().any(|(start, _)| *start == line)
    }
}

/// The parts of nbformat 4 the linter reads; every other field (outputs, metadata) is skipped
/// unread.
#[derive(Deserialize)]
struct Raw {
    nbformat: u64,
    #[serde(default)]
    metadata: Metadata,
    #[serde(default)]
    cells: Vec<RawCell>,
}

/// What says a notebook's language: its kernel's, or the language it was last run in.
#[derive(Default, Deserialize)]
struct Metadata {
    kernelspec: Option<KernelSpec>,
    language_info: Option<LanguageInfo>,
}

#[derive(Deserialize)]
struct KernelSpec {
    language: Option<String>,
}

#[derive(Deserialize)]
struct LanguageInfo {
    name: Option<String>,
}

#[derive(Deserialize)]
struct RawCell {
    cell_type: String,
    #[serde(default)]
    source: Source,
}

/// A cell's source: one string, or the list of its lines (each with its `\n`).
#[derive(Deserialize)]
#[serde(untagged)]
enum Source {
    Text(String),
    Lines(Vec<String>),
}

impl Default for Source {
    fn default() -> Self {
        Source::Text(String::new())
    }
}

/// Reads a notebook's bytes, or says why they are not one: not JSON, or not nbformat 4.
pub fn read(bytes: &[u8]) -> Result<Notebook, String> {
    let raw: Raw = serde_json::from_slice(bytes).map_err(|err| match err.classify() {
        serde_json::error::Category::Data => format!("notebook is not in nbformat 4: {err}"),
        _ => format!("notebook is not valid JSON: {err}"),
    })?;
    if raw.nbformat != 4 {
        return Err(format!(
            "notebook is in nbformat {}, and only nbformat 4 is read",
            raw.nbformat
        ));
    }
    // A notebook of another kernel (evcxr's Rust, R, Julia) has no Python to lint.
    let language = (raw.metadata.kernelspec.and_then(|kernel| kernel.language))
        .or_else(|| raw.metadata.language_info.and_then(|info| info.name));
    let python_kernel = language.is_none_or(|language| language.eq_ignore_ascii_case("python"));
    let mut code = String::new();
    let mut python = String::new();
    let mut cells = Cells::default();
    let mut line = 0;
    for (at, cell) in raw.cells.into_iter().enumerate() {
        if cell.cell_type != "code" || !python_kernel {
            continue;
        }
        let mut text = match cell.source {
            Source::Text(text) => text,
            Source::Lines(lines) => lines.concat(),
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        cells.starts.push((line, at + 1));
        // Lines as the positions count them (a lone `\r` ends one too); the text ends with a
        // line break, after which the index starts one more, empty, line.
        line += LineIndex::new(&text).line_count() - 1;
        let blanked = blank_magics(&text).map_err(|()| {
            format!("cell {} of the notebook could not be read: ruff's parser failed on its IPython syntax", at + 1)
        })?;
        python.push_str(&blanked);
        code.push_str(&text);
    }
    Ok(Notebook {
        code,
        python,
        cells,
    })
}

/// Cell magics whose body is Python still (`%%time` runs the cell and times it); any other
/// (`%%bash`, `%%writefile`, `%%html`) makes the whole cell another language's.
const PYTHON_CELL_MAGICS: &[&str] = &["time", "timeit", "capture", "prun", "debug"];

/// A cell's text with IPython's syntax blanked, line for line and byte for byte: each line
/// that holds an escape command (`%time f()`, `!pip install x`, `files = !ls`, `??torch.cuda`)
/// or a help request (`model?`), as ruff's lexer finds them in its IPython mode (so that `%` in
/// `("%s"\n % name)` stays an operator), or every line of a cell whose cell magic runs another
/// language. `Err` for a cell whose IPython syntax ruff's parser cannot read.
fn blank_magics(cell: &str) -> Result<String, ()> {
    let first = cell.lines().find(|line| !line.trim().is_empty());
    let other_language = first
        .and_then(|line| line.trim_start().strip_prefix("%%"))
        .is_some_and(|magic| {
            let name = magic.split_whitespace().next().unwrap_or_default();
            !PYTHON_CELL_MAGICS.contains(&name)
        });
    let lines = LineIndex::new(cell);
    let mut blanked = vec![other_language; lines.line_count()];
    if !other_language {
        let options = ruff_python_parser::ParseOptions::from(ruff_python_parser::Mode::Ipython);
        // ruff's parser stops on some IPython syntax it lexes (an automatic-quote `,` line where
        // an expression goes) with a panic: such a cell cannot be read.
        let parsed =
            std::panic::catch_unwind(|| ruff_python_parser::parse_unchecked(cell, options))
                .map_err(|_| ())?;
        for token in parsed.tokens().iter() {
            if matches!(
                token.kind(),
                TokenKind::IpyEscapeCommand | TokenKind::Question
            ) {
                let range = token.range();
                let (first, last) = (
                    lines.line_of(range.start().to_usize()),
                    lines.line_of(range.end().to_usize().saturating_sub(1)),
                );
                blanked[first..=last]
                    .iter_mut()
                    .for_each(|line| *line = true);
            }
        }
    }
    let mut out = String::with_capacity(cell.len());
    for (at, blank_it) in blanked.into_iter().enumerate() {
        // The first line from the first byte: a byte order mark is kept, though positions count
        // from after it.
        let start = match at {
            0 => 0,
            _ => lines.line_start(at).min(cell.len()),
        };
        let end = match at + 1 < lines.line_count() {
            true => lines.line_start(at + 1),
            false => cell.len(),
        };
        let line = &cell[start..end];
        let body = line.trim_end_matches(['\n', '\r']);
        match blank_it {
            // A cell of another language is blanked from the margin: its indentation (a
            // `%%writefile`'s function bodies) would be Python's after the lines above it are
            // gone.
            true if other_language => {
                let text = body.trim_start_matches([' ', '\t']);
                out.push_str(&blank(text));
                out.extend(std::iter::repeat_n(' ', body.len() - text.len()));
                out.push_str(&line[body.len()..]);
            }
            true => {
                out.push_str(&blank(body));
                out.push_str(&line[body.len()..]);
            }
            false => out.push_str(line),
        }
    }
    Ok(out)
}

/// A line's replacement: its indentation, then a statement that does nothing (`pass`, or `0`
/// where `pass` does not fit), padded to the line's length.
fn blank(line: &str) -> String {
    let indent = line.len() - line.trim_start().len();
    let room = line.len() - indent;
    let filler = if room >= 4 { "pass" } else { "0" };
    let mut out = String::with_capacity(line.len());
    out.push_str(&line[..indent]);
    if room > 0 {
        out.push_str(filler);
        // Multi-byte characters in the magic keep their bytes as spaces.
        out.extend(std::iter::repeat_n(' ', room - filler.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notebook(cells: &[(&str, &str)]) -> Vec<u8> {
        let cells: Vec<serde_json::Value> = cells
            .iter()
            .map(|(kind, source)| {
                serde_json::json!({
                    "cell_type": kind,
                    "metadata": {},
                    "source": source.split_inclusive('\n').collect::<Vec<_>>(),
                    "outputs": [{"output_type": "stream", "text": ["ignored\n"]}],
                })
            })
            .collect();
        serde_json::to_vec(&serde_json::json!({
            "nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells,
        }))
        .unwrap()
    }

    #[test]
    fn code_cells_are_joined_and_located_by_cell() {
        let bytes = notebook(&[
            ("markdown", "# Title\n"),
            ("code", "import torch\nx = 1"),
            ("raw", "raw text"),
            ("code", "y = torch.zeros(2)\n"),
        ]);
        let read = read(&bytes).unwrap();
        assert_eq!(read.code, "import torch\nx = 1\ny = torch.zeros(2)\n");
        assert_eq!(read.cells.locate(0), (2, 0));
        assert_eq!(read.cells.locate(1), (2, 1));
        assert_eq!(read.cells.locate(2), (4, 0));
        assert!(read.cells.starts_cell(2) && !read.cells.starts_cell(1));
        assert_eq!(read.cells.lines_of(1), (0, Some(2)));
        assert_eq!(read.cells.lines_of(2), (2, None));
    }

    #[test]
    fn magics_are_blanked_byte_for_byte() {
        let bytes = notebook(&[
            (
                "code",
                "%matplotlib inline\n!nvidia-smi\nfiles = !ls\nmodel?\nif x:\n    !ls\nz = a % b\n",
            ),
            ("code", "%%bash\necho hi\n"),
            // A file written by a cell, its indented lines included, is no Python of the notebook.
            (
                "code",
                "%%writefile train.py\ndef main(\n    steps: int,\n):\n  return steps\n",
            ),
            ("code", "%%time\nw = 1\n"),
            // `%` continuing an expression is Python's operator.
            ("code", "s = (\"%s\"\n     % name)\n??torch.cuda\n"),
        ]);
        let read = read(&bytes).unwrap();
        assert_eq!(read.python.len(), read.code.len());
        assert_eq!(read.python.lines().count(), read.code.lines().count());
        let lines: Vec<&str> = read.python.lines().collect();
        assert_eq!(lines[0].trim(), "pass");
        assert_eq!(lines[1].trim(), "pass");
        assert_eq!(lines[2].trim(), "pass");
        assert_eq!(lines[3].trim(), "pass");
        assert_eq!(lines[5], "    0  ");
        assert_eq!(lines[6], "z = a % b");
        assert_eq!(lines[7].trim(), "pass");
        assert_eq!(lines[8].trim(), "pass");
        assert_eq!(lines[9].trim(), "pass");
        assert_eq!(lines[10], "pass     ");
        assert_eq!(lines[11], "pass           ");
        assert_eq!(lines[13], "pass          ");
        assert_eq!(lines[14].trim(), "pass");
        assert_eq!(lines[15], "w = 1");
        assert_eq!(lines[16], "s = (\"%s\"");
        assert_eq!(lines[17], "     % name)");
        assert_eq!(lines[18].trim(), "pass");
        let parsed = ruff_python_parser::parse_module(&read.python);
        assert!(parsed.is_ok(), "{:?}", parsed.err());
    }

    #[test]
    fn line_breaks_of_every_kind_keep_their_bytes() {
        for cell in [
            "!ls\r\nx = 1\r\n",
            "!ls\rx = 1\r",
            "x = 1\n%time f()",
            "\u{feff}!ls\nx = 1\n",
        ] {
            let bytes = notebook(&[("code", cell)]);
            let read = read(&bytes).unwrap();
            assert_eq!(read.python.len(), read.code.len(), "{cell:?}");
            assert!(read.python.contains("x = 1"), "{:?}", read.python);
            assert!(!read.python.contains("ls") && !read.python.contains("time"));
        }
        let bytes = notebook(&[("code", "a = 1\rb = 2\r"), ("code", "c = 3\n")]);
        let read = read(&bytes).unwrap();
        let c = read.code.find('c').unwrap();
        let line = LineIndex::new(&read.code).line_of(c);
        assert_eq!(read.cells.locate(line), (2, 0));
    }

    #[test]
    fn a_cell_ruffs_parser_cannot_read_is_refused() {
        // Found by the fuzz target: ruff's parser panics on this IPython syntax.
        let cell = "from torctches = [torzch.randn(8, 4) dn(4, 4)/nfor batch in batches:\n,   w = \
                    weight.to(\"cuda\")\n    out = batch.to(\"cuda\") @ w\n";
        let bytes = notebook(&[("markdown", "# x\n"), ("code", cell)]);
        let why = read(&bytes).unwrap_err();
        assert!(
            why.starts_with("cell 2 of the notebook could not be read"),
            "{why}"
        );
    }

    #[test]
    fn notebooks_of_other_kernels_have_no_python() {
        let rust =
            br#"{"nbformat": 4, "metadata": {"kernelspec": {"language": "rust", "name": "rust"}},
            "cells": [{"cell_type": "code", "source": ":dep burn = \"0.16\"\n"}]}"#;
        assert_eq!(read(rust).unwrap().code, "");
        let python = br#"{"nbformat": 4, "metadata": {"language_info": {"name": "python"}},
            "cells": [{"cell_type": "code", "source": "x = 1\n"}]}"#;
        assert_eq!(read(python).unwrap().code, "x = 1\n");
    }

    #[test]
    fn broken_notebooks_say_why() {
        assert!(read(b"{not json").unwrap_err().contains("not valid JSON"));
        let v3 = br#"{"nbformat": 3, "worksheets": []}"#;
        assert!(read(v3).unwrap_err().contains("nbformat 3"));
        let no_cells = br#"{"cells": 4, "nbformat": 4}"#;
        assert!(read(no_cells).unwrap_err().contains("nbformat 4"));
    }
}
