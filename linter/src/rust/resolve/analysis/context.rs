//! The current context: a function that makes a context current itself (`bind_to_thread`,
//! `set_current`, or a call that binds the device it opens or is given: `CudaDevice::new(i)`,
//! `CudaBlas::new(device)`) has chosen the device for what follows in it, so a later use of "whatever is
//! current" is its own choice. A private helper that uses the current context without binding
//! one is right when every caller in the crate binds one before calling it: each such use names
//! its helper, and once every file is walked, the files of the crate that mention a helper are
//! walked again to record, for each call of it, whether its caller had bound a context (see
//! [`crate::diagnostic::Requirement`]).
//!
//! A function that saves the current context and restores it (`cuCtxGetCurrent(&mut saved)`,
//! then `cuCtxSetCurrent(saved)`; or pushes one and pops it) changes it only for a while, as a
//! scoped guard does: neither its changes nor its reading of the context to save it are flagged.

use super::FnInfo;
use crate::analysis::{ApiUse, CallFact, Event};
use crate::api::Role;
use crate::rust::resolve::semantic::Semantic;

#[derive(Debug, Default)]
pub(in crate::rust::resolve) struct State {
    /// Whether the current function made a context current so far.
    binds: bool,
    /// The current function's name, when it is not public (only its crate can call it).
    helper: Option<String>,
    /// Whether the function restores the context it found ([`restores`]).
    restores: bool,
}

impl State {
    pub(super) fn for_function(info: &FnInfo<'_>) -> State {
        State {
            binds: false,
            helper: (!info.public).then(|| info.name.clone()),
            restores: false,
        }
    }

    /// Notes whether the function about to be walked (its body and the body's text) restores
    /// the context it found. Most functions name no such call, and are not walked for one.
    pub(in crate::rust::resolve) fn set_restores(&mut self, block: &syn::Block, text: &str) {
        let names_one = SAVES
            .iter()
            .chain(POPS)
            .any(|name| memchr::memmem::find(text.as_bytes(), name.as_bytes()).is_some());
        self.restores = names_one && restores(block);
    }
}

/// Whether a use is part of saving and restoring the current context, in a function that does
/// ([`restores`]): a change of it, or the reading of it to save it.
pub(super) fn vetoes(state: &State, use_: &ApiUse<'_>) -> bool {
    state.restores
        && match use_.entry.role {
            Role::SetCurrentDevice => true,
            Role::CurrentDeviceUser => SAVES.iter().any(|name| use_.path.ends_with(name)),
            _ => false,
        }
}

/// What reads the current context into a place (`cuCtxGetCurrent(&mut saved)`, `let saved =
/// ctx::get_current()?`), makes a context current (`cuCtxSetCurrent(saved)`), pushes or pops one.
const SAVES: &[&str] = &["cuCtxGetCurrent", "get_current"];
const SETS: &[&str] = &["cuCtxSetCurrent", "set_current"];
const PUSHES: &[&str] = &["cuCtxPushCurrent", "cuCtxPushCurrent_v2", "push_current"];
const POPS: &[&str] = &["cuCtxPopCurrent", "cuCtxPopCurrent_v2", "pop_current"];

/// Whether a function's body saves the current context and makes it current again (a name
/// given to a `cuCtxGetCurrent(&mut name)` or bound to `get_current()`, then given to
/// `cuCtxSetCurrent`), or pushes a context and pops it.
fn restores(block: &syn::Block) -> bool {
    #[derive(Default)]
    struct Calls {
        saved: Vec<String>,
        set: Vec<String>,
        pushes: bool,
        pops: bool,
    }
    fn name_of(expr: &syn::Expr) -> Option<String> {
        match expr {
            syn::Expr::Path(path) => path.path.get_ident().map(ToString::to_string),
            syn::Expr::Reference(inner) => name_of(&inner.expr),
            syn::Expr::Try(inner) => name_of(&inner.expr),
            syn::Expr::Paren(inner) => name_of(&inner.expr),
            _ => None,
        }
    }
    fn callee(call: &syn::ExprCall) -> Option<String> {
        match &*call.func {
            syn::Expr::Path(path) => path.path.segments.last().map(|last| last.ident.to_string()),
            _ => None,
        }
    }
    fn saved_by(expr: &syn::Expr) -> bool {
        match expr {
            syn::Expr::Call(call) => callee(call).is_some_and(|name| SAVES.contains(&&*name)),
            syn::Expr::Try(inner) => saved_by(&inner.expr),
            syn::Expr::MethodCall(call) => saved_by(&call.receiver),
            _ => false,
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for Calls {
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            if let Some(name) = callee(call) {
                let first = call.args.first().and_then(name_of);
                if SAVES.contains(&&*name) {
                    self.saved.extend(first);
                } else if SETS.contains(&&*name) {
                    self.set.extend(first);
                }
                self.pushes |= PUSHES.contains(&&*name);
                self.pops |= POPS.contains(&&*name);
            }
            syn::visit::visit_expr_call(self, call);
        }
        fn visit_local(&mut self, local: &'ast syn::Local) {
            if let (syn::Pat::Ident(bound), Some(init)) = (&local.pat, &local.init)
                && saved_by(&init.expr)
            {
                self.saved.push(bound.ident.to_string());
            }
            syn::visit::visit_local(self, local);
        }
    }
    let mut calls = Calls::default();
    syn::visit::Visit::visit_block(&mut calls, block);
    (calls.pushes && calls.pops) || calls.saved.iter().any(|name| calls.set.contains(name))
}

/// Marks a use made after the function bound a context, or names the helper it is in.
pub(super) fn on_api_use<'a>(state: &mut State, use_: ApiUse<'a>) -> ApiUse<'a> {
    let role = &use_.entry.role;
    let after_bind = state.binds;
    let helper = (*role == Role::CurrentDeviceUser && !after_bind)
        .then(|| state.helper.clone())
        .flatten();
    state.binds |= *role == Role::SetCurrentDevice || use_.entry.binds_context;
    ApiUse {
        after_bind,
        helper,
        ..use_
    }
}

/// A context bound by hand, whatever its receiver: the function chose its device.
pub(super) fn on_method_call(state: &mut State, call: &syn::ExprMethodCall) {
    if call.method == "bind_to_thread" {
        state.binds = true;
    }
}

/// A call of a function by name: recorded when the walk was asked for the calls of that name,
/// with whether this function had bound a context by then.
pub(super) fn on_plain_call(
    state: &State,
    sem: &Semantic<'_, '_>,
    events: &mut Vec<Event<'_>>,
    callee: &syn::Ident,
) {
    if sem
        .cx
        .calls_to
        .is_some_and(|names| names.contains_ident(callee))
    {
        events.push(Event::Call(CallFact {
            callee: callee.to_string(),
            caller: state.helper.clone(),
            binds: state.binds,
        }));
    }
}
