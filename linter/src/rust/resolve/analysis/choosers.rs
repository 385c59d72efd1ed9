//! Functions that choose a device for their callers: a free function, or an associated function
//! of a type's own `impl`, that takes no device (by its type or its name), returns one (`-> Device`, `-> Result<Device>`,
//! `-> Arc<CudaContext>`), and chooses it itself
//! (a literal ordinal, a default or "best available" device). Each choice made in such a
//! function names it ([`ApiUse::chooser`]), and the driver records it as a fact of the file,
//! whatever the levels and suppressions of the choice's own finding; once every file is
//! linted, the function becomes an API entry of its own that chooses the device implicitly,
//! and its calls outside entry points are flagged like calls of `cuda_if_available`
//! (`Choosers` in `project::rust_files`, decided in the project's fixed point).

use std::ops::Range;

use syn::Expr;
use syn::spanned::Spanned;
use syn::visit::Visit;

use super::FnInfo;
use crate::analysis::{ApiUse, says_device};
use crate::api::{Chooser, Role};
use crate::rust::resolve::semantic::Semantic;
use crate::rust::resolve::semantic::syntax::{idents, passes_value, variable};

#[derive(Debug, Default)]
pub(in crate::rust::resolve) struct State {
    /// The current function, when it returns a device and takes none.
    chooser: Option<Chooser>,
    /// The current function, when it takes no device and returns something else
    /// (`fn default() -> Self`, `fn context() -> Arc<Context>`): a chooser only of what it
    /// returns as it was made ([`State::returned`]).
    returning: Option<Chooser>,
    /// The spans of the calls whose value the current function returns as it is (through
    /// `?`, `.unwrap()`, `Ok(..)`, `Arc::new(..)`): a GPU such a call opens by a literal, or
    /// a device it chooses, is the one the function's callers get (`Self::new(0).expect(..)`,
    /// `Arc::new(Context::default())`).
    returned: Vec<Range<usize>>,
    /// The current function, when its callers can name it ([`callable_path`]) and it has no
    /// receiver: a GPU it opens from one of its parameters is the GPU its caller names there.
    opener: Option<Opener>,
    /// Whether the current function takes its caller's device (a parameter of a device type,
    /// or named for a device or a GPU's index, not as an `Option`): a device it builds from it
    /// is the caller's choice (`fn device_from_name(device: &str)`).
    pub(super) takes_device: bool,
    /// The names of those parameters.
    device_params: Vec<String>,
    /// Inside the arms of a `match` on one of them (`match preference { Auto =>
    /// Self::auto(), .. }`): a chooser called there makes the choice its caller asked for.
    pub(super) dispatching: usize,
    /// Names bound by the pattern of the arm being walked, of a `match` on one of the
    /// function's parameters (`match device { Device::Cuda(n) => new_cuda(n) }`): each with
    /// that parameter and the variant's name, which says what kind of GPU its field numbers.
    variant_fields: Vec<(String, String, String)>,
}

/// A function that may open the GPU its caller names.
#[derive(Debug)]
struct Opener {
    path: String,
    krate: crate::source::CrateId,
    /// The device type it returns, if it returns one.
    returns: String,
    /// Its parameters' names, in the order a call passes them.
    params: Vec<Option<String>>,
}

impl State {
    pub(super) fn for_function(sem: &Semantic<'_, '_>, info: &FnInfo<'_>) -> State {
        let (chooser, returning) = match chooser(sem, info) {
            Some((chooser, true)) => (Some(chooser), None),
            Some((chooser, false)) => (None, Some(chooser)),
            None => (None, None),
        };
        let device = device_type(sem);
        let takes = |input: &&syn::FnArg| match input {
            syn::FnArg::Typed(typed) => !is_option(&typed.ty) && takes_device(typed, &device),
            syn::FnArg::Receiver(_) => false,
        };
        let inputs = info.sig.into_iter().flat_map(|sig| &sig.inputs);
        State {
            chooser,
            returning,
            returned: Vec::new(),
            opener: opener(sem, info),
            takes_device: inputs.clone().any(|input| takes(&input)),
            device_params: (inputs.filter(takes))
                .filter_map(|input| match input {
                    syn::FnArg::Typed(typed) => match &*typed.pat {
                        syn::Pat::Ident(name) => Some(name.ident.to_string()),
                        _ => None,
                    },
                    syn::FnArg::Receiver(_) => None,
                })
                .collect(),
            dispatching: 0,
            variant_fields: Vec::new(),
        }
    }

