use super::declare_rule;
use crate::analysis::Event;
use crate::diagnostic::Finding;
use crate::source::Language;

declare_rule! {
    /// ## What it does
    /// Flags `std::env::set_var` of `CUDA_VISIBLE_DEVICES` or `CUDA_DEVICE_ORDER` in library
    /// code, and in `main` (or another entry point) after the first device use. Setting them on
    /// a child process's `Command::env` is the right way and is not flagged; reading them is
    /// not flagged.
    ///
    /// ## Why is this bad?
    /// The CUDA driver reads these variables once, when it initialises. Set after that, they
    /// have no effect: the program silently keeps using the GPUs it would have used anyway.
    /// Set from a library, they depend on whether anything touched the GPU first.
    ///
    /// ## Example
    /// ```rust,ignore
    /// fn main() -> anyhow::Result<()> {
    ///     let device = candle_core::Device::cuda_if_available(0)?;
    ///     std::env::set_var("CUDA_VISIBLE_DEVICES", "1");
    ///     run(&device)
    /// }
    /// ```
    ///
    /// ## Use instead
    /// ```rust,ignore
    /// fn main() -> anyhow::Result<()> {
    ///     // Before anything touches a device; or set it in the environment of the process.
    ///     unsafe { std::env::set_var("CUDA_VISIBLE_DEVICES", "1") };
    ///     let device = candle_core::Device::cuda_if_available(0)?;
    ///     run(&device)
    /// }
    /// ```
    ///
    /// ## In Python
    /// `os.environ["CUDA_VISIBLE_DEVICES"] = ...`, `os.environ.setdefault(...)`,
    /// `os.environ.update(...)` and `os.putenv(...)` of these variables (named by a literal, or by
    /// a string constant of the module: `os.environ[CUDA_ENVVAR]`), in library code, and in a
    /// script after CUDA may have started (a `torch.cuda` call, `.cuda()`, a tensor on a GPU):
    /// ```python
    /// def main():
    ///     model = Model().cuda()
    ///     os.environ["CUDA_VISIBLE_DEVICES"] = "1"
    /// ```
    /// Use instead:
    /// ```python
    /// def main():
    ///     os.environ["CUDA_VISIBLE_DEVICES"] = "1"
    ///     model = Model().cuda()
    /// ```
    /// Writing them into a copy handed to a child process (`env = os.environ.copy()`) is not flagged.
    ///
    /// ## Known limits
    /// "First device use" means a known device API called earlier in the same function; a
    /// call to a helper that uses a device is not seen. The variable must be named by a
    /// string literal or a string constant of the same file.
    pub(crate) static LATE_VISIBLE_DEVICES = ("late_visible_devices", Warn, Some(check));
}

const VARIABLES: &[&str] = &["CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"];

pub(super) fn check(event: &Event<'_>, language: Language) -> Option<Finding> {
    let Event::SetEnvVar {
        variable,
        span,
        in_entry_point,
        after_device_use,
    } = event
    else {
        return None;
    };
    if !VARIABLES.contains(&variable.as_str()) {
        return None;
    }
    let finding = |message: String, label: &str, help: &str, related| Finding {
        related,
        ..Finding::new(&LATE_VISIBLE_DEVICES, span.clone(), message, label, help)
    };
    if !in_entry_point {
        return Some(finding(
            format!("`{variable}` set from library code"),
            "the CUDA driver may already have read it",
            language.pick(
                "set it in the environment before the process starts, or on a child process's \
                 `Command::env`",
                "set it in the environment before the process starts, or in the `env` given to \
                 a child process",
            ),
            Vec::new(),
        ));
    }
    let first_use = after_device_use.clone()?;
    Some(finding(
        format!("`{variable}` set after the first device use"),
        "too late: the CUDA driver reads it once, when it starts",
        language.pick(
            "set it before any device is used, at the top of `main`, or in the environment \
             before the process starts",
            "set it before anything touches CUDA, at the top of the script, or in the \
             environment before the process starts",
        ),
        vec![(first_use, "a device is first used here".to_owned())],
    ))
}
