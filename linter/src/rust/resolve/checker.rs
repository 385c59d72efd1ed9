//! The traversal: one walk over a file's syntax tree that keeps the semantic model up to date
//! (scopes opened and closed, bindings typed, device facts recorded), resolves every use of a
//! known API, and calls the analyses' hooks, which report [`Event`]s. What each analysis does
//! is in its own module; nothing here knows a rule.

use std::ops::Range;

use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{Expr, Item, Pat, Stmt, Token, Type};

mod default_devices;

use super::FileContext;
use super::analysis::entry::is_cfg_test;
use super::analysis::macros::{self, Body};
use super::analysis::{Analyses, FnInfo};
use super::analysis::{best_available, defaults};
use super::semantic::Semantic;
use super::semantic::infer::{TAKES_ELEMENT, Ty};
use super::semantic::scope::{Resolution, ScopeKind, Var};
use super::semantic::syntax::{
    device_variant, idents, impl_owner, last_name, literal_usize, parsed_device_string,
    pattern_names, peel, shown, variable,
};
use crate::analysis::{ApiUse, Event};
use crate::api::{Entry, Role};
use crate::rust::skeleton::Bodies;

/// Whether a pattern only asks which kind of device a value is (`Device::Cuda(_)`,
/// `Device::Cpu`), binding nothing that could be placed with.
fn asks_kind(pat: &Pat) -> bool {
    let path = match pat {
        Pat::TupleStruct(tuple)
            if tuple
                .elems
                .iter()
                .all(|elem| matches!(elem, Pat::Wild(_) | Pat::Rest(_))) =>
        {
            &tuple.path
        }
        Pat::Path(path) => &path.path,
        _ => return false,
    };
    !path
        .segments
        .last()
        .is_some_and(|last| last.ident == "Ok" || last.ident == "Some")
}

/// Whether an argument is `None`.
fn is_none(arg: &Expr) -> bool {
    matches!(arg, Expr::Path(path) if path.path.is_ident("None"))
}

/// The resolved events of one file (whose text is `text`), in source order.
pub fn walk<'a>(file: &syn::File, text: &str, cx: &FileContext<'a>) -> Vec<Event<'a>> {
    walk_with(file, None, text, cx).0
}

/// [`walk`] for a skeleton ([`crate::rust::skeleton`]): each function's body parsed from
/// `bodies` as the walk comes to it. `None` when a body does not parse: the file is then to be
/// parsed whole, where the error is reported.
pub fn walk_skeleton<'a>(
    file: &syn::File,
    bodies: Bodies,
    text: &str,
    cx: &FileContext<'a>,
) -> Option<Vec<Event<'a>>> {
    let (events, bodies) = walk_with(file, Some(bodies), text, cx);
    bodies.is_none_or(Bodies::all_parse).then_some(events)
}

/// The walk of [`walk`] and [`walk_skeleton`]: the events, and the bodies not asked for.
fn walk_with<'a>(
    file: &syn::File,
    bodies: Option<Bodies>,
    text: &str,
    cx: &FileContext<'a>,
) -> (Vec<Event<'a>>, Option<Bodies>) {
    let sem = Semantic::new(cx, text);
    let analyses = Analyses::new(&sem);
    let mut checker = Checker {
        sem,
        analyses,
        events: Vec::new(),
        bodies,
        closure_params: None,
        body: None,
        kind_asked: false,
        reporting: false,
        untyped_defaults: Vec::new(),
    };
    checker
        .sem
        .scopes
        .push(ScopeKind::Module, Some(cx.module.clone()));
    checker.sem.collect_items(&file.items, true);
    checker.note_models(&file.items);
    for item in &file.items {
        checker.visit_item(item);
    }
    checker.walk_fed_functions(&file.items);
    (checker.events, checker.bodies)
}

