//! The analyses' shared vocabulary, in terms neither language owns: the [`Event`]s a front end
//! reports as it walks a file (what happened, where, and in which kind of code), which the
//! rules word as findings; the facts those events carry about devices; and what one file tells
//! the others ([`ChooserFact`]). Device strings (`cuda:1`) are read by the grammar the
//! runtime and the macros share (`placement-device-name`).

use std::ops::Range;

use crate::api::{Chooser, Entry, last_part};
use crate::diagnostic::Requirement;

/// Whether the last part of a dotted name says it holds a device (`device`, `self.device_id`),
/// not a device type (`device_type`): a parameter so named is its caller's device, in either
/// language.
pub(crate) fn says_device(name: &str) -> bool {
    let last = last_part(name).as_bytes();
    holds_word(last, b"device") && !holds_word(last, b"type")
}

/// Whether `text` holds `word` (lowercase ASCII) in any case.
fn holds_word(text: &[u8], word: &[u8]) -> bool {
    (text.windows(word.len()))
        .any(|window| window[0] | 0x20 == word[0] && window.eq_ignore_ascii_case(word))
}

/// Whether the last part of a dotted name says it holds a GPU's index (`gpu`, `gpu_id`,
/// `device_index`, `opt.gpu`, `local_rank`), not a count of GPUs (`num_gpus`, `n_gpu`) nor an index into
/// something else (`cuda_idx`, a kernel's): an integer bound to such a name, or passed as such a
/// keyword, names a GPU.
pub(crate) fn says_gpu_index(name: &str) -> bool {
    let last = last_part(name);
    // Most names hold none of the words that could make them one.
    let bytes = last.as_bytes();
    if !(holds_word(bytes, b"gpu")
        || holds_word(bytes, b"ordinal")
        || holds_word(bytes, b"rank")
        || holds_word(bytes, b"device"))
    {
        return false;
    }
    let is = |part: &str, word: &str| part.eq_ignore_ascii_case(word);
    let mut parts = last.split('_').filter(|part| !part.is_empty());
    let Some(end) = parts.next_back() else {
        return false;
    };
    let mut before = parts.peekable();
    if before.peek().is_none() {
        return is(end, "gpu") || is(end, "ordinal");
    }
    // A process's GPU by its rank on the node.
    if is(end, "rank") {
        return before.next().is_some_and(|part| is(part, "local")) && before.next().is_none();
    }
    ["id", "idx", "index", "ordinal"]
        .iter()
        .any(|index| is(end, index))
        && before.any(|part| is(part, "gpu") || is(part, "device"))
}

/// What is definitely known about where a value is, from the code seen so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact {
    /// `cpu`, `cuda:1`, `metal:0`.
    pub device: String,
    /// Where the value got that device.
    pub origin: Range<usize>,
    pub how: How,
}

/// How a value got its device, for the labels of findings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// A device value named here.
    Named,
    /// A tensor created here.
    Created,
    /// A tensor moved here.
    Moved,
}

/// How a tensor came to be on the CPU where it meets model tensors, for the fix a finding
/// suggests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MadeOnCpu {
    /// By a factory without `device=`, or `torch.tensor` of data written out.
    Made,
    /// From a NumPy array (`torch.from_numpy`).
    Converted,
    /// A plain tensor attribute of the module (its name), which the module's `.to()` does not
    /// move.
    Attribute(String),
}

/// A call of one of the crate's non-public functions, by name: whether its caller had made a
/// context current before it, and which function (if non-public itself) the caller is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CallFact {
    pub callee: String,
    pub caller: Option<String>,
    pub binds: bool,
}

/// A use of a known API.
#[derive(Debug)]
pub struct ApiUse<'a> {
    pub entry: &'a Entry,
    /// The canonical path, or `Type::method` for methods.
    pub path: String,
    /// How the source names it (`Device::cuda_if_available`, `.bind_to_thread()`).
    pub shown: String,
    /// The tokens to point at: the path, or the method name.
    pub span: Range<usize>,
    /// Whether the item is used as a value (`unwrap_or_else(Device::cuda_if_available)`)
    /// rather than called.
    pub as_value: bool,
    /// The GPU-ordinal argument when it is an integer literal: its value and span.
    pub literal_ordinal: Option<(u128, Range<usize>)>,
    /// The GPU-ordinal argument when it is a variable: its name (a parameter of the function
    /// that passes its caller's GPU on).
    pub ordinal_from: Option<String>,
    /// Whether the function bound a context (`bind_to_thread`) before this use, making the
    /// current device its own choice.
    pub after_bind: bool,
    /// For a use of the current context in a non-public function that bound none: the
    /// function's name, as its callers name it; the use is right when every caller binds one.
    pub helper: Option<String>,
    /// For a device chosen (a literal ordinal, a default device) outside entry points in a
    /// function that returns it to callers who pass none: that function. Its callers let it
    /// choose for them.
    pub chooser: Option<Chooser>,
}

