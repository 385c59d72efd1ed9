//! One pass over a file: scopes are opened and closed as the syntax tree is walked, bindings get
//! the types the API tables say, and every resolved use of a known API becomes an [`Event`].

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use proc_macro2::Span;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{Expr, Item, Pat, Stmt, Token, Type, UseTree};

mod flow;

use super::scope::{Resolved, ScopeKind, Scopes, Var};
use super::{ApiUse, Event, FileContext, FileRole};
use crate::api::{Entry, Role};

/// The resolved events of one file, in source order.
pub fn walk<'a>(file: &syn::File, cx: &FileContext<'a>) -> Vec<Event<'a>> {
    let mut walker = Walker {
        cx,
        scopes: Scopes::new(cx),
        fields: HashMap::new(),
        structs: HashSet::new(),
        strings: HashMap::new(),
        events: Vec::new(),
        entry_region: cx.role == FileRole::EntryFile,
        in_entry: cx.role == FileRole::EntryFile,
        first_device_use: None,
        self_type: None,
        uses_burn: false,
        defining_default: false,
        arm_matches_default: false,
        loops: Vec::new(),
        binds_context: false,
        fallbacks: Vec::new(),
        bound_fallback: None,
    };
    walker
        .scopes
        .push(ScopeKind::Module, Some(cx.module.clone()));
    walker.collect_items(&file.items);
    for item in &file.items {
        walker.visit_item(item);
    }
    walker.events
}

struct Walker<'c, 'a> {
    cx: &'c FileContext<'a>,
    scopes: Scopes<'c, 'a>,
    /// Struct (full path) → field → type, for `self.ctx.bind_to_thread()`.
    fields: HashMap<String, HashMap<String, String>>,
    /// The names of this file's structs, whose types are worth resolving.
    structs: HashSet<String>,
    /// String constants of the file (`const VAR: &str = "CUDA_VISIBLE_DEVICES"`).
    strings: HashMap<String, String>,
    events: Vec<Event<'a>>,
    /// Inside `#[cfg(test)]` or a file that is all entry point.
    entry_region: bool,
    /// Inside an entry point now.
    in_entry: bool,
    /// The first device use of the current function, for `late_visible_devices`.
    first_device_use: Option<Range<usize>>,
    /// The full path of `Self` inside an impl.
    self_type: Option<String>,
    /// Whether the file imports burn, so that `B::Device::default()` means burn's.
    uses_burn: bool,
    /// Inside `impl Default for T { fn default() }`: where a default is defined, not chosen.
    defining_default: bool,
    /// Whether the innermost match arm matches a default (`DeviceKind::DefaultDevice =>`), so
    /// that a default built in its body translates the caller's choice instead of making one.
    arm_matches_default: bool,
    /// The loops around the current point of the current function, innermost last.
    loops: Vec<flow::Loop>,
    /// Whether the current function made a context current (`bind_to_thread`) so far.
    binds_context: bool,
    /// `cuda_if_available` results bound in the current function and not looked at yet:
    /// (variable, as written, span).
    fallbacks: Vec<(String, String, Range<usize>)>,
    /// The span of a fallback call that a `let` is binding, so it is tracked, not reported.
    bound_fallback: Option<Range<usize>>,
}

/// A variable of known type and unknown device.
fn of_type(ty: Option<String>) -> Var {
    Var {
        ty,
        ..Var::default()
    }
}

/// Methods that look at what a device chooser returned.
const FALLBACK_CHECKS: &[&str] = &[
    "is_cuda",
    "is_cpu",
    "is_gpu",
    "is_metal",
    "location",
    "same_device",
];

/// Names the walker must resolve even when no table entry ends with them.
const ALWAYS_RESOLVED: &[&str] = &["default", "parse"];

fn last_name(path: &syn::Path) -> String {
    path.segments
        .last()
        .map(|segment| segment.ident.to_string())
        .unwrap_or_default()
}

/// Macros whose bodies are expression lists, parsed as expressions so that what they contain
/// is linted like any other code. Other macros' bodies may be any syntax, and are not.
const EXPRESSION_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "dbg",
    "eprint",
    "eprintln",
    "format",
    "format_args",
    "matches",
    "panic",
    "print",
    "println",
    "todo",
    "unimplemented",
    "unreachable",
    "vec",
    "write",
    "writeln",
    "trace",
    "debug",
    "info",
    "warn",
    "error",
];

fn range(span: Span) -> Range<usize> {
    span.byte_range()
}

fn idents(path: &syn::Path) -> Vec<String> {
    path.segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect()
}

