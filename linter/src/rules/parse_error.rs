use super::declare_rule;
use crate::diagnostic::Finding;
use crate::source::Unparsed;

declare_rule! {
    /// ## What it does
    /// Reports a file that could not be parsed or linted as Rust or Python: a syntax error (at
    /// the place the parser stopped), a file that is not valid UTF-8 (at its first bad byte),
    /// nesting deeper than the linter's stack allows, a file larger than `max_file_size`, or one
    /// that cannot be read. The other files are still linted. An error by default, so that a
    /// run that could not check a file fails, as rustc and ruff do; a project lowers it in its
    /// configuration (`parse_error = "warn"`).
    ///
    /// ## Why is this bad?
    /// Nothing in the file can be checked, so its placement problems go unreported.
    ///
    /// ## Example
    /// ```rust,ignore
    /// pub fn f() -> Device { Device::Cuda(0 }
    /// ```
    ///
    /// ## Use instead
    /// ```rust,ignore
    /// pub fn f(device: Device) -> Device { device }
    /// ```
    ///
    /// ## In Python
    /// A `.py` file that ruff's parser cannot read is reported at the first error, and
    /// the other files are linted:
    /// ```python
    /// def broken(:
    ///     pass
    /// ```
    /// Use instead: fix the syntax; until then nothing in the file is checked.
    ///
    /// ## Known limits
    /// The linter parses with `syn`, which may lag behind the newest syntax that rustc accepts;
    /// such a file is reported here although it compiles. Files are never expanded or built,
    /// so code produced by build scripts or procedural macros is not seen. Files over
    /// `max_file_size` (10 MiB unless configured: linting takes about 200 times a file's size
    /// in memory) and expressions nested thousands of levels deep are reported, not linted.
    pub(crate) static PARSE_ERROR = ("parse_error", Deny, None);
}

/// The finding for a file that `syn` rejected.
pub fn finding(error: &syn::Error) -> Finding {
    Finding::new(
        &PARSE_ERROR,
        error.span().byte_range(),
        format!("could not parse this file: {error}"),
        "the parser stopped here",
        "fix the syntax; the rest of the workspace was still linted",
    )
}

/// The finding for a file that was not parsed for another reason than its syntax.
pub fn unlinted(unparsed: Unparsed) -> Finding {
    Finding::new(
        &PARSE_ERROR,
        unparsed.span,
        unparsed.message,
        unparsed.label,
        unparsed.help,
    )
}
