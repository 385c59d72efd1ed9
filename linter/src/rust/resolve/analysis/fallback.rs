//! `silent_cpu_fallback`'s facts: a device chooser that may quietly return the CPU
//! (`cuda_if_available`) whose result nothing looks at. A result bound to a variable is
//! pending until something compares it, matches on it, asks `is_cuda()`, or logs or asserts it
//! in a macro; what is still pending when the function ends is reported. The result is followed
//! through `.ok()`, `?`, `.unwrap()`, into `let x = if .. { chooser } else { .. }`, and along
//! `Option`/`Result` chains into the next closure's parameter
//! (`.and_then(|_| chooser().ok()).and_then(|device| match device { .. })`).

use std::ops::Range;

use syn::Expr;
use syn::spanned::Spanned;

use super::best_available;
use crate::analysis::{ApiUse, Event};
use crate::rust::resolve::semantic::Semantic;
use crate::rust::resolve::semantic::syntax::{passes_value, shown, variable};

/// A result bound and not looked at yet.
#[derive(Debug)]
struct UncheckedResult {
    variable: String,
    shown: String,
    span: Range<usize>,
}

#[derive(Debug, Default)]
pub(in crate::rust::resolve) struct State {
    pending: Vec<UncheckedResult>,
    /// The calls a `let` or a chain is binding, so they are tracked, not reported, when walked.
    bound: Vec<Range<usize>>,
}

/// Methods that look at what a device chooser returned.
const CHECKS: &[&str] = &[
    "is_cuda",
    "is_cpu",
    "is_gpu",
    "is_metal",
    "location",
    "same_device",
];

/// `Option`/`Result` methods that pass the value along to a closure (`.and_then(|device| ..)`).
const PASS_ALONG: &[&str] = &[
    "and_then",
    "map",
    "inspect",
    "filter",
    "is_some_and",
    "is_ok_and",
];

/// The chooser calls whose result is the value of `expr`: the expression itself (through
/// `.ok()`, `?`, `.unwrap()`, `.expect(..)`, `.unwrap_or(..)`, a borrow), the values of its `if`/`match` branches and
/// blocks, or of the closure an `.and_then(|_| ..)`/`.map(|_| ..)` chain ends with.
fn value_calls<'e>(expr: &'e Expr, out: &mut Vec<&'e syn::ExprCall>) {
    match expr {
        Expr::Call(call) => out.push(call),
        Expr::Try(inner) => value_calls(&inner.expr, out),
        Expr::Paren(inner) => value_calls(&inner.expr, out),
        Expr::Group(inner) => value_calls(&inner.expr, out),
        Expr::Reference(inner) => value_calls(&inner.expr, out),
        Expr::MethodCall(call)
            if passes_value(&call.method)
                || ["unwrap_or", "unwrap_or_else", "unwrap_or_default"]
                    .iter()
                    .any(|name| call.method == name) =>
        {
            value_calls(&call.receiver, out)
        }
        Expr::MethodCall(call) if call.method == "and_then" || call.method == "map" => {
            if let Some(Expr::Closure(closure)) = call.args.first() {
                value_calls(&closure.body, out);
            }
        }
        Expr::If(branch) => {
            tail_calls(&branch.then_branch, out);
            if let Some((_, otherwise)) = &branch.else_branch {
                value_calls(otherwise, out);
            }
        }
        Expr::Block(block) => tail_calls(&block.block, out),
        Expr::Match(matched) => matched
            .arms
            .iter()
            .for_each(|arm| value_calls(&arm.body, out)),
        _ => {}
    }
}

/// The chooser calls whose result is a block's value: its tail expression's, and where the
/// tail is one of blocks under exclusive `#[cfg]`s (`#[cfg(feature = "cuda")] { .. }
/// #[cfg(not(feature = "cuda"))] { .. }`), each of them, since only one is compiled.
fn tail_calls<'e>(block: &'e syn::Block, out: &mut Vec<&'e syn::ExprCall>) {
    let cfg_block = |stmt: &syn::Stmt| match stmt {
        syn::Stmt::Expr(Expr::Block(inner), None) => {
            inner.attrs.iter().any(|attr| attr.path().is_ident("cfg"))
        }
        _ => false,
    };
    let Some((last, rest)) = block.stmts.split_last() else {
        return;
    };
    let syn::Stmt::Expr(tail, None) = last else {
        return;
    };
    value_calls(tail, out);
    if cfg_block(last) {
        for stmt in rest.iter().rev().take_while(|stmt| cfg_block(stmt)) {
            if let syn::Stmt::Expr(alternative, None) = stmt {
                value_calls(alternative, out);
            }
        }
    }
}

