use super::declare_rule;
use crate::analysis::Event;
use crate::api::Role;
use crate::diagnostic::{Applicability, Finding, Suggestion};
use crate::source::Language;

declare_rule! {
    /// ## What it does
    /// Flags code outside entry points that changes the calling thread's current device or
    /// context: the runtime's `implicit::set_device`, cudarc's `CudaContext::bind_to_thread`,
    /// `driver::result::ctx::set_current`, `runtime::result::device::set`, and the raw
    /// `cuCtxSetCurrent`, `cuCtxPushCurrent` and `cudaSetDevice`, also when a crate declares
    /// them itself. A scoped `DeviceGuard` is not flagged.
    ///
    /// ## Why is this bad?
    /// The current device belongs to the thread, not to the function: a library that changes
    /// it moves its callers' later allocations, kernels and `.cuda()` calls to another GPU,
    /// long after it has returned.
    ///
    /// ## Example
    /// ```rust,ignore
    /// pub fn warm_up(ordinal: usize) -> placement::Result<()> {
    ///     placement::implicit::set_device(Device::Cuda(ordinal))?;
    ///     Tensor::zeros(&[1024], &placement::implicit::current_device())?;
    ///     Ok(())
    /// }
    /// ```
    ///
    /// ## Use instead
    /// ```rust,ignore
    /// pub fn warm_up(device: &Device) -> placement::Result<()> {
    ///     Tensor::zeros(&[1024], device)?;
    ///     Ok(())
    /// }
    /// ```
    ///
    /// ## In Python
    /// PyTorch's `torch.cuda.set_device(...)` (also used as a value) and
    /// `torch.accelerator.set_device_index(...)`, outside entry points (the main guard and the
    /// functions it calls, functions handed to `torch.multiprocessing.spawn` or `Process(target=...)`,
    /// scripts and tests):
    /// ```python
    /// def warm_up(rank):
    ///     torch.cuda.set_device(rank)
    ///     return torch.zeros(1024, device="cuda")
    /// ```
    /// Use instead:
    /// ```python
    /// def warm_up(device):
    ///     return torch.zeros(1024, device=device)
    ///
    /// def worker(rank):  # handed to mp.spawn: where each process starts
    ///     torch.cuda.set_device(rank)
    /// ```
    /// `with torch.cuda.device(i):` is the scoped form and is not flagged.
    ///
    /// ## Known limits
    /// Methods are recognised through what the receiver is known to be (a binding from a known
    /// constructor, a typed parameter or field): `set_device` methods of other types, such as
    /// tch's `VarStore::set_device`, which moves variables, are never flagged. Setting the
    /// device where a worker thread starts (a `thread::spawn` closure) is the per-rank pattern
    /// and not flagged.
    pub(crate) static STRAY_SET_DEVICE = ("stray_set_device", Warn, Some(check));
}

pub(super) fn check(event: &Event<'_>, language: Language) -> Option<Finding> {
    let Event::Api {
        use_,
        in_entry_point: false,
        ..
    } = event
    else {
        return None;
    };
    if use_.entry.role != Role::SetCurrentDevice {
        return None;
    }
    let help = if language == Language::Python {
        "pass the device explicitly (`tensor.to(device)`); for a scoped change use `with \
         torch.cuda.device(i):`, which restores the previous device; if this is where each \
         process starts, name the function in `entry_points`"
    } else if use_.path.starts_with("placement::") {
        "pass the device explicitly; for a scoped change, hold a `DeviceGuard`, which restores \
         the previous device when it drops"
    } else {
        "pass the context or stream explicitly: cudarc's safe API binds its own context before \
         every call; if a raw call needs a current context, restore the previous one before \
         returning"
    };
    let label =
        use_.entry.note.clone().unwrap_or_else(|| {
            "every later implicit device use on this thread follows it".to_owned()
        });
    let message = format!(
        "`{}` changes the current device of the calling thread",
        use_.shown
    );
    let finding = Finding::new(&STRAY_SET_DEVICE, use_.span.clone(), message, label, help);
    Some(Finding {
        suggestion: guard(use_),
        ..finding
    })
}

/// `implicit::set_device(d)?;` → `let _device_guard = implicit::DeviceGuard::new(d)?;`: the
/// same device for the rest of the scope, restored after it. That changes what callers see,
/// which is the point, so it is offered, not applied.
fn guard(use_: &crate::analysis::ApiUse<'_>) -> Option<Suggestion> {
    let module = use_.shown.strip_suffix("::set_device")?;
    (use_.path == "placement::implicit::set_device").then(|| Suggestion {
        span: use_.span.clone(),
        replacement: format!("let _device_guard = {module}::DeviceGuard::new"),
        message: "hold a guard that restores the previous device".to_owned(),
        applicability: Applicability::MaybeIncorrect,
    })
}