    /// An arm of a `match` on `scrutinee`, before its body: when the scrutinee is a parameter
    /// of an opener and the arm's pattern a variant with one field (`Device::Cuda(n)`), `n`
    /// holds what the caller passed there. Returns how many names to forget after the arm.
    pub(super) fn enter_arm(&mut self, scrutinee: &Expr, arm: &syn::Arm) -> usize {
        let Some(opener) = &self.opener else {
            return 0;
        };
        let Some(param) = variable(scrutinee)
            .filter(|name| opener.params.iter().any(|p| p.as_deref() == Some(name)))
        else {
            return 0;
        };
        let syn::Pat::TupleStruct(variant) = &arm.pat else {
            return 0;
        };
        let [syn::Pat::Ident(field)] = variant.elems.iter().collect::<Vec<_>>()[..] else {
            return 0;
        };
        let Some(kind) = variant.path.segments.last() else {
            return 0;
        };
        let kind = kind.ident.to_string().to_ascii_lowercase();
        self.variant_fields
            .push((field.ident.to_string(), param, kind));
        1
    }

    pub(super) fn leave_arm(&mut self, bound: usize) {
        let kept = self.variant_fields.len().saturating_sub(bound);
        self.variant_fields.truncate(kept);
    }

    /// The function's body: the calls whose values it returns, when what it returns is no
    /// device type.
    pub(in crate::rust::resolve) fn set_returned(
        &mut self,
        sem: &Semantic<'_, '_>,
        block: &syn::Block,
    ) {
        if self.returning.is_none() {
            return;
        }
        let mut returns = Returns::default();
        returns.visit_block(block);
        if let Some(syn::Stmt::Expr(value, None)) = block.stmts.last() {
            returns.values.push(value);
        }
        let mut made = Made {
            sem,
            locals: &returns.locals,
            followed: Vec::new(),
            out: &mut self.returned,
        };
        for value in &returns.values {
            made.calls(value);
        }
    }
}

/// What a function's body returns (`return` values) and what its local names are bound to: a
/// `let`'s value, and the value a `match` or `if let` takes apart for the names its patterns
/// bind. Not looking into closures and nested items.
#[derive(Default)]
struct Returns<'ast> {
    values: Vec<&'ast Expr>,
    locals: Vec<(&'ast syn::Ident, &'ast Expr)>,
}

impl<'ast> Returns<'ast> {
    fn bind(&mut self, pat: &'ast syn::Pat, value: &'ast Expr) {
        struct Names<'n, 'ast>(&'n mut Vec<(&'ast syn::Ident, &'ast Expr)>, &'ast Expr);
        impl<'ast> Visit<'ast> for Names<'_, 'ast> {
            fn visit_pat_ident(&mut self, pat: &'ast syn::PatIdent) {
                self.0.push((&pat.ident, self.1));
                syn::visit::visit_pat_ident(self, pat);
            }
        }
        Names(&mut self.locals, value).visit_pat(pat);
    }
}

