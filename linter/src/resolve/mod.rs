//! Resolution: each file is walked once, resolved against the workspace model, and every use
//! of a known API (resolved by path, never by name alone) and every fact the analyses draw
//! becomes an [`Event`] that the rules word as findings.
//!
//! The parts, kept apart as ruff keeps its semantic model, its checker and its rules:
//! - [`semantic`]: what the code means: scopes and bindings (`scope`), types of expressions
//!   and patterns (`infer`), the devices values are on (`facts`);
//! - [`checker`]: the traversal, which keeps the semantic model up to date and calls the
//!   analyses' hooks;
//! - [`analysis`]: one module per analysis (entry points, the current context, defaults,
//!   silent fallbacks, loop invariance, device flow, environment variables, macro bodies),
//!   each with its own per-function state.

mod analysis;
mod checker;
pub mod device_string;
mod semantic;

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::PathBuf;

pub use checker::walk;

use crate::api::{Api, Chooser, Entry};
use crate::model::{CrateId, Model};

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

/// A call of one of the crate's non-public functions, by name: whether its caller had made a
/// context current before it, and which function (if non-public itself) the caller is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CallFact {
    pub callee: String,
    pub caller: Option<String>,
    pub binds: bool,
}

/// What the resolver knows about the package a file belongs to.
#[derive(Clone, Debug, Default)]
pub struct CrateContext {
    /// Names a dependency is known by in code → the crate's real name
    /// (`candle` → `candle_core` for `candle = { package = "candle-core" }`).
    pub renames: HashMap<String, String>,
    /// The real names of the dependencies; `None` when there is no manifest to tell.
    pub dependencies: Option<HashSet<String>>,
    /// Names of path dependencies → their folders, to find dependencies that are workspace
    /// packages.
    pub paths: HashMap<String, PathBuf>,
}

/// How a file takes part in its target, which decides where entry points are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileRole {
    /// Library code: only `#[test]`, `#[cfg(test)]`, thread closures and configured functions
    /// are entry points.
    Library,
    /// The root file of a bin or example target: `main` and the other functions of the file are
    /// the program's start-up code, so they are entry points too.
    BinaryRoot,
    /// Another file of a bin or example target: library-like, but its code has no callers
    /// outside the program.
    BinaryModule,
    /// A file of a test or bench target, or a build script: all of it is an entry point.
    EntryFile,
}

