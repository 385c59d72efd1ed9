use super::declare_rule;
use crate::diagnostic::Finding;

declare_rule! {
    /// ## What it does
    /// Reports a suppression comment (`allow(rule)` or `allow-file(rule)`) that silenced
    /// nothing, no finding of the rule it names being on its line, on the line below it or,
    /// for the whole file, anywhere in it.
    ///
    /// Off by default, as clippy's and ruff's lints of unused
    /// suppressions are; turn it on with `-W unused_allow` or in configuration. A comment that
    /// names a rule which is itself turned off is not reported: whether it would silence
    /// something is not known.
    ///
    /// ## Why is this bad?
    /// A suppression outlives the code it was written for. Once the device choice it excused is
    /// gone, it silences whatever the next edit brings to that line, and readers take it for
    /// a warning that still applies.
    ///
    /// ## Example
    /// ```rust,ignore
    /// pub fn load(device: &Device) -> Result<Tensor> {
    ///     Tensor::zeros(4, DType::F32, device) // placement: allow(hardcoded_device)
    /// }
    /// ```
    ///
    /// ## Use instead
    /// ```rust,ignore
    /// pub fn load(device: &Device) -> Result<Tensor> {
    ///     Tensor::zeros(4, DType::F32, device)
    /// }
    /// ```
    ///
    /// ## In Python
    /// The same, for `# placement: allow(rule)` and `# placement: allow-file(rule)`:
    /// ```python
    /// def load(device):
    ///     return torch.zeros(4, device=device)  # placement: allow(implicit_device)
    /// ```
    /// Use instead: remove the comment, or the rule's name from it.
    ///
    /// ## Known limits
    /// A comment counts as used when it silenced a finding before the project's facts were all
    /// known; a finding dropped later (a helper every caller of which binds its context) still
    /// uses it. Rule names that are no rules are warned about on stderr instead.
    pub(crate) static UNUSED_ALLOW = ("unused_allow", Allow, None);
}

/// The finding for a suppression comment at `span` whose names `unused` silenced nothing;
/// `all`: no name of it silenced anything.
pub fn finding(
    span: std::ops::Range<usize>,
    unused: &[&str],
    all: bool,
    whole_file: bool,
) -> Finding {
    let form = if whole_file { "allow-file" } else { "allow" };
    let names = unused.join(", ");
    let message = if all {
        format!("`placement: {form}({names})` silences nothing")
    } else {
        format!("`{names}` in this `placement: {form}` silences nothing")
    };
    let quoted: Vec<String> = unused.iter().map(|name| format!("`{name}`")).collect();
    Finding::new(
        &UNUSED_ALLOW,
        span,
        message,
        format!("no {} finding is here", quoted.join(" or ")),
        if all {
            "remove the comment".to_owned()
        } else {
            format!("remove {} from the comment", quoted.join(" and "))
        },
    )
}