impl<'ast> Visit<'ast> for Returns<'ast> {
    fn visit_expr_return(&mut self, ret: &'ast syn::ExprReturn) {
        if let Some(value) = &ret.expr {
            self.values.push(value);
        }
        syn::visit::visit_expr_return(self, ret);
    }
    fn visit_local(&mut self, local: &'ast syn::Local) {
        if let Some(init) = &local.init {
            self.bind(&local.pat, &init.expr);
        }
        syn::visit::visit_local(self, local);
    }
    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        for arm in &m.arms {
            self.bind(&arm.pat, &m.expr);
        }
        syn::visit::visit_expr_match(self, m);
    }
    fn visit_expr_let(&mut self, l: &'ast syn::ExprLet) {
        self.bind(&l.pat, &l.expr);
        syn::visit::visit_expr_let(self, l);
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// The calls whose values a returned value is, as they were made.
struct Made<'a, 'ast> {
    sem: &'a Semantic<'a, 'a>,
    locals: &'a [(&'ast syn::Ident, &'ast Expr)],
    /// The local names already followed.
    followed: Vec<&'ast syn::Ident>,
    out: &'a mut Vec<Range<usize>>,
}

impl<'a, 'ast> Made<'a, 'ast> {
    /// The callee spans of the calls whose value `value` is, as it was made: through `?`,
    /// `.ok()`, `.unwrap()`, `.expect(..)`, `Ok(..)`, `Some(..)`, `Arc::new(..)`, blocks, the
    /// arms of a `match` and the branches of an `if`, a local name's value, and a value made
    /// from one value alone (`Self::try_new(dev)`: a wrapper of the device, not a model that
    /// holds one among other things).
    fn calls(&mut self, value: &'ast Expr) {
        match value {
            Expr::Call(call) => match &*call.func {
                Expr::Path(func) if call.args.len() == 1 && wraps(&func.path) => {
                    self.calls(&call.args[0]);
                }
                func => {
                    self.out.push(self.sem.byte_range(func.span()));
                    if call.args.len() == 1 {
                        self.calls(&call.args[0]);
                    }
                }
            },
            Expr::MethodCall(call) if passes_value(&call.method) => self.calls(&call.receiver),
            Expr::MethodCall(call) => self.out.push(self.sem.byte_range(call.method.span())),
            Expr::Try(inner) => self.calls(&inner.expr),
            Expr::Paren(inner) => self.calls(&inner.expr),
            Expr::Group(inner) => self.calls(&inner.expr),
            Expr::Reference(inner) => self.calls(&inner.expr),
            Expr::Block(block) => self.tail(&block.block),
            Expr::Match(m) => {
                for arm in &m.arms {
                    self.calls(&arm.body);
                }
            }
            Expr::If(branch) => {
                self.tail(&branch.then_branch);
                if let Some((_, other)) = &branch.else_branch {
                    self.calls(other);
                }
            }
            Expr::Path(path) if path.qself.is_none() => {
                let Some(name) = path.path.get_ident() else {
                    return;
                };
                if self.followed.contains(&name) {
                    return;
                }
                let locals = self.locals;
                for &(local, value) in locals.iter().filter(|(local, _)| *local == name) {
                    self.followed.push(local);
                    self.calls(value);
                }
            }
            _ => {}
        }
    }

    fn tail(&mut self, block: &'ast syn::Block) {
        if let Some(syn::Stmt::Expr(value, None)) = block.stmts.last() {
            self.calls(value);
        }
    }
}

/// Whether a call of `path` wraps its one argument as it is (`Ok`, `Some`, `Arc::new`).
fn wraps(path: &syn::Path) -> bool {
    let names = idents(path);
    match names.as_slice() {
        [.., last] if last == "Ok" || last == "Some" => true,
        [.., owner, new] => {
            new == "new" && matches!(owner.as_str(), "Arc" | "Rc" | "Box" | "Mutex" | "RwLock")
        }
        _ => false,
    }
}

/// The path callers name the function being entered by: a free function of its module, or an
/// associated function of an `impl` of a type (`Worker::new`, `Self::new`, `Context::default`
/// of `impl Default for Context`).
fn callable_path(sem: &Semantic<'_, '_>, info: &FnInfo<'_>) -> Option<Vec<String>> {
    match info.owner {
        None if sem.scopes.at_module_level() => Some(sem.scopes.local_path(&info.name)),
        Some(owner) if info.in_impl && owner != "_" && sem.scopes.at_impl_level() => {
            let mut path = sem.scopes.local_path(owner);
            path.push(info.name.clone());
            Some(path)
        }
        _ => None,
    }
}

/// The function being entered as a possible opener of its caller's GPU: callable by path and
/// without a receiver (a method's GPU may come from its receiver).
fn opener(sem: &Semantic<'_, '_>, info: &FnInfo<'_>) -> Option<Opener> {
    let sig = info.sig?;
    let path = callable_path(sem, info)?;
    let mut params = Vec::new();
    for input in &sig.inputs {
        let syn::FnArg::Typed(typed) = input else {
            return None;
        };
        params.push(match &*typed.pat {
            syn::Pat::Ident(name) => Some(name.ident.to_string()),
            _ => None,
        });
    }
    let returns = match &sig.output {
        syn::ReturnType::Type(_, output) => sem
            .type_of(output)
            .and_then(|ty| ty.innermost().named().map(str::to_owned))
            .filter(|name| sem.cx.api.is_device_type(name))
            .unwrap_or_default(),
        syn::ReturnType::Default => String::new(),
    };
    Some(Opener {
        path: path.join("::"),
        krate: sem.cx.crate_id,
        returns,
        params,
    })
}

/// The function being entered, if it can choose a device for its callers: free, or an
/// associated function of a type's `impl` (a method's device may come from its receiver),
/// named in its module, returning something and taking no device but as an `Option` its
/// callers may leave `None`; with whether it returns a device (alone or in a tuple), so that
/// every choice it makes is its callers', or something else, whose choices are its callers'
/// only when it returns what the choice made.
fn chooser(sem: &Semantic<'_, '_>, info: &FnInfo<'_>) -> Option<(Chooser, bool)> {
    // A module's static of a device type (`static DEVICE: Lazy<Device>`): its readers get what
    // its initializer chose.
    if let Some(ty) = info.static_type {
        return (sem.scopes.at_module_level())
            .then(|| device_type(sem)(ty))
            .flatten()
            .map(|returns| {
                let chooser = Chooser {
                    path: sem.scopes.local_path(&info.name).join("::"),
                    krate: sem.cx.crate_id,
                    returns,
                    unless_given: Vec::new(),
                    opens: None,
                };
                (chooser, true)
            });
    }
    let sig = info.sig?;
    let path = callable_path(sem, info)?;
    let syn::ReturnType::Type(_, output) = &sig.output else {
        return None;
    };
    if matches!(&**output, syn::Type::Tuple(unit) if unit.elems.is_empty()) {
        return None;
    }
    let device = device_type(sem);
    let returns = returned_device(output, &device);
    // A parameter of a device type, or one whose name says it is the caller's device or GPU
    // (`fn get_device(device: &str)`, as in Python; `fn wgpu_device(gpu_id: u32)`), leaves the
    // choice to the caller; a flag (`use_gpu: bool`) leaves it to the function. Taken as an
    // `Option` (`device_id: Option<usize>`), the function chooses when the caller passes `None`.
    let mut unless_given = Vec::new();
    for (at, input) in sig.inputs.iter().enumerate() {
        let syn::FnArg::Typed(typed) = input else {
            return None;
        };
        match (takes_device(typed, &device), is_option(&typed.ty)) {
            (false, _) => {}
            (true, true) => unless_given.push(at),
            (true, false) => return None,
        }
    }
    let returns_device = returns.is_some();
    let chooser = Chooser {
        path: path.join("::"),
        krate: sem.cx.crate_id,
        returns: returns.unwrap_or_default(),
        unless_given,
        opens: None,
    };
    Some((chooser, returns_device))
}

/// The device type a written type names, if it names one (through wrappers).
fn device_type<'s>(sem: &'s Semantic<'_, '_>) -> impl Fn(&syn::Type) -> Option<String> + 's {
    |ty: &syn::Type| {
        sem.type_of(ty)
            .and_then(|ty| ty.innermost().named().map(str::to_owned))
            .filter(|name| sem.cx.api.is_device_type(name))
    }
}