fn is_test_attr(attr: &syn::Attribute) -> bool {
    let path = attr.path();
    let last = path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default();
    matches!(
        last.as_str(),
        "test" | "bench" | "rstest" | "test_case" | "quickcheck"
    ) && !path.is_ident("cfg")
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Meta>()
                .is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

fn literal_usize(expr: &Expr) -> Option<(u128, Range<usize>)> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            ..
        }) => int
            .base10_parse::<u128>()
            .ok()
            .map(|value| (value, range(int.span()))),
        Expr::Paren(inner) => literal_usize(&inner.expr),
        Expr::Group(inner) => literal_usize(&inner.expr),
        Expr::Cast(cast) => literal_usize(&cast.expr),
        _ => None,
    }
}

/// `cuda:N` in a string literal.
fn device_string(expr: &Expr) -> Option<u128> {
    let Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(text),
        ..
    }) = expr
    else {
        return None;
    };
    match super::device_string::parse(&text.value())? {
        super::device_string::Named::Cuda(ordinal) => Some(ordinal.into()),
        super::device_string::Named::Cpu => None,
    }
}

/// Binds every identifier of a pattern; a plain `x` or `x: T` gets `ty`, the rest are unknown.
fn pattern_names(pat: &Pat, out: &mut Vec<String>) {
    match pat {
        Pat::Ident(ident) => {
            out.push(ident.ident.to_string());
            if let Some((_, sub)) = &ident.subpat {
                pattern_names(sub, out);
            }
        }
        Pat::Type(typed) => pattern_names(&typed.pat, out),
        Pat::Reference(reference) => pattern_names(&reference.pat, out),
        Pat::Paren(paren) => pattern_names(&paren.pat, out),
        Pat::Tuple(tuple) => tuple.elems.iter().for_each(|p| pattern_names(p, out)),
        Pat::TupleStruct(tuple) => tuple.elems.iter().for_each(|p| pattern_names(p, out)),
        Pat::Slice(slice) => slice.elems.iter().for_each(|p| pattern_names(p, out)),
        Pat::Or(or) => or.cases.iter().for_each(|p| pattern_names(p, out)),
        Pat::Struct(strukt) => strukt
            .fields
            .iter()
            .for_each(|f| pattern_names(&f.pat, out)),
        _ => {}
    }
}

/// Whether a pattern names a default variant (`DeviceKind::DefaultDevice`, `DeviceIndex::Default`).
fn matches_default(pat: &Pat) -> bool {
    let path = match pat {
        Pat::Path(path) => &path.path,
        Pat::TupleStruct(tuple) => &tuple.path,
        Pat::Struct(strukt) => &strukt.path,
        Pat::Or(or) => return or.cases.iter().any(matches_default),
        _ => return false,
    };
    path.segments
        .last()
        .is_some_and(|last| last.ident.to_string().to_lowercase().contains("default"))
}