struct Checker<'c, 'a> {
    sem: Semantic<'c, 'a>,
    analyses: Analyses,
    events: Vec<Event<'a>>,
    /// The bodies of a skeleton's functions, parsed as the walk comes to them.
    bodies: Option<Bodies>,
    /// The types of the parameters of the closure about to be visited, when a method call
    /// knows them (`contexts.iter().for_each(|c| ..)`).
    closure_params: Option<Vec<Option<Ty>>>,
    /// The function being walked: where its body ends in the text, and whether it ends in an
    /// error ([`best_available::After`]).
    body: Option<(usize, bool)>,
    /// Inside the value of an `if let` that only asks which kind of device it is.
    kind_asked: bool,
    /// Inside a macro that tells a person something (`println!`, `log::info!`): a device read
    /// there is reported, not used.
    reporting: bool,
    /// Names bound to `Default::default()` of no written type (`let device =
    /// Default::default();`), whose type is what they are handed to.
    untyped_defaults: Vec<(String, syn::ExprPath)>,
}

impl<'a> Checker<'_, 'a> {
    /// Notes the model types of a module's items, where model code is looked at.
    fn note_models(&mut self, items: &[Item]) {
        if self.sem.cx.model_code {
            self.analyses.models.note_items(&self.sem, items);
        }
    }

    /// Walks again, as model code, the file's functions that model code hands its tensors
    /// (`apply_rotary(&q, offset)` in a `forward`), keeping only what model code finds in them;
    /// through such functions in turn, a few rounds at most.
    fn walk_fed_functions(&mut self, items: &[Item]) {
        for _ in 0..4 {
            let fed = self.analyses.models.take_fed();
            if fed.is_empty() {
                return;
            }
            for item in items {
                let Item::Fn(function) = item else { continue };
                let Some(places) = fed.get(&function.sig.ident.to_string()) else {
                    continue;
                };
                let before = self.events.len();
                self.analyses.models.fed_places = Some(places.clone());
                self.visit_item_fn(function);
                self.analyses.models.fed_places = None;
                let found = self.events.split_off(before);
                for event in found {
                    let Event::UnplacedTensor { span, .. } = &event else {
                        continue;
                    };
                    let known = self.events.iter().any(|known| {
                        matches!(known, Event::UnplacedTensor { span: at, .. } if at == span)
                    });
                    if !known {
                        self.events.push(event);
                    }
                }
            }
        }
    }

    /// Walks a function body with its parameters bound and its analyses' state fresh. A body
    /// whose text names nothing a table knows (most bodies of most crates) can make no event,
    /// and is not walked, but model code where it is looked at.
    fn walk_fn(&mut self, sig: &syn::Signature, block: &syn::Block, info: FnInfo<'_>) {
        let parsed = self.body(block);
        let block = parsed.as_ref().unwrap_or(block);
        // The braces' span, not `block.span()`, which would print the block to join its tokens.
        if !self.sem.may_mention_at(block.brace_token.span.join())
            && !self.analyses.models.is_model_code(&self.sem, &info)
        {
            return;
        }
        let outer = self.analyses.on_fn_enter(&self.sem, &info);
        let braces = self.sem.byte_range(block.brace_token.span.join());
        let body = self.sem.text.get(braces.clone()).unwrap_or("");
        self.analyses.function.context.set_restores(block, body);
        self.analyses
            .function
            .choosers
            .set_returned(&self.sem, block);
        self.sem.scopes.push(ScopeKind::Function, None);
        self.sem.add_generics(&sig.generics);
        for input in &sig.inputs {
            match input {
                syn::FnArg::Receiver(_) => self
                    .sem
                    .scopes
                    .bind_var("self", Var::of_type(self.sem.self_type.clone())),
                syn::FnArg::Typed(typed) => {
                    let ty = self.sem.type_of(&typed.ty);
                    self.sem.bind_pattern(&typed.pat, ty);
                }
            }
        }
        let end = braces.end;
        let outer_body = self
            .body
            .replace((end, best_available::ends_in_error(block)));
        let outer_defaults = std::mem::take(&mut self.untyped_defaults);
        self.visit_block(block);
        self.untyped_defaults = outer_defaults;
        self.body = outer_body;
        self.sem.scopes.pop();
        self.analyses.on_fn_exit(&mut self.events, outer);
    }

    /// The body a skeleton's function `block` stands for, parsed; `None` where the walk has the
    /// whole tree (or has taken the body already).
    fn body(&mut self, block: &syn::Block) -> Option<syn::Block> {
        (self.bodies.as_mut()).and_then(|bodies| bodies.take(block.brace_token.span.join()))
    }

    /// Walks statements that are code but no function's body (a `macro_rules!` transcriber,
    /// an item-level macro call) as if they were one.
    fn walk_detached(&mut self, stmts: &[Stmt]) {
        let info = FnInfo {
            attrs: &[],
            sig: None,
            name: String::new(),
            owner: None,
            in_impl: false,
            defines_default: false,
            public: true,
            static_type: None,
        };
        let outer = self.analyses.on_fn_enter(&self.sem, &info);
        self.sem.scopes.push(ScopeKind::Function, None);
        self.walk_stmts(stmts);
        self.sem.scopes.pop();
        self.analyses.on_fn_exit(&mut self.events, outer);
    }

    /// Walks a static's initializer as a function that returns the static's value: a device it
    /// chooses is chosen for every reader of the static (`static DEVICE: Lazy<Device>`).
    fn walk_static(
        &mut self,
        attrs: &[syn::Attribute],
        ident: &syn::Ident,
        ty: &syn::Type,
        expr: &syn::Expr,
    ) {
        let info = FnInfo {
            attrs,
            sig: None,
            name: ident.to_string(),
            owner: None,
            in_impl: false,
            defines_default: false,
            public: true,
            static_type: Some(ty),
        };
        self.in_region(false, |checker| {
            let outer = checker.analyses.on_fn_enter(&checker.sem, &info);
            checker.visit_expr(expr);
            checker.analyses.on_fn_exit(&mut checker.events, outer);
        });
    }

    fn walk_stmts(&mut self, stmts: &[Stmt]) {
        self.sem.scopes.push(ScopeKind::Block, None);
        self.sem.collect_items(
            stmts.iter().filter_map(|stmt| match stmt {
                Stmt::Item(item) => Some(item),
                _ => None,
            }),
            false,
        );
        for stmt in stmts {
            self.visit_stmt(stmt);
        }
        self.sem.scopes.pop();
    }

    fn in_region(&mut self, region: bool, f: impl FnOnce(&mut Self)) {
        let outer = self.analyses.enter_entry_region(region);
        f(self);
        self.analyses.leave_entry_region(outer);
    }

    /// A use of a known API, through the analyses.
    fn use_api(&mut self, use_: ApiUse<'a>) {
        self.analyses.on_api_use(&mut self.events, use_);
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
        let (literal_ordinal, ordinal_from) = match &entry.role {
            Role::ExplicitDevice { ordinal, gpu } => {
                let arg = args.iter().nth(*ordinal);
                // A project's function that opens the GPU a variant of its parameter names
                // (`DeviceConfig::new(Device::Cuda(0))`): the field of a variant named for
                // the kind of GPU it opens (not `Device::Metal(0)` of one that opens CUDA's).
                let field = |arg: &Expr| {
                    device_variant(arg, gpu)
                        .filter(|(kind, _)| *kind && !entry.builtin)
                        .and_then(|(_, field)| literal_usize(field))
                };
                (
                    arg.and_then(|arg| literal_usize(arg).or_else(|| field(arg))),
                    arg.and_then(variable).filter(|name| name != "self"),
                )
            }
            _ => (None, None),
        };
        let literal_ordinal =
            literal_ordinal.map(|(ordinal, span)| (ordinal, self.sem.byte_range(span)));
        // A chooser that takes the caller's device as an `Option` chooses when given `None`; one
        // whose device is only asked which kind it is (`if let Device::Cuda(_) = pick()`)
        // places nothing.
        let passes_device = !entry.unless_given.is_empty()
            && !entry
                .unless_given
                .iter()
                .all(|at| args.iter().nth(*at).is_some_and(is_none));
        if passes_device || (entry.chooser && self.kind_asked) {
        } else if entry.role == Role::SetEnvVar {
            if let Some(variable) = args.first().and_then(|arg| self.sem.string_value(arg)) {
                self.analyses.on_set_env(&mut self.events, variable, span);
            }
        } else {
            self.analyses.on_item_call(
                &self.sem,
                &mut self.events,
                entry,
                &shown,
                span.clone(),
                args,
            );
            self.use_api(ApiUse {
                entry,
                path,
                shown,
                span,
                as_value: false,
                literal_ordinal,
                ordinal_from,
                after_bind: false,
                helper: None,
                chooser: None,
            });
        }
        for (index, arg) in args.iter().enumerate() {
            match (&entry.role, arg) {
                (Role::SpawnThread { closure }, Expr::Closure(body)) if *closure == index => {
                    let outer = self.analyses.enter_thread();
                    self.visit_expr_closure(body);
                    self.analyses.leave_thread(outer);
                }
                (Role::ThreadScope { closure }, Expr::Closure(body)) if *closure == index => {
                    let scope = Some(Ty::Named("std::thread::Scope".to_owned()));
                    self.closure_params = Some(vec![scope]);
                    self.visit_expr_closure(body);
                }
                (Role::TensorConstructor { device }, _)
                    if *device == index && self.default_device_argument(arg) => {}
                (Role::Variant { payload }, _) if self.default_payload(payload, &[arg]) => {}
                _ => self.visit_expr(arg),
            }
        }
    }

    /// What follows the braces at `span` (a `match`'s, an `if`'s first block: only an `if`
    /// without `else` asks) until the end of the function being walked.
    fn after(&self, span: proc_macro2::Span) -> Option<best_available::After<'_>> {
        let (end, ends_in_error) = self.body?;
        let text = self.sem.text.get(self.sem.byte_range(span).end..end)?;
        Some(best_available::After {
            text,
            ends_in_error,
        })
    }

    /// A device picked by hand the way `cuda_if_available` picks it, after its parts were walked
    /// (their own findings, such as a literal ordinal, come first).
    fn written(&mut self, written: Option<best_available::Written>) {
        if let Some(written) = written {
            self.analyses
                .on_written(&self.sem, &mut self.events, written);
        }
    }

    /// A `match`: its scrutinee, then each arm in the scope of what its pattern binds.
    fn match_expr(&mut self, expr: &syn::ExprMatch) {
        self.analyses.on_match(&self.sem, expr);
        self.analyses.on_scrutinee(&expr.expr);
        self.visit_expr(&expr.expr);
        let scrutinee = self.sem.infer(&expr.expr);
        let dispatched = self.analyses.enter_match(&expr.expr);
        for arm in &expr.arms {
            self.sem.scopes.push(ScopeKind::Block, None);
            self.sem.bind_pattern(&arm.pat, scrutinee.clone());
            if let Some((_, guard)) = &arm.guard {
                self.visit_expr(guard);
            }
            let outer = self.analyses.on_arm(&expr.expr, arm);
            self.visit_expr(&arm.body);
            self.analyses.after_arm(outer);
            self.sem.scopes.pop();
        }
        self.analyses.leave_match(dispatched);
    }

    /// A method call: a known method's use, or the analyses' look at any other.
    fn method_call(&mut self, call: &syn::ExprMethodCall) {
        self.analyses.on_method_enter(&self.sem, call);
        let mentioned = self.sem.cx.api.mentions_method(&call.method);
        if !mentioned && call.method != "parse" {
            self.analyses
                .on_plain_call(&self.sem, &mut self.events, &call.method);
            // An iterator adaptor's closure gets the element type (`.for_each(|c| ..)`).
            let adaptor = TAKES_ELEMENT.iter().any(|name| call.method == name);
            let element = adaptor
                .then(|| self.sem.infer(&call.receiver)?.element())
                .flatten();
            self.visit_expr(&call.receiver);
            for arg in &call.args {
                if element.is_some() && matches!(arg, Expr::Closure(_)) {
                    self.closure_params = Some(vec![element.clone()]);
                }
                self.visit_expr(arg);
            }
            self.analyses
                .on_method_call(&self.sem, &mut self.events, call, None);
            return;
        }
        if call.method == "parse"
            && let Some((ordinal, written)) = parsed_device_string(&call.receiver)
        {
            self.analyses.on_device_string(
                &mut self.events,
                ordinal,
                self.sem.byte_range(written.span()),
            );
        }
        let receiver = self.sem.infer(&call.receiver);
        self.visit_expr(&call.receiver);
        let method = call.method.to_string();
        let found = receiver.as_ref().and_then(Ty::named).and_then(|ty| {
            let entry = self.sem.method(ty, &method)?;
            Some((ty.to_owned(), entry))
        });
        match found {
            Some((ty, entry)) => {
                let shown = format!(".{method}()");
                let path = format!("{ty}::{method}");
                self.on_call(
                    path,
                    shown,
                    self.sem.byte_range(call.method.span()),
                    entry,
                    &call.args,
                );
                self.analyses
                    .on_method_call(&self.sem, &mut self.events, call, Some(entry));
            }
            None => {
                call.args.iter().for_each(|arg| self.visit_expr(arg));
                self.analyses
                    .on_method_call(&self.sem, &mut self.events, call, None);
            }
        }
    }

    /// The code in a macro call's body, walked where it is code.
    fn visit_macro_body(&mut self, mac: &syn::Macro) {
        match macros::body(&self.sem, mac) {
            Body::Exprs(exprs) => {
                // `matches!(value, Pattern)` compares its value.
                if last_name(&mac.path) == "matches" {
                    exprs
                        .iter()
                        .for_each(|expr| self.analyses.on_compared(&self.sem, expr));
                }
                exprs.iter().for_each(|expr| self.visit_expr(expr));
            }
            Body::Stmts(stmts) => self.walk_stmts(&stmts),
            Body::None => {}
        }
    }
}

