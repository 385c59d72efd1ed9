use super::{Finding, declare_rule};

declare_rule! {
    /// ## What it does
    /// Reports a file that could not be parsed as Rust, at the place the parser stopped. The
    /// other files are still linted.
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
    /// ## Known limits
    /// The linter parses with `syn`, which may lag behind the newest syntax that rustc accepts;
    /// such a file is reported here although it compiles. Files are never expanded or built,
    /// so code produced by build scripts or procedural macros is not seen.
    pub(crate) struct ParseError;
}

/// The finding for a file that `syn` rejected.
pub fn finding(error: &syn::Error) -> Finding {
    // The tokenizer's own message says nothing about what is wrong.
    let reason = match error.to_string().as_str() {
        "cannot parse string into token stream" => {
            "unbalanced delimiters or an invalid token".to_owned()
        }
        other => other.to_owned(),
    };
    Finding::new(
        "parse_error",
        error.span().byte_range(),
        format!("could not parse this file: {reason}"),
        "the parser stopped here",
        "fix the syntax; the rest of the workspace was still linted",
    )
}