/// Whether a parameter takes its caller's device: by its type (also one of the workspace's
/// whose name says it describes a device, `pref: Option<DevicePreference>`), or by a name that
/// says it is a device (not a flag, `use_gpu: bool`) or a GPU's index of an integer type.
fn takes_device(typed: &syn::PatType, device: &dyn Fn(&syn::Type) -> Option<String>) -> bool {
    match &*typed.pat {
        syn::Pat::Ident(name) => {
            let (name, written) = (name.ident.to_string(), type_name(unwrapped(&typed.ty)));
            device(&typed.ty).is_some()
                || written.as_deref().is_some_and(says_device)
                || (says_device(&name) && written.as_deref() != Some("bool"))
                || (says_ordinal(&name) && written.as_deref().is_some_and(is_integer))
        }
        _ => device(&typed.ty).is_some(),
    }
}

/// The device type a function returns: its return type's, through `Option`, `Result` and
/// smart pointers, or that of an element of a returned tuple (`-> (Device, DType)`).
fn returned_device(
    output: &syn::Type,
    device: &dyn Fn(&syn::Type) -> Option<String>,
) -> Option<String> {
    if let Some(found) = device(output) {
        return Some(found);
    }
    match output {
        syn::Type::Tuple(tuple) => tuple
            .elems
            .iter()
            .find_map(|elem| returned_device(elem, device)),
        syn::Type::Paren(inner) => returned_device(&inner.elem, device),
        // `Result<(Device, DType)>`: the tuple in a wrapper's first type argument.
        syn::Type::Path(path) => {
            let last = path.path.segments.last()?;
            if !matches!(last.ident.to_string().as_str(), "Result" | "Option") {
                return None;
            }
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                return None;
            };
            match args.args.first()? {
                syn::GenericArgument::Type(syn::Type::Tuple(tuple)) => tuple
                    .elems
                    .iter()
                    .find_map(|elem| returned_device(elem, device)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether a written type is an `Option` (through references).
fn is_option(ty: &syn::Type) -> bool {
    type_name(ty).as_deref() == Some("Option")
}

/// The type an `Option` holds (`Option<usize>` → `usize`); any other type itself.
fn unwrapped(ty: &syn::Type) -> &syn::Type {
    let syn::Type::Path(path) = ty else {
        return ty;
    };
    match path.path.segments.last() {
        Some(last) if last.ident == "Option" => match &last.arguments {
            syn::PathArguments::AngleBracketed(args) => match args.args.first() {
                Some(syn::GenericArgument::Type(inner)) => inner,
                _ => ty,
            },
            _ => ty,
        },
        _ => ty,
    }
}

/// The last name of a written type, through references (`&str` → `str`, `u32`).
fn type_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Reference(reference) => type_name(&reference.elem),
        syn::Type::Path(path) => path.path.segments.last().map(|last| last.ident.to_string()),
        _ => None,
    }
}

fn is_integer(name: &str) -> bool {
    matches!(
        name,
        "usize" | "u8" | "u16" | "u32" | "u64" | "isize" | "i8" | "i16" | "i32" | "i64"
    )
}

/// Whether a parameter's name says it is a GPU's index (`gpu_id`, `ordinal`, `gpu_index`).
fn says_ordinal(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.contains("gpu") || name.contains("ordinal")
}

/// Whether `scrutinee` reads a parameter that takes the caller's device: a `match` on it
/// chooses in each arm what the caller asked for.
pub(super) fn reads_device_param(state: &State, scrutinee: &Expr) -> bool {
    struct Reads<'s>(&'s [String], bool);
    impl<'ast> Visit<'ast> for Reads<'_> {
        fn visit_path(&mut self, path: &'ast syn::Path) {
            if let Some(name) = path.get_ident() {
                self.1 |= self.0.iter().any(|param| name == param);
            }
            syn::visit::visit_path(self, path);
        }
    }
    let mut reads = Reads(&state.device_params, false);
    reads.visit_expr(scrutinee);
    reads.1
}