/// Everything the walk of one file needs.
#[derive(Debug)]
pub struct FileContext<'a> {
    pub api: &'a Api,
    /// The workspace's names.
    pub model: &'a Model,
    /// The crate of the model that the file is walked as part of.
    pub crate_id: CrateId,
    pub krate: &'a CrateContext,
    /// The name of the crate (target) the file is compiled into, as its own paths start with it.
    pub crate_name: &'a str,
    pub role: FileRole,
    /// The file's module path inside its crate, without the crate name (`["launch"]`).
    pub module: Vec<String>,
    /// Configured entry points, as full paths (`my_lib::launch::init_rank`).
    pub entry_points: &'a [String],
    /// The functions whose calls the walk records ([`Event::Call`]), by name: asked for only
    /// when findings depend on who calls those functions.
    pub calls_to: Option<&'a crate::api::NameSet>,
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
        in_entry_point: bool,
        in_program: bool,
    },
    /// A `cuda_if_available` whose result nothing looks at.
    SilentFallback { shown: String, span: Range<usize> },
    /// `std::env::set_var` of a variable named by a literal or a constant.
    SetEnvVar {
        variable: String,
        span: Range<usize>,
        in_entry_point: bool,
        /// The first device use earlier in the same function, if any.
        after_device_use: Option<Range<usize>>,
    },
    /// A call of a function whose calls were asked for ([`FileContext::calls_to`]).
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

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;

    /// The canonical paths of the API uses found in `source`, linted as library code of a crate
    /// that renames `candle-core` to `candle`.
    fn uses(source: &str) -> Vec<String> {
        uses_with(source, "")
    }

    /// As [`uses`], with extra API entries in the configuration's format.
    fn uses_with(source: &str, extra: &str) -> Vec<String> {
        let api = Api::new(toml::from_str(extra).expect("extra table")).expect("tables");
        let krate = CrateContext {
            renames: HashMap::from([("candle".to_owned(), "candle_core".to_owned())]),
            dependencies: Some(HashSet::from(["candle_core".to_owned(), "tch".to_owned()])),
            paths: HashMap::new(),
        };
        let model = Model::single_file(source, "demo", &krate);
        let cx = FileContext {
            api: &api,
            model: &model,
            crate_id: 0,
            krate: &krate,
            crate_name: "demo",
            role: FileRole::Library,
            module: Vec::new(),
            entry_points: &[],
            calls_to: None,
        };
        let file = syn::parse_file(source).expect("parses");
        walk(&file, source, &cx)
            .into_iter()
            .filter_map(|event| match event {
                Event::Api { use_, .. } => Some(use_.path),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn imports_renames_and_globs_resolve() {
        assert_eq!(
            uses("use candle::Device; fn f() { Device::new_cuda(1); }"),
            ["candle_core::Device::new_cuda"]
        );
        assert_eq!(
            uses("use candle_core as c; fn f() { c::Device::new_cuda(1); }"),
            ["candle_core::Device::new_cuda"]
        );
        assert_eq!(
            uses("extern crate tch as torch; fn f() { torch::Device::Cuda(1); }"),
            ["tch::Device::Cuda"]
        );
        assert_eq!(
            uses("use tch::*; fn f() { Device::Cuda(1); }"),
            ["tch::Device::Cuda"]
        );
        assert_eq!(
            uses("use tch::{self, Device as D}; fn f() { D::Cuda(1); tch::Device::Cuda(2); }"),
            ["tch::Device::Cuda", "tch::Device::Cuda"]
        );
        assert_eq!(
            uses("fn f() { use tch::Device; Device::Cuda(1); }"),
            ["tch::Device::Cuda"]
        );
        assert_eq!(
            uses("use candle::cuda::cudarc::driver::CudaContext; fn f() { CudaContext::new(0); }"),
            ["cudarc::driver::CudaContext::new"]
        );
    }

    #[test]
    fn local_items_and_module_boundaries_shadow_library_names() {
        assert!(
            uses("enum Device { Cuda(usize) } use tch::*; fn f() { Device::Cuda(1); }").is_empty()
        );
        assert!(uses("use tch::Device; mod inner { fn f() { Device::Cuda(1); } }").is_empty());
        assert!(
            uses("fn f() { Device::Cuda(1); }").is_empty(),
            "unimported names are unknown"
        );
        assert!(
            uses("mod tch { pub enum Device { Cuda(usize) } } fn f() { tch::Device::Cuda(1); }")
                .is_empty()
        );
    }

    #[test]
    fn methods_need_a_receiver_of_known_type() {
        let source = "use std::sync::Arc; use cudarc::driver::CudaContext;
            struct S { ctx: Arc<CudaContext> }
            impl S { fn a(&self) { self.ctx.bind_to_thread(); } }
            fn b(ctx: &CudaContext) { ctx.bind_to_thread(); }
            fn c() { let ctx = CudaContext::new(0).unwrap(); ctx.bind_to_thread(); }
            fn d(other: &Other) { other.bind_to_thread(); }
            fn e() { let ctx = CudaContext::new(0).unwrap(); let ctx = other(); ctx.bind_to_thread(); }";
        let found = uses(source);
        let binds = found
            .iter()
            .filter(|path| path.ends_with("::bind_to_thread"))
            .count();
        assert_eq!(binds, 3, "{found:?}");
    }

    #[test]
    fn configured_methods_are_followed_through_variants_and_conversions() {
        let extra = "[[method]]\non = [\"candle_core::CudaDevice\"]\nnames = [\"bind_to_thread\"]\nrole = \"set_current_device\"\n";
        let source = "use candle_core::Device;
            fn a(device: &Device) { if let Device::Cuda(cuda) = device { cuda.bind_to_thread(); } }
            fn b(device: &Device) { match device { Device::Cuda(c) => { c.bind_to_thread(); } _ => {} } }
            fn c(device: &Device) { device.as_cuda_device().unwrap().bind_to_thread(); }
            fn d(device: &Device) -> candle_core::Result<()> { let cuda = device.as_cuda_device()?; cuda.bind_to_thread(); Ok(()) }
            fn e(device: &Device, other: &Other) { if let Device::Cpu = device { other.bind_to_thread(); } }";
        let found = uses_with(source, extra);
        let binds = found
            .iter()
            .filter(|path| *path == "candle_core::CudaDevice::bind_to_thread")
            .count();
        assert_eq!(binds, 4, "{found:?}");
    }

    #[test]
    fn configured_wrappers_are_known_inside_their_own_crate() {
        let extra = "[[item]]\npath = \"demo::gpu::default_gpu\"\nrole = \"implicit_device\"\n";
        let source = "mod gpu { pub fn default_gpu() {} } fn f() { gpu::default_gpu(); crate::gpu::default_gpu(); }";
        assert_eq!(
            uses_with(source, extra),
            ["demo::gpu::default_gpu", "demo::gpu::default_gpu"]
        );
        // Built-in entries describe other crates: a crate's own paths never match them.
        assert!(uses("mod tch { pub mod kind { pub const FLOAT_CUDA: u8 = 0; } } fn f() { crate::tch::kind::FLOAT_CUDA; }").is_empty());
    }
}
