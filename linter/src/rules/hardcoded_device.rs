use super::declare_rule;
use crate::analysis::Event;
use crate::api::Role;
use crate::diagnostic::Finding;
use crate::source::Language;

declare_rule! {
    /// ## What it does
    /// Flags a literal GPU ordinal outside entry points: `Device::Cuda(1)`,
    /// `Device::new_cuda(0)`, `CudaContext::new(0)`, `CudaDevice::new(1)`,
    /// candle's `Device::cuda_if_available(0)`, burn's `Device::cuda(0)`, and
    /// `"cuda:1".parse()` (also the default of a name the caller may leave out,
    /// `name.unwrap_or("cuda:0").parse()`, into any type), also given to a function of the workspace that opens the GPU its
    /// caller names (`Worker::new(config, 0)` around `Device::new_cuda(rank)`, followed through
    /// functions that pass their own caller's GPU on). Metal's device 0
    /// (`Device::new_metal(0)`) is the system's default GPU, the one a Mac has, and is not
    /// flagged; another Metal ordinal is.
    ///
    /// ## Why is this bad?
    /// Ordinals differ between machines and jobs: `CUDA_VISIBLE_DEVICES` renumbers GPUs, a
    /// scheduler hands each job its own, and a library that says GPU 1 sends every caller's
    /// work there, or fails where there is one GPU.
    ///
    /// ## Example
    /// ```rust,ignore
    /// pub fn embedder() -> candle_core::Result<Embedder> {
    ///     Embedder::new(&candle_core::Device::new_cuda(1)?)
    /// }
    /// ```
    ///
    /// ## Use instead
    /// ```rust,ignore
    /// pub fn embedder(device: &candle_core::Device) -> candle_core::Result<Embedder> {
    ///     Embedder::new(device)
    /// }
    /// ```
    ///
    /// ## In Python
    /// `"cuda:1"`, `torch.device("cuda", 1)`, `.cuda(1)`, `.to(1)`, `device=0` and
    /// `device_map={"": 0}`, where a device goes, `"cuda:1"` bound to a name that says
    /// `device` or handed to any call but a log line, a GPU's index by a keyword that says so
    /// (`gpu_id=0`, as diffusers' `enable_model_cpu_offload` takes it; `device_index=1`; also a
    /// defaulted index handed on, `device_index=device_index`) or in
    /// a list (`devices=[0]`), an index given to a project function whose parameter is a device
    /// or a GPU's index (`get_device(0)` for `def get_device(local_rank)`), or to a method every
    /// class of the project that defines it takes a device with there, and a default ordinal
    /// of a parameter (`device: int = 0`, `device_id=0`), an attribute (`opt.gpu = 0`), a
    /// class's field (`device_id: int = 0`, read as `self.device_id`; a method that returns
    /// `f"cuda:{self.device_id}"` builds a device of it) or a lookup
    /// (`kwargs.get("device_id", 0)`) that reaches a device (also as the index of
    /// `torch.device("cuda", device_id)`), outside entry points:
    /// ```python
    /// DEVICE = "cuda:1"
    ///
    /// def build():
    ///     return torch.zeros(8, device=DEVICE)
    /// ```
    /// Use instead:
    /// ```python
    /// def build(device):
    ///     return torch.zeros(8, device=device)
    /// ```
    ///
    /// ## Known limits
    /// Only literals are flagged: an ordinal from a constant or a computation is taken to be a
    /// choice someone made. Entry points may name ordinals, as they own the choice.
    pub(crate) static HARDCODED_DEVICE = ("hardcoded_device", Warn, Some(check));
}

pub(super) fn check(event: &Event<'_>, language: Language) -> Option<Finding> {
    let mut related = Vec::new();
    let (ordinal, span, shown) = match event {
        Event::Api {
            use_,
            in_entry_point: false,
            ..
        } => {
            let Role::ExplicitDevice { gpu, .. } = &use_.entry.role else {
                return None;
            };
            let (ordinal, span) = use_.literal_ordinal.clone()?;
            // Metal's device 0 is the system's default GPU, the one a Mac has: nothing renumbers
            // Metal devices or hands each job its own, so only another ordinal is hard-coded.
            if gpu == "metal" && ordinal == 0 {
                return None;
            }
            (ordinal, span, use_.shown.clone())
        }
        Event::DeviceString {
            ordinal,
            shown,
            span,
            reaches,
            in_entry_point: false,
            ..
        } => {
            related = super::goes_to(reaches);
            (*ordinal, span.clone(), shown.clone())
        }
        _ => return None,
    };
    let finding = Finding::new(
        &HARDCODED_DEVICE,
        span,
        format!("hard-coded GPU ordinal `{ordinal}` in `{shown}`"),
        format!("GPU {ordinal} on every machine and in every job"),
        language.pick(
            "take the device from the caller; choose it in `main`, from configuration or with a \
             selection such as most free memory",
            "take the device from the caller (a `device` argument); choose it where the program \
             starts, from configuration or from `LOCAL_RANK`",
        ),
    );
    Some(Finding { related, ..finding })
}