impl<'a> Walker<'_, 'a> {
    // ---- scopes -------------------------------------------------------------------------

    /// Binds the items and imports of a module or block before anything in it is walked, as
    /// Rust does: order does not matter for items.
    fn collect_items<'i>(&mut self, items: impl IntoIterator<Item = &'i Item> + Clone) {
        for item in items.clone() {
            let name = match item {
                Item::Const(i) => Some(&i.ident),
                Item::Enum(i) => Some(&i.ident),
                Item::Fn(i) => Some(&i.sig.ident),
                Item::Mod(i) => Some(&i.ident),
                Item::Static(i) => Some(&i.ident),
                Item::Struct(i) => Some(&i.ident),
                Item::Trait(i) => Some(&i.ident),
                Item::Type(i) => Some(&i.ident),
                Item::Union(i) => Some(&i.ident),
                Item::Macro(i) => i.ident.as_ref(),
                _ => None,
            };
            if let Some(name) = name {
                let value = matches!(item, Item::Fn(_) | Item::Const(_) | Item::Static(_));
                self.scopes.add_item(&name.to_string(), value);
            }
            match item {
                Item::Use(item_use) => self.collect_use(&item_use.tree, Vec::new()),
                Item::ExternCrate(krate) => {
                    let target = vec![krate.ident.to_string()];
                    let alias = krate
                        .rename
                        .as_ref()
                        .map_or(&krate.ident, |(_, alias)| alias);
                    self.scopes.add_import(&alias.to_string(), target);
                }
                Item::ForeignMod(foreign) => {
                    for item in &foreign.items {
                        if let syn::ForeignItem::Fn(function) = item {
                            let name = function.sig.ident.to_string();
                            match self.cx.api.raw(&name) {
                                Some(path) => self.scopes.add_known(&name, path),
                                None => self.scopes.add_item(&name, true),
                            }
                        }
                    }
                }
                Item::Const(constant) => {
                    if let Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(text),
                        ..
                    }) = &*constant.expr
                    {
                        self.strings
                            .insert(constant.ident.to_string(), text.value());
                    }
                }
                _ => {}
            }
        }
        // Field types resolve with the module's imports in place.
        for item in items {
            if let Item::Struct(strukt) = item {
                self.structs.insert(strukt.ident.to_string());
                let key = self.scopes.local_path(&strukt.ident.to_string()).join("::");
                let fields: HashMap<String, String> = strukt
                    .fields
                    .iter()
                    .filter_map(|field| {
                        Some((
                            field.ident.as_ref()?.to_string(),
                            self.type_name(&field.ty)?,
                        ))
                    })
                    .collect();
                if !fields.is_empty() {
                    self.fields.insert(key, fields);
                }
            }
        }
    }

    fn collect_use(&mut self, tree: &UseTree, prefix: Vec<String>) {
        let with = |name: &syn::Ident| [prefix.clone(), vec![name.to_string()]].concat();
        match tree {
            UseTree::Path(path) => self.collect_use(&path.tree, with(&path.ident)),
            UseTree::Name(name) if name.ident == "self" => {
                if let Some(last) = prefix.last() {
                    self.scopes.add_import(&last.clone(), prefix.clone());
                }
            }
            UseTree::Name(name) => self
                .scopes
                .add_import(&name.ident.to_string(), with(&name.ident)),
            UseTree::Rename(rename) => {
                let target = if rename.ident == "self" {
                    prefix.clone()
                } else {
                    with(&rename.ident)
                };
                if rename.rename != "_" {
                    self.scopes.add_import(&rename.rename.to_string(), target);
                }
            }
            UseTree::Glob(_) => self.scopes.add_glob(prefix.clone()),
            UseTree::Group(group) => group
                .items
                .iter()
                .for_each(|tree| self.collect_use(tree, prefix.clone())),
        }
        if prefix
            .first()
            .is_some_and(|first| first.starts_with("burn"))
        {
            self.uses_burn = true;
        }
    }

    fn add_generics(&mut self, generics: &syn::Generics) {
        for param in generics.type_params() {
            self.scopes.add_generic(&param.ident.to_string());
        }
    }

    fn resolve(&self, path: &syn::Path) -> Resolved {
        self.scopes.resolve(&idents(path))
    }

    /// The entry a resolved path names. Built-in tables describe other crates: inside the
    /// crate that defines an API, its own uses of it are the implementation, not findings.
    fn lookup_path(&self, path: &syn::Path) -> Option<(String, &'a Entry)> {
        let Resolved::Path { path, local } = self.resolve(path) else {
            return None;
        };
        let path = path.join("::");
        let entry = self.cx.api.item(&path)?;
        (!local || !entry.builtin).then_some((path, entry))
    }

    // ---- types --------------------------------------------------------------------------

    /// The canonical name of a written type, through references and smart pointers.
    fn type_name(&self, ty: &Type) -> Option<String> {
        match ty {
            Type::Reference(reference) => self.type_name(&reference.elem),
            Type::Paren(paren) => self.type_name(&paren.elem),
            Type::Group(group) => self.type_name(&group.elem),
            Type::Path(path) if path.qself.is_none() => {
                let last = path.path.segments.last()?;
                if matches!(last.ident.to_string().as_str(), "Arc" | "Rc" | "Box")
                    && let syn::PathArguments::AngleBracketed(args) = &last.arguments
                    && let Some(syn::GenericArgument::Type(inner)) = args.args.first()
                {
                    return self.type_name(inner);
                }
                let name = last.ident.to_string();
                if !self.cx.api.mentions_type(&name) && !self.structs.contains(&name) {
                    return None;
                }
                match self.resolve(&path.path) {
                    Resolved::Path { path, .. } => Some(path.join("::")),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// What a receiver expression is known to be.
    fn infer(&self, expr: &Expr) -> Option<String> {
        self.infer_within(expr, flow::INFERENCE_DEPTH)
    }

    fn infer_within(&self, expr: &Expr, depth: usize) -> Option<String> {
        let depth = depth.checked_sub(1)?;
        match flow::peel(expr) {
            Expr::Path(path) if path.qself.is_none() => {
                if let Some(ident) = path.path.get_ident() {
                    let name = ident.to_string();
                    if name == "self" {
                        return self.scopes.var_type("self").map(str::to_owned);
                    }
                    if let Some(ty) = self.scopes.var_type(&name) {
                        return Some(ty.to_owned());
                    }
                }
                self.lookup_path(&path.path)?.1.returns.clone()
            }
            Expr::Call(call) => {
                let Expr::Path(func) = &*call.func else {
                    return None;
                };
                if last_name(&func.path) == "new" {
                    let Resolved::Path { path, .. } = self.resolve(&func.path) else {
                        return None;
                    };
                    let path = path.join("::");
                    let pointer = [
                        "std::sync::Arc::new",
                        "std::rc::Rc::new",
                        "std::boxed::Box::new",
                    ];
                    if pointer.contains(&path.as_str()) {
                        return self.infer_within(call.args.first()?, depth);
                    }
                }
                self.known_path(&func.path)?.1.returns.clone()
            }
            Expr::MethodCall(call) => {
                let receiver = self.infer_within(&call.receiver, depth)?;
                self.cx
                    .api
                    .method(&receiver, &call.method.to_string())?
                    .returns
                    .clone()
            }
            Expr::Field(field) => {
                let owner = self.infer_within(&field.base, depth)?;
                let syn::Member::Named(name) = &field.member else {
                    return None;
                };
                self.fields.get(&owner)?.get(&name.to_string()).cloned()
            }
            _ => None,
        }
    }

    // ---- events -------------------------------------------------------------------------

    fn emit_use(&mut self, use_: ApiUse<'a>) {
        let role = use_.entry.role;
        let translates_default = self.arm_matches_default
            && use_
                .shown
                .rsplit("::")
                .next()
                .is_some_and(|last| last.to_lowercase().contains("default"));
        if role == Role::ImplicitDevice && (self.defining_default || translates_default) {
            return;
        }
        if role != Role::SetEnvVar && role != Role::SpawnThread && role != Role::ThreadScope {
            self.first_device_use
                .get_or_insert_with(|| use_.span.clone());
        }
        let in_program = matches!(self.cx.role, FileRole::BinaryRoot | FileRole::BinaryModule);
        let use_ = ApiUse {
            after_bind: self.binds_context,
            ..use_
        };
        self.binds_context |= role == Role::SetCurrentDevice;
        self.events.push(Event::Api {
            use_,
            in_entry_point: self.in_entry,
            in_program,
        });
    }

    /// Handles a call of a known item or method; `args` are its arguments.
    fn on_call(
        &mut self,
        path: String,
        shown: String,
        span: Range<usize>,
        entry: &'a Entry,
        args: &Punctuated<Expr, Token![,]>,
    ) {
        let literal_ordinal = entry
            .ordinal
            .and_then(|index| args.iter().nth(index))
            .and_then(literal_usize);
        if entry.role == Role::SetEnvVar {
            let variable = args.first().and_then(|arg| self.string_value(arg));
            if let Some(variable) = variable {
                self.events.push(Event::SetEnvVar {
                    variable,
                    span: span.clone(),
                    in_entry_point: self.in_entry,
                    after_device_use: self.first_device_use.clone(),
                });
            }
        } else {
            if entry.role == Role::Concat
                && let Some(list) = args.first()
            {
                self.check_list(format!("`{shown}`"), span.clone(), list);
            }
            if entry.may_fall_back && self.bound_fallback.as_ref() != Some(&span) {
                self.note_fallback(None, shown.clone(), span.clone());
            }
            self.emit_use(ApiUse {
                entry,
                path,
                shown,
                span,
                as_value: false,
                literal_ordinal,
                after_bind: false,
            });
        }
        for (index, arg) in args.iter().enumerate() {
            match (entry.role, arg) {
                (Role::SpawnThread, Expr::Closure(closure)) if entry.closure == Some(index) => {
                    let outer = std::mem::replace(&mut self.in_entry, true);
                    self.visit_expr_closure(closure);
                    self.in_entry = outer;
                }
                (Role::ThreadScope, Expr::Closure(closure)) if entry.closure == Some(index) => {
                    self.scopes.push(ScopeKind::Block, None);
                    if let Some(first) = closure.inputs.first() {
                        let mut names = Vec::new();
                        pattern_names(first, &mut names);
                        for name in names {
                            self.scopes
                                .bind_var(&name, of_type(Some("std::thread::Scope".to_owned())));
                        }
                    }
                    self.visit_expr(&closure.body);
                    self.scopes.pop();
                }
                _ => self.visit_expr(arg),
            }
        }
    }

    fn string_value(&self, expr: &Expr) -> Option<String> {
        match expr {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => Some(text.value()),
            Expr::Path(path) => self
                .strings
                .get(&path.path.segments.last()?.ident.to_string())
                .cloned(),
            Expr::Reference(inner) => self.string_value(&inner.expr),
            _ => None,
        }
    }

    /// A call of a device chooser that may return the CPU: as written, and its span.
    fn fallback_call(&self, expr: &Expr) -> Option<(String, Range<usize>)> {
        let Expr::Call(call) = flow::peel(expr) else {
            return None;
        };
        let Expr::Path(func) = &*call.func else {
            return None;
        };
        let (_, entry) = self.known_path(&func.path)?;
        entry
            .may_fall_back
            .then(|| (Self::shown(&func.path), range(func.span())))
    }

    fn uses_burn(&self) -> bool {
        self.uses_burn
            || self
                .cx
                .krate
                .dependencies
                .as_ref()
                .is_some_and(|deps| deps.iter().any(|n| n.starts_with("burn")))
    }

    /// The entry for a generic burn backend's `B::Device::default()`.
    fn burn_default(&self) -> Option<(String, &'a Entry)> {
        let path = "burn::Backend::Device::default".to_owned();
        let entry = self.cx.api.item(&path)?;
        self.uses_burn().then_some((path, entry))
    }

    /// `B::Device::default()` or `<B as Backend>::Device::default()` on a generic backend.
    fn burn_generic_default(&self, path: &syn::ExprPath) -> Option<(String, &'a Entry)> {
        let generic_head = match &path.qself {
            Some(qself) => {
                matches!(&*qself.ty, Type::Path(p) if matches!(self.resolve(&p.path), Resolved::Generic { .. }))
            }
            None => matches!(self.resolve(&path.path), Resolved::Generic { .. }),
        };
        let names = idents(&path.path);
        let tail: Vec<&str> = names.iter().rev().take(2).map(String::as_str).collect();
        if generic_head && tail == ["default", "Device"] {
            self.burn_default()
        } else {
            None
        }
    }

    fn shown(path: &syn::Path) -> String {
        let names = idents(path).join("::");
        if path.leading_colon.is_some() {
            format!("::{names}")
        } else {
            names
        }
    }

    /// Walks a function body with its parameters bound and its entry-point status set.
    fn walk_fn(
        &mut self,
        attrs: &[syn::Attribute],
        sig: &syn::Signature,
        block: &syn::Block,
        owner: Option<&str>,
    ) {
        let configured = !self.cx.entry_points.is_empty() && {
            let name = sig.ident.to_string();
            let mut full = self.scopes.local_path(owner.unwrap_or(&name));
            if owner.is_some() {
                full.push(name);
            }
            let full = full.join("::");
            let crate_relative = full.replacen(self.cx.crate_name, "crate", 1);
            self.cx
                .entry_points
                .iter()
                .any(|entry| *entry == full || *entry == crate_relative)
        };
        // A binary's root file is its start-up code: `main` and the helpers it is split into
        // (often one per backend feature) choose devices for the program, not for a caller.
        let startup = self.cx.role == FileRole::BinaryRoot;
        let entry = self.entry_region
            || startup
            || configured
            || attrs.iter().any(is_test_attr)
            || is_cfg_test(attrs);

        let outer_entry = std::mem::replace(&mut self.in_entry, entry);
        let outer_first = self.first_device_use.take();
        let outer_loops = std::mem::take(&mut self.loops);
        let outer_binds = std::mem::replace(&mut self.binds_context, false);
        let outer_fallbacks = std::mem::take(&mut self.fallbacks);
        self.scopes.push(ScopeKind::Function, None);
        self.add_generics(&sig.generics);
        for input in &sig.inputs {
            match input {
                syn::FnArg::Receiver(_) => self
                    .scopes
                    .bind_var("self", of_type(self.self_type.clone())),
                syn::FnArg::Typed(typed) => {
                    let ty = self.type_name(&typed.ty);
                    let mut names = Vec::new();
                    pattern_names(&typed.pat, &mut names);
                    let single = names.len() == 1;
                    for name in names {
                        self.scopes
                            .bind_var(&name, of_type(if single { ty.clone() } else { None }));
                    }
                }
            }
        }
        self.visit_block(block);
        self.finish_fallbacks(outer_fallbacks);
        self.scopes.pop();
        self.loops = outer_loops;
        self.binds_context = outer_binds;
        self.first_device_use = outer_first;
        self.in_entry = outer_entry;
    }

    fn visit_in_region(&mut self, region: bool, f: impl FnOnce(&mut Self)) {
        let outer_region = self.entry_region;
        let outer_entry = self.in_entry;
        self.entry_region |= region;
        self.in_entry |= region;
        f(self);
        self.entry_region = outer_region;
        self.in_entry = outer_entry;
    }

    /// Visits the expressions of a macro call whose body is an expression list (`format!`,
    /// `vec![x; n]`, `assert!`): findings inside them are as real as outside.
    fn visit_macro_body(&mut self, mac: &syn::Macro, name: &str) {
        // `matches!(value, Pattern)`: only the value is an expression.
        if name == "matches" {
            if let Ok(value) = mac.parse_body_with(|input: syn::parse::ParseStream<'_>| {
                let value: Expr = input.parse()?;
                input.parse::<proc_macro2::TokenStream>()?;
                Ok(value)
            }) {
                self.visit_expr(&value);
            }
            return;
        }
        let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
        if let Ok(exprs) = mac.parse_body_with(parser) {
            exprs.iter().for_each(|expr| self.visit_expr(expr));
        } else if let Ok(repeat) = mac.parse_body::<syn::ExprRepeat>() {
            self.visit_expr_repeat(&repeat);
        } else if let Ok(array) = syn::parse2::<ExprRepeatBody>(mac.tokens.clone()) {
            self.visit_expr(&array.value);
            self.visit_expr(&array.len);
        }
    }
}

/// `x; n` as in `vec![x; n]`.
struct ExprRepeatBody {
    value: Expr,
    len: Expr,
}

impl syn::parse::Parse for ExprRepeatBody {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        let value = input.parse()?;
        input.parse::<Token![;]>()?;
        Ok(ExprRepeatBody {
            value,
            len: input.parse()?,
        })
    }
}

impl<'ast, 'a> Visit<'ast> for Walker<'_, 'a> {
    fn visit_item_mod(&mut self, module: &'ast syn::ItemMod) {
        let Some((_, items)) = &module.content else {
            return;
        };
        let path = [
            self.scopes.module().to_vec(),
            vec![module.ident.to_string()],
        ]
        .concat();
        self.visit_in_region(is_cfg_test(&module.attrs), |walker| {
            walker.scopes.push(ScopeKind::Module, Some(path));
            walker.collect_items(items);
            items.iter().for_each(|item| walker.visit_item(item));
            walker.scopes.pop();
        });
    }

    fn visit_item_fn(&mut self, function: &'ast syn::ItemFn) {
        let cfg_test = is_cfg_test(&function.attrs);
        self.visit_in_region(cfg_test, |walker| {
            walker.walk_fn(&function.attrs, &function.sig, &function.block, None)
        });
    }

    fn visit_item_impl(&mut self, imp: &'ast syn::ItemImpl) {
        let self_type = self.type_name(&imp.self_ty);
        let owner = match &*imp.self_ty {
            Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        self.visit_in_region(is_cfg_test(&imp.attrs), |walker| {
            walker.scopes.push(ScopeKind::Block, None);
            walker.add_generics(&imp.generics);
            let outer = std::mem::replace(&mut walker.self_type, self_type);
            let implements_default = imp.trait_.as_ref().is_some_and(|(_, path, _)| {
                path.segments.last().is_some_and(|s| s.ident == "Default")
            });
            for item in &imp.items {
                match item {
                    syn::ImplItem::Fn(method) => {
                        walker.defining_default =
                            implements_default && method.sig.ident == "default";
                        walker.walk_fn(
                            &method.attrs,
                            &method.sig,
                            &method.block,
                            owner.as_deref().or(Some("_")),
                        );
                        walker.defining_default = false;
                    }
                    syn::ImplItem::Const(constant) => walker.visit_expr(&constant.expr),
                    _ => {}
                }
            }
            walker.self_type = outer;
            walker.scopes.pop();
        });
    }

    fn visit_item_trait(&mut self, trait_: &'ast syn::ItemTrait) {
        self.scopes.push(ScopeKind::Block, None);
        self.add_generics(&trait_.generics);
        let owner = trait_.ident.to_string();
        for item in &trait_.items {
            if let syn::TraitItem::Fn(method) = item
                && let Some(block) = &method.default
            {
                self.walk_fn(&method.attrs, &method.sig, block, Some(&owner));
            }
        }
        self.scopes.pop();
    }

    fn visit_block(&mut self, block: &'ast syn::Block) {
        self.scopes.push(ScopeKind::Block, None);
        self.collect_items(block.stmts.iter().filter_map(|stmt| match stmt {
            Stmt::Item(item) => Some(item),
            _ => None,
        }));
        for stmt in &block.stmts {
            self.visit_stmt(stmt);
        }
        self.scopes.pop();
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        let mut declared = None;
        let (mut names_device, mut on_device) = (None, None);
        let mut names = Vec::new();
        pattern_names(&local.pat, &mut names);
        let single = names.len() == 1;
        if let Some(init) = &local.init {
            if let Some((shown, span)) = self.fallback_call(&init.expr) {
                let bound = single.then(|| names[0].clone());
                self.note_fallback(bound.clone(), shown, span.clone());
                if bound.is_some() {
                    self.bound_fallback = Some(span);
                }
            }
            self.visit_expr(&init.expr);
            self.bound_fallback = None;
            names_device = self.device_value(&init.expr);
            on_device = self.tensor_device(&init.expr);
            if let Some((_, diverge)) = &init.diverge {
                self.visit_expr(diverge);
            }
            if let Pat::Type(typed) = &local.pat {
                declared = self.type_name(&typed.ty);
                self.check_default_call(&typed.ty, &init.expr);
            }
            declared = declared.or_else(|| self.infer(&init.expr));
        } else if let Pat::Type(typed) = &local.pat {
            declared = self.type_name(&typed.ty);
        }
        for name in names {
            let var = match single {
                true => Var {
                    ty: declared.clone(),
                    names: names_device.clone(),
                    on: on_device.clone(),
                },
                false => Var::default(),
            };
            self.scopes.bind_var(&name, var);
        }
    }

    fn visit_expr_assign(&mut self, assign: &'ast syn::ExprAssign) {
        self.visit_expr(&assign.right);
        if let Expr::Path(path) = &*assign.left
            && let Some(ident) = path.path.get_ident()
        {
            let (names, on) = (
                self.device_value(&assign.right),
                self.tensor_device(&assign.right),
            );
            self.scopes.assign(&ident.to_string(), names, on);
        } else {
            self.visit_expr(&assign.left);
        }
    }

    fn visit_expr_binary(&mut self, binary: &'ast syn::ExprBinary) {
        self.visit_expr(&binary.left);
        self.visit_expr(&binary.right);
        if flow::is_arithmetic(&binary.op) {
            let op = || format!("`{}`", quote::ToTokens::to_token_stream(&binary.op));
            self.check_operands(op, range(binary.op.span()), &binary.left, &binary.right);
        }
        if matches!(binary.op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_)) {
            for side in [&binary.left, &binary.right] {
                if let Some(name) = flow::variable(side) {
                    self.checked(&name);
                }
            }
        }
    }

    fn visit_expr_while(&mut self, expr: &'ast syn::ExprWhile) {
        self.visit_expr(&expr.cond);
        self.enter_loop(range(expr.while_token.span), &expr.body);
        self.visit_block(&expr.body);
        self.exit_loop();
    }

    fn visit_expr_loop(&mut self, expr: &'ast syn::ExprLoop) {
        self.enter_loop(range(expr.loop_token.span), &expr.body);
        self.visit_block(&expr.body);
        self.exit_loop();
    }

    fn visit_expr_match(&mut self, expr: &'ast syn::ExprMatch) {
        if let Some(name) = flow::variable(&expr.expr) {
            self.checked(&name);
        }
        visit::visit_expr_match(self, expr);
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        self.scopes.push(ScopeKind::Block, None);
        let mut names = Vec::new();
        pattern_names(&arm.pat, &mut names);
        names.iter().for_each(|name| self.scopes.bind_unknown(name));
        if let Some((_, guard)) = &arm.guard {
            self.visit_expr(guard);
        }
        let outer = std::mem::replace(&mut self.arm_matches_default, matches_default(&arm.pat));
        self.visit_expr(&arm.body);
        self.arm_matches_default = outer;
        self.scopes.pop();
    }

    fn visit_expr_for_loop(&mut self, for_loop: &'ast syn::ExprForLoop) {
        self.visit_expr(&for_loop.expr);
        self.enter_loop(range(for_loop.for_token.span), &for_loop.body);
        self.scopes.push(ScopeKind::Block, None);
        let mut names = Vec::new();
        pattern_names(&for_loop.pat, &mut names);
        names.iter().for_each(|name| self.scopes.bind_unknown(name));
        self.visit_block(&for_loop.body);
        self.scopes.pop();
        self.exit_loop();
    }

    fn visit_expr_let(&mut self, binding: &'ast syn::ExprLet) {
        self.visit_expr(&binding.expr);
        if let Some(name) = flow::variable(&binding.expr) {
            self.checked(&name);
        }
        let mut names = Vec::new();
        pattern_names(&binding.pat, &mut names);
        names.iter().for_each(|name| self.scopes.bind_unknown(name));
    }

    fn visit_expr_closure(&mut self, closure: &'ast syn::ExprClosure) {
        self.scopes.push(ScopeKind::Block, None);
        for input in &closure.inputs {
            let (pat, ty) = match input {
                Pat::Type(typed) => (&*typed.pat, self.type_name(&typed.ty)),
                other => (other, None),
            };
            let mut names = Vec::new();
            pattern_names(pat, &mut names);
            let single = names.len() == 1;
            names.iter().for_each(|name| {
                self.scopes
                    .bind_var(name, of_type(if single { ty.clone() } else { None }))
            });
        }
        self.visit_expr(&closure.body);
        self.scopes.pop();
    }

    fn visit_pat(&mut self, _: &'ast Pat) {
        // Patterns compare against devices; they do not choose one.
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        let Expr::Path(func) = &*call.func else {
            return visit::visit_expr_call(self, call);
        };
        let last = func.path.segments.last().map(|segment| &segment.ident);
        let known = last.is_some_and(|ident| {
            self.cx.api.mentions_ident(ident) || ALWAYS_RESOLVED.iter().any(|name| ident == name)
        });
        if !known {
            return call.args.iter().for_each(|arg| self.visit_expr(arg));
        }
        let found = self
            .burn_generic_default(func)
            .or_else(|| self.lookup_path(&func.path));
        match found {
            Some((path, entry)) => {
                let shown = Self::shown(&func.path);
                self.on_call(path, shown, range(func.span()), entry, &call.args);
            }
            None => call.args.iter().for_each(|arg| self.visit_expr(arg)),
        }
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        if !self.fallbacks.is_empty()
            && FALLBACK_CHECKS.iter().any(|check| call.method == check)
            && let Some(name) = flow::variable(&call.receiver)
        {
            self.checked(&name);
        }
        if !self.cx.api.mentions_ident(&call.method) && call.method != "parse" {
            return visit::visit_expr_method_call(self, call);
        }
        let method = call.method.to_string();
        // A context bound by hand, whatever its receiver: the function chose its device.
        if method == "bind_to_thread" {
            self.binds_context = true;
        }
        if method == "parse"
            && let Some(ordinal) = device_string(&call.receiver)
        {
            self.events.push(Event::DeviceString {
                ordinal,
                span: range(call.receiver.span()),
                in_entry_point: self.in_entry,
            });
        }
        let receiver = self.infer(&call.receiver);
        self.visit_expr(&call.receiver);
        let own_type = |ty: &str| {
            ty.strip_prefix(self.cx.crate_name)
                .is_some_and(|rest| rest.starts_with("::"))
        };
        let entry = receiver.as_deref().and_then(|ty| {
            self.cx
                .api
                .method(ty, &method)
                .filter(|entry| !(entry.builtin && own_type(ty)))
        });
        match (receiver, entry) {
            (Some(ty), Some(entry)) => {
                let shown = format!(".{method}()");
                let path = format!("{ty}::{method}");
                self.on_call(
                    path,
                    shown.clone(),
                    range(call.method.span()),
                    entry,
                    &call.args,
                );
                if entry.role == Role::BinaryOp
                    && let Some(rhs) = call.args.first()
                {
                    self.check_operands(
                        || format!("`{shown}`"),
                        range(call.method.span()),
                        &call.receiver,
                        rhs,
                    );
                }
                if entry.role == Role::Transfer || entry.transfers {
                    self.check_loop_transfer(entry, call);
                }
            }
            _ => call.args.iter().for_each(|arg| self.visit_expr(arg)),
        }
    }

    fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
        let Some(last) = path.path.segments.last() else {
            return;
        };
        if !self.cx.api.mentions_ident(&last.ident) {
            return;
        }
        let Some((canonical, entry)) = self.lookup_path(&path.path) else {
            return;
        };
        if entry.may_fall_back {
            self.note_fallback(None, Self::shown(&path.path), range(path.span()));
        }
        if matches!(
            entry.role,
            Role::ImplicitDevice | Role::CurrentDeviceUser | Role::SetCurrentDevice
        ) {
            let use_ = ApiUse {
                entry,
                path: canonical,
                shown: Self::shown(&path.path),
                span: range(path.span()),
                as_value: true,
                literal_ordinal: None,
                after_bind: false,
            };
            self.emit_use(use_);
        }
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // A logged, asserted or matched device has been looked at.
        if !self.fallbacks.is_empty() {
            let mut names = Vec::new();
            flow::mentioned(&mac.tokens, &mut names);
            names.iter().for_each(|name| self.checked(name));
        }
        let name = last_name(&mac.path);
        if EXPRESSION_MACROS.contains(&name.as_str()) {
            self.visit_macro_body(mac, &name);
        }
    }

    fn visit_item_const(&mut self, constant: &'ast syn::ItemConst) {
        self.visit_in_region(false, |walker| walker.visit_expr(&constant.expr));
    }

    fn visit_item_static(&mut self, item: &'ast syn::ItemStatic) {
        self.visit_in_region(false, |walker| walker.visit_expr(&item.expr));
    }
}

impl<'a> Walker<'_, 'a> {
    /// `let d: B::Device = Default::default();` and `let d: Device = Default::default();`.
    fn check_default_call(&mut self, ty: &Type, init: &Expr) {
        let Expr::Call(call) = init else { return };
        let Expr::Path(func) = &*call.func else {
            return;
        };
        let is_default = matches!(
            self.resolve(&func.path),
            Resolved::Path { path, .. } if path.join("::") == "std::default::Default::default"
        );
        let Type::Path(declared) = ty else { return };
        if !is_default || declared.qself.is_some() {
            return;
        }
        let found = match self.resolve(&declared.path) {
            Resolved::Generic { rest } if rest.last().is_some_and(|last| last == "Device") => {
                self.burn_default()
            }
            Resolved::Path { path, local: false } => {
                let path = format!("{}::default", path.join("::"));
                self.cx.api.item(&path).map(|entry| (path, entry))
            }
            _ => None,
        };
        if let Some((path, entry)) = found {
            let shown = Self::shown(&func.path);
            self.emit_use(ApiUse {
                entry,
                path,
                shown,
                span: range(func.span()),
                as_value: false,
                literal_ordinal: None,
                after_bind: false,
            });
        }
    }
}
