use super::declare_rule;
use crate::analysis::{Event, Fact, How};
use crate::diagnostic::Finding;
use crate::source::Language;

declare_rule! {
    /// ## What it does
    /// Flags an op whose operands are known, within one function, to be on different devices:
    /// `add`, `sub`, `mul`, `div`, `matmul`, the `broadcast_*` ops, the arithmetic operators on
    /// tensors, and `cat`/`stack` of a list, for the runtime, candle, tch and burn. It follows
    /// devices from where they are named (`Device::Cpu`, `Device::Cuda(1)`,
    /// `Device::new_cuda(0)`, `"cuda:1".parse()`), through the tensor constructors that take
    /// them, `to_device`/`to` moves and the ops that keep their operands' device.
    ///
    /// ## Why is this bad?
    /// It fails at run time ("Expected all tensors to be on the same device"), on the first
    /// input that reaches it, which may be in production.
    ///
    /// ## Example
    /// ```rust,ignore
    /// let weight = Tensor::randn(&[4, 4], 0, &Device::Cuda(0))?;
    /// let x = Tensor::ones(&[1, 4], &Device::Cpu)?;
    /// let y = x.matmul(&weight)?;
    /// ```
    ///
    /// ## Use instead
    /// ```rust,ignore
    /// let device = Device::Cuda(0);
    /// let weight = Tensor::randn(&[4, 4], 0, &device)?;
    /// let x = Tensor::ones(&[1, 4], &Device::Cpu)?.to_device(&device)?;
    /// let y = x.matmul(&weight)?;
    /// ```
    ///
    /// ## In Python
    /// Tensors made on known devices (factory functions with or without `device=`,
    /// `.to(...)`, `.cuda(N)`, `.cpu()`) meeting in `+`, `@` and the other arithmetic operators,
    /// `torch.cat`, `torch.stack`, `torch.matmul` and the like:
    /// ```python
    /// x = torch.randn(64, 256)
    /// w = torch.randn(256, 512, device="cuda:0")
    /// y = x @ w
    /// ```
    /// Use instead:
    /// ```python
    /// x = torch.randn(64, 256, device="cuda:0")
    /// w = torch.randn(256, 512, device="cuda:0")
    /// y = x @ w
    /// ```
    /// A file that calls `torch.set_default_device` is read as it is written: a factory without
    /// `device=` is taken to be on the CPU.
    ///
    /// ## Known limits
    /// Only definite facts count: parameters, values from unknown functions, and bindings whose
    /// branches disagree or that a loop reassigns have an unknown device and never make a
    /// finding. Facts do not cross function boundaries.
    pub(crate) static DEVICE_MISMATCH = ("device_mismatch", Deny, Some(check));
}

fn origin(fact: &Fact) -> String {
    match fact.how {
        How::Named => format!("{} named here", fact.device),
        How::Created => format!("created on {} here", fact.device),
        How::Moved => format!("moved to {} here", fact.device),
    }
}

pub(super) fn check(event: &Event<'_>, language: Language) -> Option<Finding> {
    let Event::Mismatch { op, span, lhs, rhs } = event else {
        return None;
    };
    let mut related = vec![(lhs.origin.clone(), origin(lhs))];
    if rhs.origin != lhs.origin {
        related.push((rhs.origin.clone(), origin(rhs)));
    }
    let finding = Finding::new(
        &DEVICE_MISMATCH,
        span.clone(),
        format!(
            "{op} combines a tensor on {} with one on {}",
            lhs.device, rhs.device
        ),
        "fails at run time: the operands are on different devices",
        format!(
            "move one operand first so both are on one device, for example {} to {}",
            language.pick("`.to_device(..)`", "`.to(..)`"),
            lhs.device
        ),
    );
    Some(Finding { related, ..finding })
}
