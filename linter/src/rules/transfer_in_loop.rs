use super::declare_rule;
use crate::analysis::Event;
use crate::diagnostic::Finding;
use crate::source::Language;

declare_rule! {
    /// ## What it does
    /// Flags a transfer (`to_device`, tch's `to`, the runtime's `.cuda()`, burn's `to_device`)
    /// inside a `for`, `while` or `loop` whose receiver and target device are the same in every
    /// iteration: both come from outside the loop, and the loop never reassigns them.
    ///
    /// ## Why is this bad?
    /// The same data crosses the bus on every iteration. For model weights or a constant mask
    /// in a training loop, that is a copy of the whole tensor per step, for nothing.
    ///
    /// ## Example
    /// ```rust,ignore
    /// for batch in batches {
    ///     let weight = weight.to_device(&device)?;
    ///     let y = batch.to_device(&device)?.matmul(&weight)?;
    /// }
    /// ```
    ///
    /// ## Use instead
    /// ```rust,ignore
    /// let weight = weight.to_device(&device)?;
    /// for batch in batches {
    ///     let y = batch.to_device(&device)?.matmul(&weight)?;
    /// }
    /// ```
    ///
    /// ## In Python
    /// `.to(device)` (with an argument that is a device) and `.cuda(...)` of a tensor
    /// or module that the `for` or `while` loop does not reassign:
    /// ```python
    /// for batch in loader:
    ///     loss = model(batch.to(device)) * mask.to(device)
    /// ```
    /// Use instead:
    /// ```python
    /// mask = mask.to(device)
    /// for batch in loader:
    ///     loss = model(batch.to(device)) * mask
    /// ```
    /// A module moved out and back in the same loop (`m.cpu()` then `m.to(device)`) is not flagged.
    ///
    /// ## Known limits
    /// Per-iteration transfers of the loop's own data (the pattern variable, values computed
    /// in the body, indexing by something that changes) are not findings. Iterator closures
    /// (`.map(|x| ...)`) are not loops to this rule.
    pub(crate) static TRANSFER_IN_LOOP = ("transfer_in_loop", Warn, Some(check));
}

pub(super) fn check(event: &Event<'_>, _: Language) -> Option<Finding> {
    let Event::LoopTransfer {
        shown,
        span,
        receiver,
        keyword,
    } = event
    else {
        return None;
    };
    let finding = Finding::new(
        &TRANSFER_IN_LOOP,
        span.clone(),
        format!("`{receiver}{shown}` copies the same tensor in every iteration"),
        "receiver and target device do not change in the loop",
        format!("move `{receiver}{shown}` before the loop and reuse the result"),
    );
    Some(Finding {
        related: vec![(keyword.clone(), "the loop".to_owned())],
        ..finding
    })
}
