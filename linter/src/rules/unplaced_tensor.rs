use super::declare_rule;
use crate::analysis::{Event, MadeOnCpu};
use crate::diagnostic::Finding;
use crate::source::Language;

declare_rule! {
    /// ## What it does
    /// Flags, in model code, a tensor made on the CPU that meets, in one op, a tensor that
    /// follows the model to its device.
    ///
    /// Model code is the methods of a `torch.nn.Module` subclass (also a Lightning module, or a
    /// class whose base is one, in any module of the project) but its constructor, the methods
    /// that only the constructor calls (a probe that sizes a layer) and the methods that set up
    /// parameters or submodules as one does, which run on the CPU before the module moves; and the project's functions and methods that model code hands its
    /// tensors (`add_positions(x)` in `forward`), through other such functions; a call on
    /// `self` reaches the method of any class above or below the caller's in the project's
    /// class hierarchy (a base's `forward` calling `self._format_outputs(x)` that a subclass
    /// defines, a subclass calling an inherited helper), and a call on a module of one of the
    /// module's containers (`for flow in self.flows: flow.inverse(z)`) reaches that method of
    /// any module class. A tensor
    /// follows the model when it is an input of `forward`, a parameter, buffer or submodule of
    /// the module (`self.weight`, `self.linear(x)`), the output of a module the constructor was
    /// given (`self.net = net`, then `self.net(x)`), one handed on by model code, or is
    /// computed from one. Made on the CPU: a factory without `device=` (`torch.arange(n)`,
    /// `torch.ones(n, n).tril()`, `torch.zeros(batch, hidden)`), `torch.tensor([...])` of data
    /// written out, a legacy `torch.IntTensor(b, 1)`, `torch.from_numpy(...)`, what a function
    /// of torch makes of those (`torch.exp(torch.arange(n) * -s)`), what the project's
    /// functions compute from those or make on the CPU on every path and return (each
    /// function's summary: `random_mask(x, p)` flagged where it makes its mask), and a plain
    /// tensor attribute set in `__init__` instead of a buffer; wrapped in `nn.Parameter` or
    /// `Variable` outside a constructor, it stays there. One op: arithmetic, comparison and
    /// in-place operators, `@`, `torch.cat`, `stack`, `where`, `matmul`, `einsum`, `bucketize`,
    /// `F.conv2d` and the like (and `torch_scatter`'s `scatter_add`), the tensor methods of the
    /// same (`x.masked_fill(mask, v)`, the index of `x.index_select(0, index)`), a layer of
    /// `torch.nn` or a module of the project given it as its input (`self.rnn(torch.zeros(b,
    /// h), state)`, `self.embed(positions)`), and a CPU tensor indexed with a mask on the
    /// model's device.
    ///
    /// ## Why is this bad?
    /// It is the device error users meet most ("Expected all tensors to be on the same device,
    /// but found at least two devices, cuda:0 and cpu!"), and no test on a machine without a
    /// GPU finds it: there both tensors are on the CPU. It fails on the first GPU the model is
    /// moved to.
    ///
    /// ## Example
    /// ```python
    /// class Attention(nn.Module):
    ///     def forward(self, x):
    ///         n = x.shape[1]
    ///         mask = torch.ones(n, n).tril()
    ///         return x.masked_fill(mask == 0, float("-inf"))
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// class Attention(nn.Module):
    ///     def forward(self, x):
    ///         n = x.shape[1]
    ///         mask = torch.ones(n, n, device=x.device).tril()
    ///         return x.masked_fill(mask == 0, float("-inf"))
    /// ```
    /// or make it once as a buffer (`self.register_buffer("mask", ...)` in `__init__`), which
    /// the module's `.to()` moves with it.
    ///
    /// ## In Rust
    /// Model code is the methods that take `self` of a type implementing candle's `Module` or
    /// `ModuleT` or tch's `nn::Module` or `nn::ModuleT`, or with its own `forward(&self, ..)`
    /// taking a tensor (candle's models that take more than the input), and the functions of
    /// the same file that model code hands its tensors (`add_positions(xs, offset)` in
    /// `forward`). A tensor follows the model when it is a tensor parameter of such a method,
    /// one handed on by model code, a tensor field of `self`, or is computed from one
    /// (`self.linear.forward(xs)?`, `xs.apply(&self.fc)`). Made on the CPU: a constructor given
    /// `&Device::Cpu` (candle's `Tensor::new`, `arange`, `tril2`, ...), tch's `(Kind::Float,
    /// Device::Cpu)` and `kind::FLOAT_CPU`, `Tensor::from_slice`. One op: the arithmetic
    /// operators, `matmul`, candle's `broadcast_*`, comparisons, `where_cond` and
    /// `index_select`, tch's `f_*` forms and `masked_fill`, `Tensor::cat` and `stack`. A 0-dim
    /// tensor is flagged too: candle does not take it for a scalar.
    /// ```rust,ignore
    /// impl Module for Attention {
    ///     fn forward(&self, xs: &Tensor) -> Result<Tensor> {
    ///         let mask = Tensor::tril2(xs.dim(1)?, DType::F32, &Device::Cpu)?; // flagged
    ///         let mask = Tensor::tril2(xs.dim(1)?, DType::F32, xs.device())?; // the fix
    ///         xs.broadcast_mul(&mask)
    ///     }
    /// }
    /// ```
    ///
    /// ## In Python
    /// Never flagged, because they work on a GPU: a 0-dim CPU tensor (`torch.tensor(1.0)`,
    /// `torch.tensor(scale)`, `lengths.max()`: PyTorch takes it as a scalar), a CPU index used
    /// to index (`x[idx]`), a tensor moved before it meets (`.to(x.device)`, `.to(x)`),
    /// `*_like` and `x.new_*` constructors, buffers, a layer's lengths and options
    /// (`nn.CTCLoss`'s), and code that model code never reaches (data loading, training
    /// scripts, tests), where CPU meets CPU, and a branch taken only while the model is
    /// exported (`if torch.jit.is_tracing():`), which export scripts run on the CPU.
    ///
    /// ## Known limits
    /// In Rust, a function of another file that model code hands its tensors, or a tensor that
    /// a function makes on the CPU and returns (`make_causal_mask(n)`), is not followed, and
    /// burn makes no tensor on a CPU of its own (its default device is `implicit_device`'s). In
    /// Python, the inputs of `forward` are taken for tensors on the model's device, and so are
    /// other methods' parameters annotated as tensors; others follow the model only where model
    /// code hands them its tensors. A library's module classes are known from the torch table's
    /// `module_classes` (Lightning's, `torchmetrics.Metric`, `transformers.PreTrainedModel`,
    /// ...), others not; a tensor made by a function kept in an attribute
    /// (`self.window_fn(n)`), or handed to a submodule that meets it with its weights only
    /// inside (its `forward`'s second input), is not followed. A tensor left behind by
    /// `device_map` sharding or CPU offload, or an input a convenience API never moves, needs
    /// run-time facts. Measured blind, its first build was wrong on every finding of fifteen
    /// repositories' model code (0 of 13: round 37 in `rounds/`). Since fixed, it finds 28 of
    /// 53 real bugs that projects fixed (`rounds/mined/`, which it was tuned on); on a held-out
    /// set mined afterwards (`rounds/mined-2/`) its frozen build found 7 of 38, and 9 of 33 of
    /// its judged findings were right (most wrong ones were code taken only while the model is
    /// exported, now exempt, and ONNX export wrappers); on a third (`rounds/mined-3/`), 2 of
    /// 33, most of them outside what it counts as model code, with 5 of its 7 judged findings
    /// right; on a fourth (`rounds/mined-4/`), 7 of 35, 25 of 34 findings right; on a fifth
    /// (`rounds/mined-5/`), 6 of 22, 43 of 43 findings right; on a sixth (`rounds/mined-6/`), 3
    /// of 24, 12 of 32 findings right. It is `allow` until a blind round
    /// measures its precision at 0.9 or more: enable it with `-W unplaced_tensor`, or
    /// `unplaced_tensor = "warn"` under `[levels]`. Model code is walked only where the rule is
    /// on, where it costs: about 1.6 times the instructions of a Python lint without it.
    pub(crate) static UNPLACED_TENSOR = ("unplaced_tensor", Allow, Some(check));
}