impl<'ast, 'a> Visit<'ast> for Checker<'_, 'a> {
    fn visit_item_mod(&mut self, module: &'ast syn::ItemMod) {
        let Some((_, items)) = &module.content else {
            return;
        };
        let path = [
            self.sem.scopes.module().to_vec(),
            vec![module.ident.to_string()],
        ]
        .concat();
        self.in_region(is_cfg_test(&module.attrs), |checker| {
            checker.sem.scopes.push(ScopeKind::Module, Some(path));
            checker.sem.collect_items(items, true);
            checker.note_models(items);
            items.iter().for_each(|item| checker.visit_item(item));
            checker.sem.scopes.pop();
        });
    }

    fn visit_item_fn(&mut self, function: &'ast syn::ItemFn) {
        self.in_region(is_cfg_test(&function.attrs), |checker| {
            let info = FnInfo {
                attrs: &function.attrs,
                sig: Some(&function.sig),
                name: function.sig.ident.to_string(),
                owner: None,
                in_impl: false,
                defines_default: false,
                public: matches!(function.vis, syn::Visibility::Public(_)),
                static_type: None,
            };
            checker.walk_fn(&function.sig, &function.block, info);
        });
    }

    fn visit_item_impl(&mut self, imp: &'ast syn::ItemImpl) {
        let self_type = self.sem.type_of(&imp.self_ty);
        let owner = impl_owner(imp);
        let implements_default = imp
            .trait_
            .as_ref()
            .is_some_and(|(_, path, _)| path.segments.last().is_some_and(|s| s.ident == "Default"));
        self.in_region(is_cfg_test(&imp.attrs), |checker| {
            checker.sem.scopes.push(ScopeKind::Block, None);
            checker.sem.add_generics(&imp.generics);
            let outer = std::mem::replace(&mut checker.sem.self_type, self_type);
            let self_path = match &*imp.self_ty {
                Type::Path(path) if path.qself.is_none() => Some(idents(&path.path)),
                _ => None,
            };
            let outer_path = std::mem::replace(&mut checker.sem.self_path, self_path);
            for item in &imp.items {
                match item {
                    syn::ImplItem::Fn(method) => {
                        let parsed = checker.body(&method.block);
                        let block = parsed.as_ref().unwrap_or(&method.block);
                        let info = FnInfo {
                            attrs: &method.attrs,
                            sig: Some(&method.sig),
                            name: method.sig.ident.to_string(),
                            owner: Some(owner.as_deref().unwrap_or("_")),
                            in_impl: true,
                            defines_default: implements_default
                                && method.sig.ident == "default"
                                && !defaults::builds_fields(block),
                            // A trait's methods are called wherever the trait is.
                            public: imp.trait_.is_some()
                                || matches!(method.vis, syn::Visibility::Public(_)),
                            static_type: None,
                        };
                        checker.walk_fn(&method.sig, block, info);
                    }
                    syn::ImplItem::Const(constant) => checker.visit_expr(&constant.expr),
                    syn::ImplItem::Macro(mac) => checker.visit_macro(&mac.mac),
                    _ => {}
                }
            }
            checker.sem.self_type = outer;
            checker.sem.self_path = outer_path;
            checker.sem.scopes.pop();
        });
    }

    fn visit_item_trait(&mut self, trait_: &'ast syn::ItemTrait) {
        self.sem.scopes.push(ScopeKind::Block, None);
        self.sem.add_generics(&trait_.generics);
        let owner = trait_.ident.to_string();
        for item in &trait_.items {
            if let syn::TraitItem::Fn(method) = item
                && let Some(block) = &method.default
            {
                let info = FnInfo {
                    attrs: &method.attrs,
                    sig: Some(&method.sig),
                    name: method.sig.ident.to_string(),
                    owner: Some(&owner),
                    in_impl: false,
                    defines_default: false,
                    public: true,
                    static_type: None,
                };
                self.walk_fn(&method.sig, block, info);
            }
        }
        self.sem.scopes.pop();
    }

    fn visit_item_macro(&mut self, item: &'ast syn::ItemMacro) {
        if item.mac.path.is_ident("macro_rules") {
            // A macro's code runs where it is expanded: its transcribers are library code here.
            for stmts in macros::transcribers(&self.sem, &item.mac) {
                self.walk_detached(&stmts);
            }
            return;
        }
        self.analyses.on_macro(&item.mac);
        // `lazy_static! { static ref DEVICE: Device = ...; }`, `thread_local!`: statics.
        if let Some(statics) = macros::statics(&self.sem, &item.mac) {
            for declared in &statics {
                self.walk_static(
                    &declared.attrs,
                    &declared.ident,
                    &declared.ty,
                    &declared.expr,
                );
            }
            return;
        }
        if let Body::Stmts(stmts) = macros::body(&self.sem, &item.mac) {
            self.walk_detached(&stmts);
        }
    }

    fn visit_item_const(&mut self, constant: &'ast syn::ItemConst) {
        self.in_region(false, |checker| checker.visit_expr(&constant.expr));
    }

    fn visit_item_static(&mut self, item: &'ast syn::ItemStatic) {
        self.walk_static(&item.attrs, &item.ident, &item.ty, &item.expr);
    }

    fn visit_block(&mut self, block: &'ast syn::Block) {
        self.walk_stmts(&block.stmts);
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        let mut names = Vec::new();
        pattern_names(&local.pat, &mut names);
        let simple = match &local.pat {
            Pat::Ident(ident) if ident.subpat.is_none() => Some(ident.ident.to_string()),
            Pat::Type(typed) => match &*typed.pat {
                Pat::Ident(ident) if ident.subpat.is_none() => Some(ident.ident.to_string()),
                _ => None,
            },
            _ => None,
        };
        let declared = match &local.pat {
            Pat::Type(typed) => self.sem.type_of(&typed.ty),
            _ => None,
        };
        let Some(init) = &local.init else {
            self.sem.bind_pattern(&local.pat, declared);
            return;
        };
        self.analyses.on_let(&self.sem, &names, &init.expr);
        self.visit_expr(&init.expr);
        self.note_untyped_default(&local.pat, &init.expr);
        if let Some((_, diverge)) = &init.diverge {
            self.visit_expr(diverge);
        }
        if let Pat::Type(typed) = &local.pat {
            self.check_default_call(&typed.ty, &init.expr);
        }
        let ty = declared.or_else(|| self.sem.infer(&init.expr));
        match simple {
            Some(name) => {
                let var = Var {
                    ty,
                    names: self.sem.device_value(&init.expr),
                    on: self.sem.tensor_device(&init.expr),
                };
                self.sem.scopes.bind_var(&name, var);
            }
            None => self.sem.bind_pattern(&local.pat, ty),
        }
    }

    fn visit_expr_assign(&mut self, assign: &'ast syn::ExprAssign) {
        self.visit_expr(&assign.right);
        if let Expr::Path(path) = &*assign.left
            && let Some(ident) = path.path.get_ident()
        {
            let (names, on) = (
                self.sem.device_value(&assign.right),
                self.sem.tensor_device(&assign.right),
            );
            self.sem.scopes.assign(&ident.to_string(), names, on);
        } else {
            self.visit_expr(&assign.left);
        }
    }

    fn visit_expr_binary(&mut self, binary: &'ast syn::ExprBinary) {
        if matches!(binary.op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_)) {
            self.analyses.on_compared(&self.sem, &binary.left);
            self.analyses.on_compared(&self.sem, &binary.right);
        }
        self.visit_expr(&binary.left);
        self.visit_expr(&binary.right);
        self.analyses.on_binary(&self.sem, &mut self.events, binary);
    }

    fn visit_expr_while(&mut self, expr: &'ast syn::ExprWhile) {
        self.visit_expr(&expr.cond);
        let at = self.sem.byte_range(expr.while_token.span);
        self.analyses.on_loop_enter(&mut self.sem, at, &expr.body);
        self.visit_block(&expr.body);
        self.analyses.on_loop_exit();
    }

    fn visit_expr_loop(&mut self, expr: &'ast syn::ExprLoop) {
        let at = self.sem.byte_range(expr.loop_token.span);
        self.analyses.on_loop_enter(&mut self.sem, at, &expr.body);
        self.visit_block(&expr.body);
        self.analyses.on_loop_exit();
    }

    fn visit_expr_for_loop(&mut self, for_loop: &'ast syn::ExprForLoop) {
        self.visit_expr(&for_loop.expr);
        let element = self.sem.infer(&for_loop.expr).and_then(|ty| ty.element());
        let at = self.sem.byte_range(for_loop.for_token.span);
        self.analyses
            .on_loop_enter(&mut self.sem, at, &for_loop.body);
        self.sem.scopes.push(ScopeKind::Block, None);
        self.sem.bind_pattern(&for_loop.pat, element);
        self.visit_block(&for_loop.body);
        self.sem.scopes.pop();
        self.analyses.on_loop_exit();
    }

    fn visit_expr_match(&mut self, expr: &'ast syn::ExprMatch) {
        let written =
            best_available::in_match(&self.sem, expr, self.after(expr.brace_token.span.join()));
        self.match_expr(expr);
        self.written(written);
    }

    fn visit_expr_if(&mut self, branch: &'ast syn::ExprIf) {
        let written = best_available::in_if(
            &self.sem,
            branch,
            self.after(branch.then_branch.brace_token.span.join()),
        );
        visit::visit_expr_if(self, branch);
        self.written(written);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let written = best_available::in_method_call(&self.sem, call);
        self.method_call(call);
        self.written(written);
    }

    fn visit_expr_let(&mut self, binding: &'ast syn::ExprLet) {
        self.analyses.on_let_expr(&self.sem, binding);
        let asks = matches!(peel(&binding.expr), Expr::Call(_)) && asks_kind(&binding.pat);
        let outer = std::mem::replace(&mut self.kind_asked, asks);
        self.visit_expr(&binding.expr);
        self.kind_asked = outer;
        self.analyses.on_scrutinee(&binding.expr);
        let ty = self.sem.infer(&binding.expr);
        self.sem.bind_pattern(&binding.pat, ty);
    }

    fn visit_expr_closure(&mut self, closure: &'ast syn::ExprClosure) {
        let known = self.closure_params.take().unwrap_or_default();
        self.sem.scopes.push(ScopeKind::Block, None);
        for (index, input) in closure.inputs.iter().enumerate() {
            let ty = known.get(index).cloned().flatten();
            self.sem.bind_pattern(input, ty);
        }
        self.visit_expr(&closure.body);
        self.sem.scopes.pop();
    }

    fn visit_pat(&mut self, _: &'ast Pat) {
        // Patterns compare against devices; they do not choose one.
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        let Expr::Path(func) = &*call.func else {
            return visit::visit_expr_call(self, call);
        };
        let Some(last) = func.path.segments.last() else {
            return;
        };
        let found = if self.sem.resolves_call(&func.path) {
            self.sem
                .burn_generic_default(func)
                .or_else(|| self.sem.lookup_path(&func.path))
        } else {
            None
        };
        match found {
            Some((path, entry)) => {
                self.on_call(
                    path,
                    shown(&func.path),
                    self.sem.byte_range(func.span()),
                    entry,
                    &call.args,
                );
            }
            None => {
                self.analyses
                    .on_plain_call(&self.sem, &mut self.events, &last.ident);
                self.analyses
                    .on_call_arguments(&self.sem, &last.ident, &call.args);
                call.args.iter().for_each(|arg| self.visit_expr(arg));
                if self.sem.cx.model.takes_device.contains_ident(&last.ident)
                    && let Resolution::Path { path, .. } = self.sem.resolve(&func.path)
                {
                    let args: Vec<&Expr> = call.args.iter().collect();
                    self.defaults_handed(&func.path, &path.join("::"), &args);
                }
            }
        }
    }

    fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
        let Some((canonical, entry)) = self.sem.known_path(&path.path) else {
            return;
        };
        // A local variable shadows the item of its name (`let device = ...` in `fn device`);
        // asked only of the rare path that names a known item.
        if let Some(name) = path.path.get_ident()
            && self.sem.scopes.var(&name.to_string()).is_some()
        {
            return;
        }
        // A device the project chose, read to be shown (`println!("on {:?}", *DEVICE)`).
        if entry.chooser && self.reporting {
            return;
        }
        let chooses = matches!(
            entry.role,
            Role::ImplicitDevice { .. } | Role::CurrentDeviceUser | Role::SetCurrentDevice
        );
        if chooses || entry.may_fall_back {
            let (shown, span) = (shown(&path.path), self.sem.byte_range(path.span()));
            self.use_api(ApiUse {
                as_value: true,
                ..ApiUse::new(entry, canonical, shown, span)
            });
        }
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.analyses.on_macro(mac);
        let reporting = self.reporting || best_available::reporting(&last_name(&mac.path));
        let outer = std::mem::replace(&mut self.reporting, reporting);
        self.visit_macro_body(mac);
        self.reporting = outer;
    }

    fn visit_item(&mut self, item: &'ast Item) {
        visit::visit_item(self, item);
    }
}
