use super::{Finding, declare_rule};
use crate::resolve::Event;

declare_rule! {
    /// ## What it does
    /// Flags a `cuda_if_available` (tch's, at run time; candle's, at compile time) whose result
    /// nothing looks at: not compared, matched, asked `is_cuda()`, asserted or logged in the
    /// same function. Off by default (`allow`); turn it on with `-W silent_cpu_fallback`.
    ///
    /// ## Why is this bad?
    /// Without a GPU (a missing driver, a wrong `CUDA_VISIBLE_DEVICES`, candle built without
    /// its `cuda` feature) the program runs on the CPU, many times slower, and nobody notices
    /// until the bill or the deadline.
    ///
    /// ## Example
    /// ```rust,ignore
    /// let device = tch::Device::cuda_if_available();
    /// train(&device);
    /// ```
    ///
    /// ## Use instead
    /// ```rust,ignore
    /// let device = tch::Device::cuda_if_available();
    /// tracing::info!("training on {device:?}");
    /// train(&device);
    /// ```
    ///
    /// ## Known limits
    /// A result passed to another function is taken as unchecked; mentioning the variable in
    /// any macro (a log line, an assertion) counts as looking at it.
    pub(crate) static SILENT_CPU_FALLBACK = ("silent_cpu_fallback", Allow, Some(check));
}

pub(super) fn check(event: &Event<'_>) -> Option<Finding> {
    let Event::SilentFallback { shown, span } = event else {
        return None;
    };
    Some(Finding::new(
        &SILENT_CPU_FALLBACK,
        span.clone(),
        format!("`{shown}` may quietly return the CPU, and nothing checks"),
        "without a GPU this runs on the CPU, unnoticed",
        "log or assert which device was chosen, or fail when a GPU was expected",
    ))
}