/// `let name = init;`: chooser calls whose result `init` is are bound to `name`.
pub(super) fn on_let(state: &mut State, sem: &Semantic<'_, '_>, names: &[String], init: &Expr) {
    if names.len() == 1 {
        bind(state, sem, names, init);
    }
}

/// `receiver.and_then(|name| ..)`, before the receiver is walked: chooser calls whose result
/// the receiver is are passed to `name`; `receiver.is_cuda()` looks at them at once.
pub(super) fn on_chain(state: &mut State, sem: &Semantic<'_, '_>, call: &syn::ExprMethodCall) {
    // `Device::cuda_if_available().is_cuda()`: looked at where it is made.
    if CHECKS.iter().any(|check| call.method == check) {
        on_compared(state, sem, &call.receiver);
        return;
    }
    if !PASS_ALONG.iter().any(|method| call.method == method) {
        return;
    }
    let Some(Expr::Closure(closure)) = call.args.first() else {
        return;
    };
    let Some(syn::Pat::Ident(param)) = closure.inputs.first() else {
        return;
    };
    bind(state, sem, &[param.ident.to_string()], &call.receiver);
}

/// `chooser() != Device::Cpu`, `matches!(chooser(), Ok(Device::Cuda(_)))`, before `value` is
/// walked: the chooser calls whose result it is are looked at where they are made.
pub(super) fn on_compared(state: &mut State, sem: &Semantic<'_, '_>, value: &Expr) {
    let mut calls = Vec::new();
    value_calls(value, &mut calls);
    // Only choosers are reported where nothing binds them; other calls compared need no entry.
    let choosers = calls.iter().filter(|call| {
        matches!(&*call.func, Expr::Path(func)
            if sem.known_path(&func.path).is_some_and(|(_, entry)| entry.may_fall_back))
    });
    state
        .bound
        .extend(choosers.map(|call| sem.byte_range(call.func.span())));
}

/// Chooser calls whose result `init` is, held by each of `names`: a table's fallback
/// (`cuda_if_available`), or one written by hand ([`best_available`]).
fn bind(state: &mut State, sem: &Semantic<'_, '_>, names: &[String], init: &Expr) {
    if names.is_empty() {
        return;
    }
    let mut written = Vec::new();
    best_available::in_value(sem, init, &mut written);
    for written in written.iter().filter(|written| !written.reported) {
        state.bound.push(written.span.clone());
        for name in names {
            state.pending.push(UncheckedResult {
                variable: name.clone(),
                shown: written.shown.clone(),
                span: written.span.clone(),
            });
        }
    }
    let mut calls = Vec::new();
    value_calls(init, &mut calls);
    for call in calls {
        let Expr::Path(func) = &*call.func else {
            continue;
        };
        let Some((_, entry)) = sem.known_path(&func.path) else {
            continue;
        };
        if entry.may_fall_back {
            let span = sem.byte_range(func.span());
            state.bound.push(span.clone());
            for name in names {
                state.pending.push(UncheckedResult {
                    variable: name.clone(),
                    shown: shown(&func.path),
                    span: span.clone(),
                });
            }
        }
    }
}

impl State {
    /// A fallback at `span` whose own path reports it: looked at where it is made.
    pub(super) fn looked_at(&mut self, span: Range<usize>) {
        self.bound.push(span);
    }
}

/// A chooser called (or passed as a value) where nothing binds its result.
pub(super) fn on_api_use(state: &mut State, events: &mut Vec<Event<'_>>, use_: &ApiUse<'_>) {
    if use_.entry.may_fall_back && !state.bound.contains(&use_.span) {
        events.push(Event::SilentFallback {
            shown: use_.shown.clone(),
            span: use_.span.clone(),
        });
    }
}

/// Something looked at `name`, and so at the result it holds (also under the other names an
/// arm of the same `match` gave it).
fn checked(state: &mut State, name: &str) {
    if state.pending.is_empty() {
        return;
    }
    let spans: Vec<Range<usize>> = state
        .pending
        .iter()
        .filter(|pending| pending.variable == name)
        .map(|pending| pending.span.clone())
        .collect();
    state
        .pending
        .retain(|pending| pending.variable != name && !spans.contains(&pending.span));
}