impl<'a> ApiUse<'a> {
    /// A call of `entry` (whose canonical path is `path`), shown as `shown` at `span`, with
    /// nothing else known of it.
    pub fn new(entry: &'a Entry, path: String, shown: String, span: Range<usize>) -> ApiUse<'a> {
        ApiUse {
            entry,
            path,
            shown,
            span,
            as_value: false,
            literal_ordinal: None,
            ordinal_from: None,
            after_bind: false,
            helper: None,
            chooser: None,
        }
    }
}

/// What the rules see, in source order.
#[derive(Debug)]
pub enum Event<'a> {
    /// A use of a known API.
    Api {
        use_: ApiUse<'a>,
        in_entry_point: bool,
        /// In a bin or example target, whose code has no callers outside the program.
        in_program: bool,
    },
    /// A GPU named by a literal ordinal outside a known constructor: `"cuda:N".parse()` in
    /// Rust; in Python a device string or an integer where a device goes (`device="cuda:1"`,
    /// `.to(1)`, `.cuda(1)`).
    DeviceString {
        ordinal: u128,
        /// How it is written, for messages.
        shown: String,
        span: Range<usize>,
        /// As for [`Event::CurrentDevice`].
        reaches: Vec<Range<usize>>,
        in_entry_point: bool,
        /// As [`ApiUse::chooser`].
        chooser: Option<Chooser>,
    },
    /// An op whose operands are definitely on different devices.
    Mismatch {
        op: String,
        span: Range<usize>,
        lhs: Fact,
        rhs: Fact,
    },
    /// A transfer in a loop whose receiver and target are the same in every iteration.
    LoopTransfer {
        shown: String,
        span: Range<usize>,
        /// The receiver as written, for the help.
        receiver: String,
        /// The loop's keyword.
        keyword: Range<usize>,
    },
    /// In Python, a device left to whatever is current when it is used: `.cuda()`, `"cuda"`
    /// or `torch.device("cuda")` without an index.
    CurrentDevice {
        shown: String,
        span: Range<usize>,
        /// Where the device goes when a name or attribute holds it (`device = "cuda"`, then
        /// `.to(device)` and `device=device`): each place it reaches a device position.
        reaches: Vec<Range<usize>>,
        in_entry_point: bool,
        in_program: bool,
    },
    /// In Python, `cpu_tensor.type_as(other)`: a CPU tensor given the type of a tensor that
    /// may be on a GPU goes to the current GPU (a CUDA tensor's type, `torch.cuda.FloatTensor`,
    /// names no index), not to `other`'s.
    TypeAsCurrent {
        /// The call from its dot, as written (`.type_as(x)`).
        shown: String,
        span: Range<usize>,
        /// The tensor whose type it takes, as written.
        other: String,
        /// Where the CPU tensor was made.
        made: Range<usize>,
        in_entry_point: bool,
        in_program: bool,
    },
    /// In model code (a method of a `torch.nn.Module` subclass, of a candle or tch `Module`),
    /// a tensor made on the CPU meeting, in one op, a tensor that follows the model to its
    /// device.
    UnplacedTensor {
        /// How it was made, as written, unless too long to show.
        shown: Option<String>,
        /// Where it was made.
        span: Range<usize>,
        how: MadeOnCpu,
        /// The op, as written, unless too long to show.
        op: Option<String>,
        op_span: Range<usize>,
        /// The tensor it meets, as written.
        other: String,
        /// A tensor whose `.device` the fix can name: the tensor it meets, when a name.
        device_of: Option<String>,
        /// What the project must tell for the finding to stand: that a base class of another
        /// module is a module class, or that model code hands the function its tensors.
        requires: Option<Requirement>,
    },
    /// A `cuda_if_available` whose result nothing looks at.
    SilentFallback { shown: String, span: Range<usize> },
    /// Library code asking the GPU driver something while its module is loaded: in Python at
    /// an import (a module's top level, a class body, a default argument); in Rust in a
    /// function that runs when the library is loaded (`#[ctor]`).
    CudaAtImport {
        /// The call as written (`torch.cuda.is_available`).
        shown: String,
        span: Range<usize>,
        /// Where it runs then, for messages: `at import`, `when loaded`.
        when: &'static str,
    },
    /// `std::env::set_var` of a variable named by a literal or a constant.
    SetEnvVar {
        variable: String,
        span: Range<usize>,
        in_entry_point: bool,
        /// The first device use earlier in the same function, if any.
        after_device_use: Option<Range<usize>>,
    },
    /// A call of a function whose calls were asked for (`FileContext::calls_to` of the Rust walk).
    Call(CallFact),
}

impl Event<'_> {
    /// The function that chooses, in this event, a device it returns to callers who pass none
    /// ([`ApiUse::chooser`]): a fact for the other files, apart from any finding.
    pub fn chooser(&self) -> Option<&Chooser> {
        match self {
            Event::Api { use_, .. } => use_.chooser.as_ref(),
            Event::DeviceString { chooser, .. } => chooser.as_ref(),
            _ => None,
        }
    }
}

/// A function that chooses a device for its callers, and the choice, in the words of the
/// choice's own finding (``hard-coded GPU ordinal `0` in `Device::new_cuda` ``). What one file
/// tells the others, recorded before levels and suppressions: allowing the choice's own finding
/// keeps its callers flagged.
#[derive(Clone, Debug)]
pub struct ChooserFact {
    pub chooser: Chooser,
    pub choice: String,
    /// Where the choice is, in the file's text.
    pub offset: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_index_is_told_from_a_count_and_from_other_indexes() {
        for name in [
            "gpu",
            "gpu_id",
            "opt.gpu",
            "device_index",
            "GPU_IDX",
            "ordinal",
            "cuda_device_id",
        ] {
            assert!(says_gpu_index(name), "{name}");
        }
        for name in [
            "num_gpus",
            "n_gpu",
            "gpu_count",
            "cuda_idx",
            "index",
            "rank",
            "",
            "_",
        ] {
            assert!(!says_gpu_index(name), "{name}");
        }
    }
}
