//! The generator of cudarc's function list: every public function of cudarc's layers, classified
//! by what its body calls.

use super::sys_groups::{Group, SYS_SETS, SYS_USES};
use super::*;

/// Names of by-value integer parameters that are GPU ordinals (besides any `CUdevice`, which is
/// an ordinal in practice: `cuDeviceGet(&d, n)` gives `d == n`, and a literal one is a
/// hard-coded GPU).
pub(super) const ORDINAL_NAMES: &[&str] = &[
    "ordinal",
    "device",
    "dev",
    "peerDevice",
    "srcDevice",
    "dstDevice",
    "gpuIndex",
];
pub(super) const INTEGERS: &[&str] = &[
    "c_int", "c_uint", "i32", "u32", "usize", "isize", "i64", "u64",
];

/// Entries for code written against older cudarc or declaring C symbols itself, which 0.19.10's
/// source does not define: (kind, role, ordinal, path, why).
pub(super) const LEGACY: &[(Kind, Role, Option<usize>, &str, &str)] = &[
    (
        Kind::Fn,
        Role::ExplicitDevice,
        Some(0),
        "cudarc::driver::CudaDevice::new",
        "cudarc <= 0.12's device type, replaced by CudaContext",
    ),
    (
        Kind::Method,
        Role::SetCurrentDevice,
        None,
        "cudarc::driver::CudaDevice::bind_to_thread",
        "cudarc <= 0.12's device type, replaced by CudaContext",
    ),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Layer {
    Safe,
    Result,
    Sys,
}

/// A public function of the source.
pub(super) struct Function {
    path: String,
    /// The top-level module (`driver`, `nccl`).
    module: String,
    layer: Layer,
    kind: Kind,
    /// The type of an `impl` block the function is in.
    self_ty: Option<String>,
    /// The module path of that type, where the function's path starts: an `impl` block may
    /// add methods to another module's type (`cufile` adds some to `driver::CudaStream`).
    owner: String,
    /// The index and name of the first parameter that is a GPU ordinal.
    ordinal: Option<(usize, String)>,
    /// The module path that unqualified calls in the body resolve against.
    scope: String,
    body: Option<syn::Block>,
}

/// What a function does, as far as the lists care.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Verdict {
    role: Option<Role>,
    why: String,
    /// The body calls `bind_to_thread`.
    binds: bool,
    /// The body calls a function of the library's `result` or `sys` layer.
    calls_cuda: bool,
}

pub(super) fn parse_source(path: &Path) -> syn::File {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    syn::parse_file(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

pub(super) fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg") && attr.parse_args::<syn::Ident>().is_ok_and(|id| id == "test")
    })
}

pub(super) fn public(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

pub(super) fn type_text(ty: &syn::Type) -> String {
    ty.to_token_stream().to_string().replace(' ', "")
}

pub(super) fn last_segment(text: &str) -> &str {
    text.rsplit("::").next().unwrap_or(text)
}

/// The first parameter (receiver not counted) that is a GPU ordinal.
pub(super) fn ordinal_param(sig: &syn::Signature) -> Option<(usize, String)> {
    sig.inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(typed) => Some(typed),
            syn::FnArg::Receiver(_) => None,
        })
        .enumerate()
        .find_map(|(index, typed)| {
            let syn::Pat::Ident(name) = &*typed.pat else {
                return None;
            };
            let name = name.ident.to_string();
            let ty = type_text(&typed.ty);
            if ty.starts_with('*') || ty.starts_with('&') {
                return None;
            }
            let last = last_segment(&ty);
            let device = matches!(last, "CUdevice" | "CUdevice_v1");
            let named = INTEGERS.contains(&last) && ORDINAL_NAMES.contains(&name.as_str());
            (device || named).then_some((index, name))
        })
}

pub(super) fn first_existing(candidates: &[PathBuf]) -> Option<PathBuf> {
    candidates.iter().find(|path| path.is_file()).cloned()
}