/// `match chooser() { Ok(d) if d.is_cuda() => .., _ => .. }`, before the scrutinee is walked:
/// the result is held by the names the arms bind it to (`Ok(d)`, `Some(d)`, `d`), so a guard
/// or an arm that looks at one of them looks at it.
pub(super) fn on_match(state: &mut State, sem: &Semantic<'_, '_>, matched: &syn::ExprMatch) {
    let mut calls = Vec::new();
    value_calls(&matched.expr, &mut calls);
    // Most matches are on no fallback: nothing to hold, and their arms are not read.
    let falls_back = calls.iter().any(|call| {
        matches!(&*call.func, Expr::Path(func)
            if sem.known_path(&func.path).is_some_and(|(_, entry)| entry.may_fall_back))
    });
    if !falls_back {
        let mut written = Vec::new();
        best_available::in_value(sem, &matched.expr, &mut written);
        if written.is_empty() {
            return;
        }
    }
    // An arm that logs or prints says how the choice went: the result is looked at.
    if matched
        .arms
        .iter()
        .any(|arm| best_available::reports(&arm.body))
    {
        state
            .bound
            .extend(calls.iter().map(|call| sem.byte_range(call.func.span())));
        return;
    }
    let names: Vec<String> = matched
        .arms
        .iter()
        .filter_map(|arm| bound_name(&arm.pat))
        .collect();
    bind(state, sem, &names, &matched.expr);
}

/// `if let Ok(device) = chooser() { if device.is_cuda() { .. } }`, before the value is walked:
/// the result is held by the name the pattern binds.
pub(super) fn on_let_expr(state: &mut State, sem: &Semantic<'_, '_>, binding: &syn::ExprLet) {
    let names: Vec<String> = bound_name(&binding.pat).into_iter().collect();
    bind(state, sem, &names, &binding.expr);
}

/// The one name a pattern binds the whole value, or its `Ok`/`Some` payload, to.
fn bound_name(pat: &syn::Pat) -> Option<String> {
    match pat {
        syn::Pat::Ident(ident) => Some(ident.ident.to_string()),
        syn::Pat::TupleStruct(tuple) if tuple.elems.len() == 1 => {
            let variant = tuple.path.segments.last()?.ident.to_string();
            match variant.as_str() {
                "Ok" | "Some" => bound_name(tuple.elems.first()?),
                _ => None,
            }
        }
        _ => None,
    }
}

pub(super) fn on_method_call(state: &mut State, call: &syn::ExprMethodCall) {
    if !state.pending.is_empty()
        && CHECKS.iter().any(|check| call.method == check)
        && let Some(name) = variable(&call.receiver)
    {
        checked(state, &name);
    }
}

pub(super) fn on_binary(state: &mut State, binary: &syn::ExprBinary) {
    if state.pending.is_empty() || !matches!(binary.op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_)) {
        return;
    }
    for side in [&binary.left, &binary.right] {
        if let Some(name) = variable(side) {
            checked(state, &name);
        }
    }
}

pub(super) fn on_scrutinee(state: &mut State, expr: &Expr) {
    if let Some(name) = variable(expr) {
        checked(state, &name);
    }
}

/// A logged, asserted or matched device has been looked at.
pub(super) fn on_macro(state: &mut State, mac: &syn::Macro) {
    if state.pending.is_empty() {
        return;
    }
    let mut names = Vec::new();
    mentioned(&mac.tokens, &mut names);
    names.iter().for_each(|name| checked(state, name));
}

/// At the end of a function: what nobody looked at.
pub(super) fn finish(state: State, events: &mut Vec<Event<'_>>) {
    let mut reported: Vec<Range<usize>> = Vec::new();
    for pending in state.pending {
        // A result several arms of a `match` held is one finding.
        if reported.contains(&pending.span) {
            continue;
        }
        reported.push(pending.span.clone());
        events.push(Event::SilentFallback {
            shown: pending.shown,
            span: pending.span,
        });
    }
}

/// The names a macro body mentions, `{device}` and `{device:?}` in format strings included.
fn mentioned(tokens: &proc_macro2::TokenStream, out: &mut Vec<String>) {
    for tree in tokens.clone() {
        match tree {
            proc_macro2::TokenTree::Ident(ident) => out.push(ident.to_string()),
            proc_macro2::TokenTree::Group(group) => mentioned(&group.stream(), out),
            proc_macro2::TokenTree::Literal(literal) => {
                let text = literal.to_string();
                let mut rest = text.as_str();
                while let Some(open) = rest.find('{') {
                    rest = &rest[open + 1..];
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        out.push(name);
                    }
                }
            }
            proc_macro2::TokenTree::Punct(_) => {}
        }
    }
}
