use super::declare_rule;
use crate::analysis::Event;
use crate::diagnostic::Finding;
use crate::source::Language;

declare_rule! {
    /// ## What it does
    /// Flags library code that asks the GPU driver something while the library is loaded: in
    /// Rust, a device opened or asked about in a function that runs when the library is loaded
    /// (`#[ctor]`); in Python, at an import (see below).
    ///
    /// ## Why is this bad?
    /// It starts CUDA (or asks the driver) before the program could choose its GPUs: a
    /// `CUDA_VISIBLE_DEVICES` set afterwards has no effect, every process that loads the
    /// library opens a context on GPU 0, and a process forked after it (a data loader's worker)
    /// inherits a driver that does not survive the fork.
    ///
    /// ## Example
    /// ```rust,ignore
    /// #[ctor::ctor]
    /// fn warm_up() {
    ///     let _ = candle_core::Device::new_cuda(0);
    /// }
    /// ```
    ///
    /// ## Use instead
    /// ```rust,ignore
    /// pub fn warm_up(device: &candle_core::Device) -> candle_core::Result<()> {
    ///     candle_core::Tensor::zeros(1, candle_core::DType::F32, device).map(drop)
    /// }
    /// ```
    ///
    /// ## In Python
    /// `torch.cuda.is_available()`, `device_count()`, `get_device_name()`,
    /// `get_device_properties()`, `current_device()` and the other calls that ask the driver
    /// (also accelerate's `Accelerator()` and `PartialState()`, whose state asks for the devices),
    /// at a library module's top level, in a class body or in a default argument, which all run
    /// when the module is imported:
    /// ```python
    /// HAS_GPU = torch.cuda.is_available()
    ///
    /// class Trainer:
    ///     def __init__(self, devices=torch.cuda.device_count()):
    ///         self.devices = devices
    /// ```
    /// Use instead:
    /// ```python
    /// class Trainer:
    ///     def __init__(self, devices=None):
    ///         self.devices = torch.cuda.device_count() if devices is None else devices
    /// ```
    ///
    /// A module-level function of the project that asks the driver in its own body, called at
    /// import (`NPU_AVAILABLE = is_npu_available()`, in its module or one that imports it), asks
    /// it there too; so does a property of a class that asks it, read at import from a module's
    /// instance of the class (`def load(device=settings.TORCH_DEVICE)` of `settings =
    /// Settings()`).
    ///
    /// ## Known limits
    /// Calls are followed one function deep: a function that asks through another function,
    /// or a method called at import, is not seen. Scripts, main guards and tests run at their own start
    /// and are not flagged; a lambda's body runs when it is called.
    pub(crate) static CUDA_AT_IMPORT = ("cuda_at_import", Warn, Some(check));
}

pub(super) fn check(event: &Event<'_>, language: Language) -> Option<Finding> {
    let Event::CudaAtImport { shown, span, when } = event else {
        return None;
    };
    Some(Finding::new(
        &CUDA_AT_IMPORT,
        span.clone(),
        format!("`{shown}` asks the GPU driver {when}"),
        "runs before the program could choose its GPUs",
        language.pick(
            "open or query devices in a function the program calls, after it chose its GPUs",
            "ask when a function is called (a default of `None`, a cached function), not at \
             import",
        ),
    ))
}