fn check(event: &Event<'_>, language: Language) -> Option<Finding> {
    let Event::UnplacedTensor {
        shown,
        span,
        how,
        op,
        op_span,
        other,
        device_of,
        requires,
    } = event
    else {
        return None;
    };
    let made = match shown {
        Some(shown) => format!("`{shown}`"),
        None => "this tensor".to_owned(),
    };
    let (message, label) = match how {
        MadeOnCpu::Attribute(name) => (
            format!("`self.{name}` stays on the CPU when the module moves, and meets `{other}`"),
            "set to a CPU tensor, not a buffer",
        ),
        _ => (
            format!(
                "{made} is made on the CPU and meets `{other}`, which is on the model's device"
            ),
            "made on the CPU",
        ),
    };
    let help = match (language, how, device_of) {
        (Language::Rust, _, Some(tensor)) => format!(
            "make it where `{tensor}` is: give it `{tensor}.device()` in place of the CPU, or \
             move it with `.to_device({tensor}.device())`"
        ),
        (Language::Rust, _, None) => "make it on the model's device: give it the `.device()` \
             of one of the method's tensors in place of the CPU"
            .to_owned(),
        (_, MadeOnCpu::Made, Some(tensor)) => {
            format!("make it where `{tensor}` is: `device={tensor}.device`, or make it a buffer")
        }
        (_, MadeOnCpu::Made, None) => "make it on the model's device: `device=` the `.device` of \
             one of the method's tensors, or make it a buffer"
            .to_owned(),
        (_, MadeOnCpu::Converted, Some(tensor)) => {
            format!("move it before it meets: `.to({tensor}.device)`")
        }
        (_, MadeOnCpu::Converted, None) => {
            "move it before it meets: `.to(...)` the `.device` of one of the method's tensors"
                .to_owned()
        }
        (_, MadeOnCpu::Attribute(name), _) => format!(
            "register it as a buffer (`self.register_buffer(\"{name}\", ...)`), which the \
             module's `.to()` moves"
        ),
    };
    let finding = Finding::new(&UNPLACED_TENSOR, span.clone(), message, label, help);
    let op = match op {
        Some(op) => format!("meets `{other}` in `{op}`, which fails on a GPU"),
        None => format!("meets `{other}` here, which fails on a GPU"),
    };
    Some(Finding {
        related: vec![(op_span.clone(), op)],
        requires: requires.clone(),
        ..finding
    })
}
