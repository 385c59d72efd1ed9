//! `transfer_in_loop`'s facts: a transfer inside a `for`, `while` or `loop` whose receiver and
//! target device are the same in every iteration (a loop-invariant copy).

use std::collections::HashSet;
use std::ops::Range;

use syn::visit::Visit;
use syn::{Expr, ExprMethodCall};

use crate::analysis::Event;
use crate::api::{Entry, Role};
use crate::rust::resolve::semantic::Semantic;
use crate::rust::resolve::semantic::syntax::peel;

/// A loop being walked: what may change across its iterations.
#[derive(Debug)]
pub(in crate::rust::resolve) struct Loop {
    /// Scope depth at the loop: variables defined at or below it are the loop's own.
    depth: usize,
    /// Variables assigned anywhere in the body.
    assigned: HashSet<String>,
    /// The `for`/`while`/`loop` keyword.
    keyword: Range<usize>,
}

/// The loops around the current point of the current function, innermost last.
#[derive(Debug, Default)]
pub(in crate::rust::resolve) struct State {
    loops: Vec<Loop>,
}

/// Names assigned (`x = …`, `x += …`) anywhere in a loop body.
fn assigned_names(body: &syn::Block) -> HashSet<String> {
    struct Assigned(HashSet<String>);
    impl<'ast> Visit<'ast> for Assigned {
        fn visit_expr_assign(&mut self, assign: &'ast syn::ExprAssign) {
            if let Expr::Path(path) = &*assign.left
                && let Some(ident) = path.path.get_ident()
            {
                self.0.insert(ident.to_string());
            }
            syn::visit::visit_expr_assign(self, assign);
        }
        fn visit_expr_binary(&mut self, binary: &'ast syn::ExprBinary) {
            let compound = matches!(
                binary.op,
                syn::BinOp::AddAssign(_)
                    | syn::BinOp::SubAssign(_)
                    | syn::BinOp::MulAssign(_)
                    | syn::BinOp::DivAssign(_)
            );
            if compound
                && let Expr::Path(path) = &*binary.left
                && let Some(ident) = path.path.get_ident()
            {
                self.0.insert(ident.to_string());
            }
            syn::visit::visit_expr_binary(self, binary);
        }
    }
    let mut found = Assigned(HashSet::new());
    found.visit_block(body);
    found.0
}

/// Before a loop body: what it assigns is unknown from the first iteration on.
pub(super) fn enter(
    state: &mut State,
    sem: &mut Semantic<'_, '_>,
    keyword: Range<usize>,
    body: &syn::Block,
) {
    let assigned = assigned_names(body);
    for name in &assigned {
        sem.scopes.forget(name);
    }
    state.loops.push(Loop {
        depth: sem.scopes.depth(),
        assigned,
        keyword,
    });
}

pub(super) fn exit(state: &mut State) {
    state.loops.pop();
}

/// Whether an expression has the same value in every iteration of `inner`: variables from
/// outside it that it never assigns, fields of those, constants and literals, and (for a
/// device, `calls`) constructor calls of those. A call that makes a tensor may make a new
/// one each time (`randn`), so receivers never count calls as invariant.
fn invariant(sem: &Semantic<'_, '_>, expr: &Expr, inner: &Loop, calls: bool) -> bool {
    match peel(expr) {
        Expr::Path(path) if path.qself.is_none() => match path.path.get_ident() {
            Some(ident) => {
                let name = ident.to_string();
                match sem.scopes.var(&name) {
                    Some((_, depth)) => depth < inner.depth && !inner.assigned.contains(&name),
                    // Not a variable: a constant, a unit variant or a static.
                    None => true,
                }
            }
            None => true,
        },
        Expr::Field(field) => invariant(sem, &field.base, inner, calls),
        Expr::Lit(_) => true,
        Expr::Call(call) => {
            calls
                && matches!(&*call.func, Expr::Path(_))
                && call
                    .args
                    .iter()
                    .all(|arg| invariant(sem, arg, inner, calls))
        }
        _ => false,
    }
}

/// A transfer inside a loop whose receiver and target do not change across iterations.
pub(super) fn check_transfer<'a>(
    state: &State,
    sem: &Semantic<'_, 'a>,
    events: &mut Vec<Event<'a>>,
    entry: &Entry,
    call: &ExprMethodCall,
) {
    let Some(inner) = state.loops.last() else {
        return;
    };
    // Every argument counts, not only the device: `to_device_with(&gpu, mode)` over a list
    // of modes is a different transfer each time. With no device argument, the target is the
    // current device, which nothing in the loop changes in plain code.
    let device = match entry.role {
        Role::Transfer { device } => Some(device),
        _ => None,
    };
    let target_invariant = device.is_none_or(|device| call.args.len() > device)
        && call.args.iter().all(|arg| invariant(sem, arg, inner, true));
    if !target_invariant || !invariant(sem, &call.receiver, inner, false) {
        return;
    }
    let receiver = quote::ToTokens::to_token_stream(&call.receiver)
        .to_string()
        .replace(' ', "");
    events.push(Event::LoopTransfer {
        shown: format!(".{}()", call.method),
        span: sem.byte_range(call.method.span()),
        receiver,
        keyword: inner.keyword.clone(),
    });
}
