//! Source files as every layer sees them: which language a file is in, what role it plays in
//! its program, its text (decoded, with byte offsets turned into lines and columns as rustc
//! and ruff count them), the limits a file is linted within, and what could not be read.

use std::ops::Range;

/// The language of the file a finding is in, for the wording of its help: the hazards are the
/// same, the fixes are written in each language's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    Rust,
    Python,
}

impl Language {
    /// `rust` or `python` for Rust and Python.
    pub fn pick(self, rust: &'static str, python: &'static str) -> &'static str {
        match self {
            Language::Rust => rust,
            Language::Python => python,
        }
    }
}

/// How a file takes part in its target, which decides where entry points are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileRole {
    /// Library code: only `#[test]`, `#[cfg(test)]`, thread closures and configured functions
    /// are entry points.
    Library,
    /// The root file of a bin or example target: `main` and the other functions of the file are
    /// the program's start-up code, so they are entry points too.
    BinaryRoot,
    /// Another file of a bin or example target: library-like, but its code has no callers
    /// outside the program.
    BinaryModule,
    /// A file of a test or bench target, or a build script: all of it is an entry point.
    EntryFile,
}

/// Index of a Rust crate in the workspace model (`rust::model::Model::crates`).
pub type CrateId = usize;

/// Stack of each linting thread. rustc grows its stack for deep code for the same reason:
/// `syn` and the walker recurse once per level of nesting. Each front end checks that a file's
/// nesting fits in [`NESTING_BUDGET`] of it before it parses the file.
pub const STACK_SIZE: usize = 256 << 20;

/// Stack a file's syntax tree may take while it is parsed, walked and dropped. Worker threads
/// have [`STACK_SIZE`], well above it.
pub const NESTING_BUDGET: usize = 192 << 20;

/// Line starts of a source text, to turn byte offsets into 1-based lines and columns.
#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
}

pub const BOM: &str = "\u{feff}";

impl LineIndex {
    /// Lines end at `\n`, `\r\n` and a lone `\r` (an old Mac file's, which Python and editors
    /// take for a line break too).
    pub fn new(text: &str) -> Self {
        // A byte order mark is not part of the first line: columns count from after it.
        let first = if text.starts_with(BOM) { BOM.len() } else { 0 };
        let bytes = text.as_bytes();
        let breaks = memchr::memchr2_iter(b'\n', b'\r', bytes)
            .filter(|&at| bytes[at] == b'\n' || bytes.get(at + 1) != Some(&b'\n'));
        LineIndex::after(first, breaks)
    }

    /// Lines that end at `\n` only, as `proc_macro2` numbers the lines of the spans it gives.
    pub fn at_newlines(text: &str) -> Self {
        LineIndex::after(0, memchr::memchr_iter(b'\n', text.as_bytes()))
    }

    /// The first line starting at `first`, each other after a line break at `breaks`.
    fn after(first: usize, breaks: impl Iterator<Item = usize>) -> Self {
        let starts = std::iter::once(first)
            .chain(breaks.map(|at| at + 1))
            .collect();
        LineIndex { starts }
    }

    /// The 0-based line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&start| start <= offset)
            .saturating_sub(1)
    }

    /// Where line `line` (0-based) starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.starts
            .get(line)
            .copied()
            .unwrap_or_else(|| *self.starts.last().unwrap_or(&0))
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// 1-based line and 1-based column in characters, as rustc reports them.
    pub fn position(&self, text: &str, offset: usize) -> (usize, usize) {
        let line = self.line_of(offset);
        let start = self.line_start(line);
        let column = text
            .get(start..offset.min(text.len()))
            .map_or(0, |s| s.chars().count());
        (line + 1, column + 1)
    }

    /// The text of 0-based line `line`, without its line break.
    pub fn line_text<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let start = self.line_start(line).min(text.len());
        let end = self.starts.get(line + 1).copied().unwrap_or(text.len());
        text[start..end].trim_end_matches(['\n', '\r'])
    }
}

/// Why a file was not parsed, or not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unparsed {
    /// Where the problem is.
    pub span: Range<usize>,
    pub message: String,
    pub label: String,
    pub help: String,
}

/// What reading a file within a size limit gave.
#[derive(Debug)]
pub enum Read {
    Bytes(Vec<u8>),
    /// The file's size, over the limit: it was not read.
    TooBig(u64),
}

