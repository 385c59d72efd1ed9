use super::declare_rule;
use crate::analysis::Event;
use crate::diagnostic::Finding;
use crate::source::Language;

declare_rule! {
    /// ## What it does
    /// Flags a `cuda_if_available` (tch's, at run time; candle's, at compile time) whose result
    /// nothing looks at: not compared, matched on, asked `is_cuda()`, asserted or logged in the
    /// same function (a `match` on it counts when one of its arms logs or prints). The same
    /// choice written by hand counts too: `Device::new_cuda(0).unwrap_or(Device::Cpu)`, a
    /// `match` or `if let` on opening a GPU that goes on to the CPU when it fails, or `if
    /// tch::Cuda::is_available() { Device::Cuda(0) } else { Device::Cpu }`, unless the path that
    /// falls back logs it (a standard macro, or the project's own named for logging:
    /// `log_device!`, `warn_once!`). Off by default (`allow`); turn it on with `-W silent_cpu_fallback`.
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
    /// ## In Python
    /// `"cuda" if torch.cuda.is_available() else "cpu"` (also inside
    /// `torch.device(...)`, behind the caller's device (`device or ...`, `args.device if ...
    /// else ...`), tested through a flag bound to the check (`use_cuda = not no_cuda and
    /// torch.cuda.is_available()`, also kept in an attribute, `self.use_cuda`), an `if` that binds or returns the device in its branches,
    /// or a branch that moves a model to the GPU, `if torch.cuda.is_available(): model =
    /// model.cuda()`, with no branch that says or stops) whose result the function never
    /// compares, asserts, logs, prints or reads `.type` of, nor hands to a function that does
    /// (a project function that looks at its device parameter, Lightning's `Trainer` and
    /// `Fabric`, which report their accelerator). A parameter's default chosen so is judged by
    /// what the function does with the parameter; a function whose branches return devices by
    /// availability (`if torch.cuda.is_available(): return "cuda"`, then `if
    /// torch.xpu.is_available(): ...`) is one choice, reported at its first check. A library
    /// module's variable chosen so at import is read by the modules that import it, and flagged:
    /// ```python
    /// device = "cuda" if torch.cuda.is_available() else "cpu"
    /// model.to(device)
    /// ```
    /// Use instead:
    /// ```python
    /// device = "cuda" if torch.cuda.is_available() else "cpu"
    /// logging.info("training on %s", device)
    /// model.to(device)
    /// ```
    ///
    /// ## Known limits
    /// In Rust, a result passed to another function is taken as unchecked; mentioning the
    /// variable in any macro (a log line, an assertion) counts as looking at it. In Python, a
    /// flag printed or branched on before the choice counts as looking at it.
    pub(crate) static SILENT_CPU_FALLBACK = ("silent_cpu_fallback", Allow, Some(check));
}

pub(super) fn check(event: &Event<'_>, language: Language) -> Option<Finding> {
    let Event::SilentFallback { shown, span } = event else {
        return None;
    };
    let message = match language {
        Language::Rust => format!("`{shown}` may quietly return the CPU, and nothing checks"),
        Language::Python => {
            format!("the device chosen by `{shown}` may quietly be the CPU, and nothing checks")
        }
    };
    Some(Finding::new(
        &SILENT_CPU_FALLBACK,
        span.clone(),
        message,
        "without a GPU this runs on the CPU, unnoticed",
        "log or assert which device was chosen, or fail when a GPU was expected",
    ))
}