/// The file of `mod name;` declared in `file`.
pub(super) fn child_file(file: &Path, name: &str) -> Option<PathBuf> {
    let dir = file.parent()?;
    let base = match file.file_name()?.to_str()? {
        "mod.rs" | "lib.rs" => dir.to_path_buf(),
        other => dir.join(other.trim_end_matches(".rs")),
    };
    first_existing(&[
        base.join(format!("{name}.rs")),
        base.join(name).join("mod.rs"),
    ])
}

pub(super) struct Collector<'a> {
    module: &'a str,
    layer: Layer,
    functions: Vec<Function>,
    /// The public types the safe layer defines.
    types: BTreeSet<String>,
}

impl Collector<'_> {
    /// The functions of `items` (from `file`), whose paths start with `prefix`. The safe layer
    /// is flattened: `pub use safe::*` re-exports its types at the module's root.
    fn items(&mut self, file: &Path, items: &[syn::Item], prefix: &str) {
        for item in items {
            match item {
                syn::Item::Fn(function) if public(&function.vis) && !test_only(&function.attrs) => {
                    let name = function.sig.ident.to_string();
                    if self.layer == Layer::Sys
                        && matches!(name.as_str(), "culib" | "is_culib_present" | "lib")
                    {
                        continue;
                    }
                    self.functions.push(Function {
                        path: format!("{prefix}::{name}"),
                        module: self.module.to_owned(),
                        layer: self.layer,
                        kind: Kind::Fn,
                        self_ty: None,
                        owner: prefix.to_owned(),
                        ordinal: ordinal_param(&function.sig),
                        scope: prefix.to_owned(),
                        body: (self.layer != Layer::Sys).then(|| (*function.block).clone()),
                    });
                }
                syn::Item::Impl(block)
                    if self.layer == Layer::Safe
                        && block.trait_.is_none()
                        && !test_only(&block.attrs) =>
                {
                    let syn::Type::Path(ty) = &*block.self_ty else {
                        continue;
                    };
                    let Some(ty) = ty.path.segments.last().map(|s| s.ident.to_string()) else {
                        continue;
                    };
                    for item in &block.items {
                        let syn::ImplItem::Fn(method) = item else {
                            continue;
                        };
                        if !public(&method.vis) || test_only(&method.attrs) {
                            continue;
                        }
                        let name = method.sig.ident.to_string();
                        self.functions.push(Function {
                            path: format!("{prefix}::{ty}::{name}"),
                            module: self.module.to_owned(),
                            layer: self.layer,
                            kind: if method.sig.receiver().is_some() {
                                Kind::Method
                            } else {
                                Kind::Fn
                            },
                            self_ty: Some(ty.clone()),
                            owner: prefix.to_owned(),
                            ordinal: ordinal_param(&method.sig),
                            scope: prefix.to_owned(),
                            body: Some(method.block.clone()),
                        });
                    }
                }
                syn::Item::Struct(ty) if public(&ty.vis) => {
                    self.types.insert(ty.ident.to_string());
                }
                syn::Item::Enum(ty) if public(&ty.vis) => {
                    self.types.insert(ty.ident.to_string());
                }
                syn::Item::Mod(module) if !test_only(&module.attrs) => {
                    let inner = if self.layer == Layer::Safe {
                        prefix.to_owned()
                    } else if public(&module.vis) {
                        format!("{prefix}::{}", module.ident)
                    } else {
                        continue;
                    };
                    match &module.content {
                        Some((_, items)) => self.items(file, items, &inner),
                        None => {
                            if let Some(child) = child_file(file, &module.ident.to_string()) {
                                let parsed = parse_source(&child);
                                self.items(&child, &parsed.items, &inner);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

pub(super) fn collect_cudarc(root: &Path) -> Vec<Function> {
    let src = root.join("src");
    let mut modules: Vec<String> = std::fs::read_dir(&src)
        .unwrap_or_else(|err| panic!("{}: {err}", src.display()))
        .filter_map(Result::ok)
        .filter(|entry| entry.path().is_dir())
        .filter_map(|entry| entry.file_name().to_str().map(str::to_owned))
        .collect();
    modules.sort();
    let mut functions = Vec::new();
    let mut types: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for module in &modules {
        let dir = src.join(module);
        let layers = [
            (
                Layer::Sys,
                vec![dir.join("sys/mod.rs"), dir.join("sys.rs")],
                format!("cudarc::{module}::sys"),
            ),
            (
                Layer::Result,
                vec![dir.join("result.rs"), dir.join("result/mod.rs")],
                format!("cudarc::{module}::result"),
            ),
            (
                Layer::Safe,
                vec![dir.join("safe.rs"), dir.join("safe/mod.rs")],
                format!("cudarc::{module}"),
            ),
        ];
        for (layer, candidates, prefix) in layers {
            let Some(file) = first_existing(&candidates) else {
                continue;
            };
            let mut collector = Collector {
                module,
                layer,
                functions: Vec::new(),
                types: BTreeSet::new(),
            };
            collector.items(&file, &parse_source(&file).items, &prefix);
            functions.extend(collector.functions);
            for ty in collector.types {
                types.entry(ty).or_default().push(prefix.clone());
            }
        }
    }
    // Methods added to another module's type belong to that type.
    for function in &mut functions {
        let Some(ty) = &function.self_ty else {
            continue;
        };
        let owners = types.get(ty).map(Vec::as_slice).unwrap_or_default();
        if !owners.contains(&function.owner)
            && let [owner] = owners
        {
            function.owner = owner.clone();
            function.path = format!("{owner}::{ty}::{}", last_segment(&function.path));
        }
    }
    // The raw layers declare some functions once per CUDA version: keep one, with the ordinal
    // of whichever declaration has one.
    let mut merged: Vec<Function> = Vec::new();
    for function in functions {
        match merged.iter_mut().find(|other| other.path == function.path) {
            Some(other) => {
                other.ordinal = other.ordinal.take().or(function.ordinal);
            }
            None => merged.push(function),
        }
    }
    merged
}

/// Calls and `bind_to_thread`s in a body, in source order.
pub(super) enum Event {
    Bind,
    /// The paths the callee may have.
    Call(Vec<String>),
}

pub(super) struct Calls<'a> {
    function: &'a Function,
    events: Vec<Event>,
}

impl Calls<'_> {
    fn candidates(&self, path: &syn::Path) -> Vec<String> {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let function = self.function;
        match segments.first().map(String::as_str) {
            Some("crate") => vec![format!("cudarc::{}", segments[1..].join("::"))],
            Some("result" | "sys") => {
                vec![format!(
                    "cudarc::{}::{}",
                    function.module,
                    segments.join("::")
                )]
            }
            Some("Self") => function
                .self_ty
                .iter()
                .map(|ty| format!("{}::{ty}::{}", function.owner, segments[1..].join("::")))
                .collect(),
            Some(_) => vec![format!("{}::{}", function.scope, segments.join("::"))],
            None => Vec::new(),
        }
    }
}

impl<'ast> Visit<'ast> for Calls<'_> {
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        syn::visit::visit_expr_call(self, call);
        if let syn::Expr::Path(path) = &*call.func {
            let candidates = self.candidates(&path.path);
            self.events.push(Event::Call(candidates));
        }
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        syn::visit::visit_expr_method_call(self, call);
        if call.method == "bind_to_thread" {
            self.events.push(Event::Bind);
        } else if let (syn::Expr::Path(receiver), Some(ty)) =
            (&*call.receiver, &self.function.self_ty)
            && receiver.path.is_ident("self")
        {
            let path = format!("{}::{ty}::{}", self.function.owner, call.method);
            self.events.push(Event::Call(vec![path]));
        }
    }
}

pub(super) fn events(function: &Function) -> Vec<Event> {
    let mut calls = Calls {
        function,
        events: Vec::new(),
    };
    if let Some(body) = &function.body {
        calls.visit_block(body);
    }
    calls.events
}

/// The path a reader recognizes: `result::ctx::set_current`, `sys::cuCtxSetCurrent`.
pub(super) fn short(path: &str) -> String {
    let rest = path.strip_prefix("cudarc::").unwrap_or(path);
    rest.split_once("::")
        .map_or(rest, |(_, rest)| rest)
        .to_owned()
}

pub(super) fn classify_cudarc(functions: &[Function]) -> BTreeMap<String, Verdict> {
    let known: BTreeSet<(&str, &str)> = functions
        .iter()
        .filter(|f| f.layer == Layer::Sys)
        .map(|f| (f.module.as_str(), last_segment(&f.path)))
        .collect();
    for (module, _, names) in SYS_SETS.iter().chain(SYS_USES) {
        for name in *names {
            assert!(
                known.contains(&(*module, *name)),
                "cudarc has no `{module}::sys::{name}`: fix the name in this file"
            );
        }
    }
    let mut verdicts: BTreeMap<String, Verdict> = BTreeMap::new();
    for function in functions.iter().filter(|f| f.layer == Layer::Sys) {
        let name = last_segment(&function.path);
        let listed = |table: &[Group]| {
            table
                .iter()
                .find(|(module, _, names)| *module == function.module && names.contains(&name))
                .map(|(_, why, _)| (*why).to_owned())
        };
        let verdict = if let Some(why) = listed(SYS_SETS) {
            Verdict {
                role: Some(Role::SetCurrentDevice),
                why,
                ..Verdict::default()
            }
        } else if let Some(why) = listed(SYS_USES) {
            Verdict {
                role: Some(Role::CurrentDeviceUser),
                why,
                ..Verdict::default()
            }
        } else if let Some((_, param)) = &function.ordinal {
            Verdict {
                role: Some(Role::ExplicitDevice),
                why: format!("`{param}` is a device"),
                ..Verdict::default()
            }
        } else {
            Verdict::default()
        };
        verdicts.insert(function.path.clone(), verdict);
    }
    // The result and safe layers call each other and the raw layer: iterate to a fixpoint.
    let layered: Vec<(&Function, Vec<Event>)> = functions
        .iter()
        .filter(|f| f.layer != Layer::Sys)
        .map(|f| (f, events(f)))
        .collect();
    loop {
        let mut changed = false;
        for (function, events) in &layered {
            let verdict = classify_layered(function, events, &verdicts);
            if verdicts.get(&function.path) != Some(&verdict) {
                verdicts.insert(function.path.clone(), verdict);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    verdicts
}

/// A `result` function does what the raw functions it wraps do; a safe one sets the current
/// context if it calls a function that does, and uses it if it calls a function that does before
/// any `bind_to_thread`. A function with an ordinal parameter is an explicit device (safe
/// constructors such as `CudaContext::new` also bind the new context: that is their documented
/// job, and the caller chose the device).
pub(super) fn classify_layered(
    function: &Function,
    events: &[Event],
    verdicts: &BTreeMap<String, Verdict>,
) -> Verdict {
    let mut verdict = Verdict::default();
    let mut set = None;
    let mut used = None;
    for event in events {
        match event {
            Event::Bind => verdict.binds = true,
            Event::Call(candidates) => {
                for candidate in candidates {
                    let Some(callee) = verdicts.get(candidate) else {
                        continue;
                    };
                    let layer = if candidate.contains("::sys::") {
                        Layer::Sys
                    } else if candidate.contains("::result::") {
                        Layer::Result
                    } else {
                        Layer::Safe
                    };
                    verdict.calls_cuda |= layer != Layer::Safe;
                    match callee.role {
                        Some(Role::SetCurrentDevice) => {
                            set.get_or_insert_with(|| short(candidate));
                        }
                        Some(Role::CurrentDeviceUser)
                            if !verdict.binds || function.layer == Layer::Result =>
                        {
                            used.get_or_insert_with(|| short(candidate));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    let ordinal = function.ordinal.as_ref();
    (verdict.role, verdict.why) = match (function.layer, set, used, ordinal) {
        (Layer::Safe, _, _, Some((_, param))) => {
            (Some(Role::ExplicitDevice), format!("`{param}` is a device"))
        }
        (_, Some(callee), _, _) => (Some(Role::SetCurrentDevice), format!("calls {callee}")),
        (Layer::Safe, None, Some(callee), None) => (
            Some(Role::CurrentDeviceUser),
            format!("calls {callee} without binding its context first"),
        ),
        (_, None, Some(callee), _) => (Some(Role::CurrentDeviceUser), format!("calls {callee}")),
        (_, None, None, Some((_, param))) => {
            (Some(Role::ExplicitDevice), format!("`{param}` is a device"))
        }
        (_, None, None, None) => (None, String::new()),
    };
    verdict
}

/// One line of a list file.
pub(super) fn list_line(path: &str, entry: &Entry, why: &str) -> String {
    let ordinal = entry
        .ordinal
        .map_or_else(|| "-".to_owned(), |ordinal| ordinal.to_string());
    let mut line = format!(
        "{:<6} {:<19} {:<2} {path}",
        entry.kind.name(),
        entry.role.name(),
        ordinal
    );
    if !why.is_empty() {
        let _ = write!(line, "  # {why}");
    }
    line
}

pub(super) fn section_title(function: &Function) -> String {
    match function.layer {
        Layer::Safe => format!("cudarc::{}: the safe API", function.module),
        Layer::Result => format!("cudarc::{}::result", function.module),
        Layer::Sys => format!("cudarc::{}::sys", function.module),
    }
}

/// Comment lines listing names, wrapped.
pub(super) fn name_lines(out: &mut String, lead: &str, names: &[String]) {
    let mut line = format!("#   {lead}:");
    for name in names {
        if line.len() + name.len() + 2 > 100 {
            out.push_str(&line);
            out.push('\n');
            line = "#    ".to_owned();
        }
        let _ = write!(line, " {name},");
    }
    out.push_str(line.trim_end_matches(','));
    out.push('\n');
}

pub(super) fn source_dir(variable: &str) -> PathBuf {
    let dir = std::env::var_os(variable).unwrap_or_else(|| {
        panic!("set {variable} to the crate's source folder (see this file's header)")
    });
    let dir = PathBuf::from(dir);
    assert!(
        dir.join("src").is_dir(),
        "{}: no `src` folder",
        dir.display()
    );
    dir
}

/// Writes a list file whole (through a temporary file and a rename), so that the candle
/// generator, which reads cudarc's list, never sees half of one when both run at once.
pub(super) fn write_list(name: &str, text: &str) {
    let path = Path::new(API_DIR).join(name);
    let temporary = path.with_extension("functions.new");
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, &path))
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    eprintln!("wrote {}", path.display());
}

#[test]
#[ignore = "rewrites src/api/cudarc-0.19.functions from the source in $CUDARC_SRC"]
pub(super) fn generate_cudarc_function_list() {
    let root = source_dir("CUDARC_SRC");
    let functions = collect_cudarc(&root);
    let verdicts = classify_cudarc(&functions);
    let version = root
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("cudarc");

    let mut out = format!(
        "# {version}: every public function that changes the calling thread's current device or\n\
         # context (set_current_device), acts on whichever one is current (current_device_user), or\n\
         # takes a GPU ordinal (explicit_device), in the safe API (re-exported at each module's root),\n\
         # `result` and `sys` layers of every module.\n\
         # Generated by `generate_cudarc_function_list` in linter/tests/api_tables/cudarc.rs from the crate's\n\
         # source (CUDARC_SRC=<folder of {version}> cargo test -p cargo-placement --test api_tables\n\
         # -- --ignored generate_cudarc), then reviewed; `cudarc.toml` must agree with it.\n\
         {FORMAT}\n"
    );
    let mut sections: BTreeMap<(String, Layer), Vec<&Function>> = BTreeMap::new();
    for function in &functions {
        if verdicts[&function.path].role.is_some() {
            sections
                .entry((function.module.clone(), function.layer))
                .or_default()
                .push(function);
        }
    }
    let mut listed: BTreeSet<String> = BTreeSet::new();
    let mut sections: Vec<_> = sections.into_iter().collect();
    sections.sort_by_key(|((module, layer), _)| (*layer, module != "driver", module.clone()));
    for (_, mut members) in sections {
        members.sort_by(|a, b| a.path.cmp(&b.path));
        let _ = writeln!(out, "\n# {}", section_title(members[0]));
        for function in members {
            let verdict = &verdicts[&function.path];
            let Some(role) = verdict.role else { continue };
            let entry = Entry {
                kind: function.kind,
                role,
                ordinal: (role == Role::ExplicitDevice)
                    .then(|| function.ordinal.as_ref().map(|(index, _)| *index))
                    .flatten(),
            };
            out.push_str(&list_line(&function.path, &entry, &verdict.why));
            out.push('\n');
            listed.insert(function.path.clone());
        }
    }

    // C names of versioned driver functions: libcuda still exports the unversioned symbols
    // (`cuda.h` declares them for its own build), and a crate may declare them in its own
    // `extern "C"` block, which the linter matches by name. The lowest version's meaning is kept.
    // The other libraries' unversioned names (`cublasCreate`) are header macros, not symbols.
    out.push_str(
        "\n# The unversioned C names of versioned driver functions: not in cudarc, but symbols libcuda\n\
         # still exports, which a crate may declare in its own `extern \"C\"` block (the linter\n\
         # matches those by name).\n",
    );
    let sys_names: BTreeSet<&str> = functions
        .iter()
        .filter(|f| f.layer == Layer::Sys)
        .map(|f| f.path.as_str())
        .collect();
    let mut aliases: BTreeMap<String, String> = BTreeMap::new();
    for function in functions
        .iter()
        .filter(|f| f.layer == Layer::Sys && f.module == "driver")
    {
        let name = last_segment(&function.path);
        let Some((base, version)) = name.rsplit_once("_v") else {
            continue;
        };
        if version.is_empty() || !version.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let alias = format!("cudarc::{}::sys::{base}", function.module);
        if verdicts[&function.path].role.is_none() || sys_names.contains(alias.as_str()) {
            continue;
        }
        let keep = aliases
            .get(&alias)
            .is_none_or(|current| function.path.as_str() < current.as_str());
        if keep {
            aliases.insert(alias, function.path.clone());
        }
    }
    for (alias, versioned) in &aliases {
        let function = functions.iter().find(|f| &f.path == versioned).unwrap();
        let verdict = &verdicts[versioned];
        let role = verdict.role.unwrap();
        let entry = Entry {
            kind: Kind::Fn,
            role,
            ordinal: (role == Role::ExplicitDevice)
                .then(|| function.ordinal.as_ref().map(|(index, _)| *index))
                .flatten(),
        };
        let why = format!("as {}", last_segment(versioned));
        out.push_str(&list_line(alias, &entry, &why));
        out.push('\n');
    }

    out.push_str("\n# Not in cudarc 0.19: kept for code written against older versions.\n");
    for (kind, role, ordinal, path, why) in LEGACY {
        assert!(
            !functions.iter().any(|f| f.path == *path) && !listed.contains(*path),
            "`{path}` is in the source now: drop it from LEGACY"
        );
        let entry = Entry {
            kind: *kind,
            role: *role,
            ordinal: *ordinal,
        };
        out.push_str(&list_line(path, &entry, why));
        out.push('\n');
    }

    // What the safe API does about the current context, for readers of the list.
    out.push_str(
        "\n# Not listed: safe-API functions that bind their own context (`bind_to_thread`) before\n\
         # acting, and those that act only through an explicit handle (a stream, event, module,\n\
         # function or pointer) without needing a particular current context.\n",
    );
    let mut by_type: BTreeMap<(String, bool), Vec<String>> = BTreeMap::new();
    for function in functions.iter().filter(|f| f.layer == Layer::Safe) {
        let verdict = &verdicts[&function.path];
        if verdict.role.is_some() || !(verdict.binds || verdict.calls_cuda) {
            continue;
        }
        let owner = match &function.self_ty {
            Some(ty) => format!("{}::{ty}", function.owner),
            None => function.owner.clone(),
        };
        by_type
            .entry((owner, verdict.binds))
            .or_default()
            .push(last_segment(&function.path).to_owned());
    }
    for binds in [true, false] {
        out.push_str(if binds {
            "# Bind their context first:\n"
        } else {
            "# Act through an explicit handle or need no context, binding nothing:\n"
        });
        for ((owner, _), names) in by_type.iter().filter(|((_, b), _)| *b == binds) {
            name_lines(&mut out, owner, names);
        }
    }
    write_list(CUDARC_LIST, &out);
}