/// A path as reports name it: its components joined by `/` (a `\` in a Unix file name stays
/// part of the name), each byte that is not UTF-8 written `\xFF`, so that every file has one
/// name, its own, in every format (a lossy `\u{FFFD}` would name a file that does not exist, and
/// two files alike).
pub fn path_name(path: &std::path::Path) -> String {
    let mut name = String::new();
    for (at, component) in path.components().enumerate() {
        let part = component.as_os_str();
        if at > 0 && !name.ends_with('/') {
            name.push('/');
        }
        for chunk in part.as_encoded_bytes().utf8_chunks() {
            name.push_str(chunk.valid());
            for byte in chunk.invalid() {
                name.push_str(&format!("\\x{byte:02X}"));
            }
        }
    }
    name
}

/// Writes `contents` to `path` whole or not at all: to a temporary file in the same folder,
/// then renamed over `path`. An interrupted run (SIGINT), a full disk or a folder that cannot be
/// written leaves what was at `path` as it was.
pub fn replace_whole(path: &std::path::Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut file = temporary_beside(path)?;
    file.write_all(contents)?;
    put_in_place(file, path)
}

/// A temporary file in the folder of `path`, to be put in its place by [`put_in_place`].
pub fn temporary_beside(path: &std::path::Path) -> std::io::Result<tempfile::NamedTempFile> {
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => std::path::Path::new("."),
    };
    tempfile::NamedTempFile::new_in(folder)
}

/// Puts a complete temporary file at `path`, replacing what was there in one rename.
pub fn put_in_place(file: tempfile::NamedTempFile, path: &std::path::Path) -> std::io::Result<()> {
    file.as_file().sync_all()?;
    file.persist(path).map_err(|err| err.error)?;
    Ok(())
}

/// What an I/O error says, without the path that the report names already (`No such file or
/// directory (os error 2)`).
pub fn io_reason(err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => "it does not exist (a link to nothing?)".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => err.to_string(),
    }
}

/// Reads the file at `path` unless it is over `limit` bytes, with one lookup of the path: its
/// size comes from the open file.
pub fn read_within(path: &std::path::Path, limit: u64) -> std::io::Result<Read> {
    use std::io::Read as _;
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len > limit {
        return Ok(Read::TooBig(len));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(Read::Bytes(bytes))
}

/// The file's text when it is valid UTF-8; otherwise where the first invalid byte is, as
/// rustc rejects such a file.
pub fn decode(bytes: Vec<u8>, language: Language) -> Result<String, (String, Unparsed)> {
    String::from_utf8(bytes).map_err(|err| {
        let at = err.utf8_error().valid_up_to();
        let bad = err.utf8_error().error_len().unwrap_or(1);
        let shown = String::from_utf8_lossy(err.as_bytes()).into_owned();
        let byte = err.as_bytes()[at];
        // In the lossy text, the bad bytes became one U+FFFD, three bytes long.
        // In the words of the file's language: rustc reads only UTF-8; Python reads what a
        // coding declaration names (PEP 263), which the linter does not.
        let help = match language {
            Language::Rust => "rustc rejects the file; save it as UTF-8. It was not linted",
            Language::Python => {
                "the linter reads Python files as UTF-8 (an encoding named by a `# -*- coding: \
                 ... -*-` line is not supported); save it as UTF-8. It was not linted"
            }
        };
        let unparsed = Unparsed {
            span: at..at + '\u{fffd}'.len_utf8(),
            message: "file is not valid UTF-8".to_owned(),
            label: format!("invalid byte 0x{byte:02x} here ({bad} byte(s) not UTF-8)"),
            help: help.to_owned(),
        };
        (shown, unparsed)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_characters() {
        let text = "fn a() {}\n  let é = 1;\n";
        let index = LineIndex::new(text);
        assert_eq!(index.position(text, 0), (1, 1));
        let at = text.find('=').unwrap();
        assert_eq!(index.position(text, at), (2, 9));
        assert_eq!(index.line_text(text, 1), "  let é = 1;");
        assert_eq!(index.line_count(), 3);
    }

    #[test]
    fn invalid_utf8_is_reported_at_the_first_bad_byte() {
        let (shown, unparsed) =
            decode(b"fn f() {}\n// caf\xe9\n".to_vec(), Language::Rust).unwrap_err();
        assert_eq!(unparsed.span.start, 16);
        assert!(
            shown.is_char_boundary(unparsed.span.start)
                && shown.is_char_boundary(unparsed.span.end)
        );
        assert!(unparsed.label.contains("0xe9"), "{}", unparsed.label);
    }
}
