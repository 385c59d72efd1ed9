//! `device_mismatch`'s facts: within one function, an op whose operands are definitely on
//! different devices (`a + b`, `a.matmul(&b)`, `Tensor::cat(&[&a, &b], 0)`), as the device
//! facts of the semantic model tell.

use std::ops::Range;

use proc_macro2::Span;
use syn::Expr;
use syn::spanned::Spanned;

use crate::analysis::{Event, Fact};
use crate::rust::resolve::semantic::Semantic;
use crate::rust::resolve::semantic::syntax::{is_arithmetic, peel};

/// Two operands of one op on definitely different devices. `op` names the op for the message;
/// it is only built for a finding.
pub(super) fn check_operands<'a>(
    sem: &Semantic<'_, 'a>,
    events: &mut Vec<Event<'a>>,
    op: impl FnOnce() -> String,
    lhs: &Expr,
    rhs: &Expr,
    at: Span,
) {
    // `i + 1`: a literal is never a tensor.
    if matches!(peel(lhs), Expr::Lit(_)) || matches!(peel(rhs), Expr::Lit(_)) {
        return;
    }
    if let (Some(lhs), Some(rhs)) = (sem.tensor_device(lhs), sem.tensor_device(rhs))
        && lhs.device != rhs.device
    {
        events.push(Event::Mismatch {
            op: op(),
            span: sem.byte_range(at),
            lhs,
            rhs,
        });
    }
}

/// `a + b` and the other arithmetic operators.
pub(super) fn on_binary<'a>(
    sem: &Semantic<'_, 'a>,
    events: &mut Vec<Event<'a>>,
    binary: &syn::ExprBinary,
) {
    if is_arithmetic(&binary.op) {
        let op = || format!("`{}`", quote::ToTokens::to_token_stream(&binary.op));
        check_operands(
            sem,
            events,
            op,
            &binary.left,
            &binary.right,
            binary.op.span(),
        );
    }
}

/// The tensors a list of them holds (`&[&a, &b]`, `vec![a, b]`), as `Tensor::cat` is given.
pub(super) fn listed(list: &Expr) -> Vec<Expr> {
    match peel(list) {
        Expr::Array(array) => array.elems.iter().cloned().collect(),
        Expr::Macro(mac) if mac.mac.path.is_ident("vec") => mac
            .mac
            .parse_body_with(syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated)
            .map(|elems| elems.into_iter().collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// `Tensor::cat(&[&a, &b], 0)`: the listed tensors must share a device.
pub(super) fn check_list<'a>(
    sem: &Semantic<'_, 'a>,
    events: &mut Vec<Event<'a>>,
    op: String,
    span: Range<usize>,
    list: &Expr,
) {
    let elems = listed(list);
    let facts: Vec<Fact> = elems
        .iter()
        .filter_map(|elem| sem.tensor_device(elem))
        .collect();
    if let Some(first) = facts.first()
        && let Some(other) = facts.iter().find(|fact| fact.device != first.device)
    {
        events.push(Event::Mismatch {
            op,
            span,
            lhs: first.clone(),
            rhs: other.clone(),
        });
    }
}