/// Names the chooser a use chooses a device in: a literal ordinal anywhere but an entry point,
/// or an implicit device in library code (an entry point or a program chooses for itself).
pub(super) fn on_api_use<'a>(state: &State, use_: ApiUse<'a>, place: Place) -> ApiUse<'a> {
    let chooses = match use_.entry.role {
        Role::ExplicitDevice { .. } => use_.literal_ordinal.is_some() && !place.in_entry,
        Role::ImplicitDevice { .. } => !place.in_entry && !place.in_program,
        _ => false,
    };
    // A GPU opened from a parameter (`Device::new_cuda(rank)`): the function opens the GPU its
    // caller names there.
    let opens = match (&use_.entry.role, &use_.ordinal_from, &state.opener) {
        (Role::ExplicitDevice { gpu, .. }, Some(name), Some(opener)) => {
            // The parameter itself, or the one whose variant, named for the kind of GPU opened
            // (`Device::Cuda(n)` for `new_cuda(n)`), has it as its field.
            let name = match (state.variant_fields.iter().rev()).find(|(field, ..)| field == name) {
                Some((_, param, kind)) => kind.contains(gpu.as_str()).then_some(param),
                None => Some(name),
            };
            name.and_then(|name| {
                (opener.params.iter()).position(|param| param.as_deref() == Some(name.as_str()))
            })
            .map(|at| Chooser {
                path: opener.path.clone(),
                krate: opener.krate,
                returns: opener.returns.clone(),
                unless_given: Vec::new(),
                opens: Some((at, gpu.clone())),
            })
        }
        _ => None,
    };
    // What a function that returns no device type returns as a choice made it.
    let returned = || (state.returning.clone()).filter(|_| state.returned.contains(&use_.span));
    ApiUse {
        chooser: (state.chooser.clone())
            .or_else(returned)
            .filter(|_| chooses)
            .or(opens),
        ..use_
    }
}

/// The chooser a device string (`"cuda:1".parse()`) is in, outside entry points.
pub(super) fn on_device_string(state: &State, place: Place) -> Option<Chooser> {
    state.chooser.clone().filter(|_| !place.in_entry)
}

/// Where a choice is made.
#[derive(Clone, Copy, Debug)]
pub(super) struct Place {
    pub(super) in_entry: bool,
    pub(super) in_program: bool,
}
