//! Device flow inside a function: which device each binding definitely names or is on, where
//! operands of one op definitely disagree, which transfers repeat a loop-invariant copy, and
//! which `cuda_if_available` results are never looked at. Only definite facts are kept: an
//! unknown device never makes a finding.

use std::collections::HashSet;
use std::ops::Range;

use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, ExprMethodCall};

use super::super::scope::{Fact, How};
use super::{Walker, device_string, literal_usize, range};
use crate::api::{Entry, Role};
use crate::resolve::Event;

/// A loop being walked: what may change across its iterations.
#[derive(Debug)]
pub(super) struct Loop {
    /// Scope depth at the loop: variables defined at or below it are the loop's own.
    depth: usize,
    /// Variables assigned anywhere in the body.
    assigned: HashSet<String>,
    /// The `for`/`while`/`loop` keyword.
    keyword: Range<usize>,
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

/// How many layers inference looks through (`&`, `?`, `.clone()`, a method chain, an
/// arithmetic chain): facts are not followed deeper, so that long generated chains are walked in
/// linear time.
pub(super) const INFERENCE_DEPTH: usize = 16;

/// Strips what changes neither a value's device nor its type: `&x`, `(x)`, `x?`, `x.clone()`,
/// `x.unwrap()`, up to [`INFERENCE_DEPTH`] layers.
pub(super) fn peel(mut expr: &Expr) -> &Expr {
    for _ in 0..INFERENCE_DEPTH {
        expr = match expr {
            Expr::Reference(inner) => &inner.expr,
            Expr::Paren(inner) => &inner.expr,
            Expr::Group(inner) => &inner.expr,
            Expr::Try(inner) => &inner.expr,
            // Compared without turning the identifier into a string: this runs for most `let`s.
            Expr::MethodCall(call)
                if call.args.is_empty()
                    && ["clone", "to_owned", "unwrap", "as_ref", "borrow"]
                        .iter()
                        .any(|name| call.method == name) =>
            {
                &call.receiver
            }
            Expr::MethodCall(call) if call.method == "expect" => &call.receiver,
            other => return other,
        };
    }
    expr
}

pub(super) fn variable(expr: &Expr) -> Option<String> {
    match peel(expr) {
        Expr::Path(path) if path.qself.is_none() => path.path.get_ident().map(ToString::to_string),
        _ => None,
    }
}

impl<'a> Walker<'_, 'a> {
    /// The device an expression definitely names (a device value, not a tensor).
    pub(super) fn device_value(&self, expr: &Expr) -> Option<Fact> {
        let expr = peel(expr);
        if let Some(name) = variable(expr) {
            return self
                .scopes
                .var(&name)
                .and_then(|(var, _)| var.names.clone());
        }
        let named = |device: String, origin: Range<usize>| {
            Some(Fact {
                device,
                origin,
                how: How::Named,
            })
        };
        match expr {
            Expr::Path(path) => {
                let (_, entry) = self.known_path(&path.path)?;
                match entry.role {
                    Role::CpuDevice => named("cpu".to_owned(), range(path.span())),
                    _ => named(entry.fixed_device.clone()?, range(path.span())),
                }
            }
            Expr::Call(call) => {
                let Expr::Path(func) = &*call.func else {
                    return None;
                };
                let (_, entry) = self.lookup_path(&func.path)?;
                match entry.role {
                    Role::CpuDevice => named("cpu".to_owned(), range(call.span())),
                    // A fallback may be the CPU: its device is not definite.
                    Role::ExplicitDevice if !entry.may_fall_back => {
                        let (ordinal, _) = literal_usize(call.args.iter().nth(entry.ordinal?)?)?;
                        named(format!("{}:{ordinal}", entry.gpu), range(call.span()))
                    }
                    _ => None,
                }
            }
            Expr::MethodCall(call) if call.method == "parse" => {
                let ordinal = device_string(peel(&call.receiver))?;
                named(format!("cuda:{ordinal}"), range(call.span()))
            }
            // tch's creation options: `(Kind::Float, device)`.
            Expr::Tuple(tuple) => tuple.elems.iter().find_map(|elem| self.device_value(elem)),
            _ => None,
        }
    }

    /// The device a tensor expression is definitely on.
    pub(super) fn tensor_device(&self, expr: &Expr) -> Option<Fact> {
        self.tensor_device_within(expr, INFERENCE_DEPTH)
    }

    fn tensor_device_within(&self, expr: &Expr, depth: usize) -> Option<Fact> {
        let depth = depth.checked_sub(1)?;
        let expr = peel(expr);
        if let Some(name) = variable(expr) {
            return self.scopes.var(&name).and_then(|(var, _)| var.on.clone());
        }
        match expr {
            Expr::Call(call) => {
                let Expr::Path(func) = &*call.func else {
                    return None;
                };
                let (_, entry) = self.lookup_path(&func.path)?;
                match entry.role {
                    Role::TensorConstructor => {
                        let fact = self.device_value(call.args.iter().nth(entry.device?)?)?;
                        Some(Fact {
                            how: How::Created,
                            origin: range(call.span()),
                            ..fact
                        })
                    }
                    Role::CpuTensor => Some(Fact {
                        device: "cpu".to_owned(),
                        origin: range(call.span()),
                        how: How::Created,
                    }),
                    _ => None,
                }
            }
            Expr::MethodCall(call) => {
                let entry = self.method_entry(call)?;
                match entry.role {
                    Role::Transfer => {
                        let fact = self.device_value(call.args.iter().nth(entry.device?)?)?;
                        Some(Fact {
                            how: How::Moved,
                            origin: range(call.method.span()),
                            ..fact
                        })
                    }
                    Role::SameDevice => self.tensor_device_within(&call.receiver, depth),
                    Role::BinaryOp => self
                        .tensor_device_within(&call.receiver, depth)
                        .or_else(|| self.tensor_device_within(call.args.first()?, depth)),
                    _ => None,
                }
            }
            Expr::Binary(binary) if is_arithmetic(&binary.op) => self
                .tensor_device_within(&binary.left, depth)
                .or_else(|| self.tensor_device_within(&binary.right, depth)),
            _ => None,
        }
    }

    /// The table entry of a method call, when its receiver's type is known.
    pub(super) fn method_entry(&self, call: &ExprMethodCall) -> Option<&'a Entry> {
        if !self.cx.api.mentions_ident(&call.method) {
            return None;
        }
        let receiver = self.infer(&call.receiver)?;
        self.cx.api.method(&receiver, &call.method.to_string())
    }

    /// [`Walker::lookup_path`], skipped at once for names no table mentions.
    pub(super) fn known_path(&self, path: &syn::Path) -> Option<(String, &'a Entry)> {
        if !self.cx.api.mentions_ident(&path.segments.last()?.ident) {
            return None;
        }
        self.lookup_path(path)
    }

    /// Two operands of one op on definitely different devices.
    /// `op` names the op for the message; it is only built for a finding.
    pub(super) fn check_operands(
        &mut self,
        op: impl FnOnce() -> String,
        span: Range<usize>,
        lhs: &Expr,
        rhs: &Expr,
    ) {
        // `i + 1`: a literal is never a tensor.
        if matches!(peel(lhs), Expr::Lit(_)) || matches!(peel(rhs), Expr::Lit(_)) {
            return;
        }
        if let (Some(lhs), Some(rhs)) = (self.tensor_device(lhs), self.tensor_device(rhs))
            && lhs.device != rhs.device
        {
            self.events.push(Event::Mismatch {
                op: op(),
                span,
                lhs,
                rhs,
            });
        }
    }

    /// `Tensor::cat(&[&a, &b], 0)`: the listed tensors must share a device.
    pub(super) fn check_list(&mut self, op: String, span: Range<usize>, list: &Expr) {
        let elems: Vec<Expr> = match peel(list) {
            Expr::Array(array) => array.elems.iter().cloned().collect(),
            Expr::Macro(mac) if mac.mac.path.is_ident("vec") => mac
                .mac
                .parse_body_with(
                    syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                )
                .map(|elems| elems.into_iter().collect())
                .unwrap_or_default(),
            _ => return,
        };
        let facts: Vec<Fact> = elems
            .iter()
            .filter_map(|elem| self.tensor_device(elem))
            .collect();
        if let Some(first) = facts.first()
            && let Some(other) = facts.iter().find(|fact| fact.device != first.device)
        {
            self.events.push(Event::Mismatch {
                op,
                span,
                lhs: first.clone(),
                rhs: other.clone(),
            });
        }
    }

    // ---- loops ------------------------------------------------------------------------------

    /// Before a loop body: what it assigns is unknown from the first iteration on.
    pub(super) fn enter_loop(&mut self, keyword: Range<usize>, body: &syn::Block) {
        let assigned = assigned_names(body);
        for name in &assigned {
            self.scopes.forget(name);
        }
        self.loops.push(Loop {
            depth: self.scopes.depth(),
            assigned,
            keyword,
        });
    }

    pub(super) fn exit_loop(&mut self) {
        self.loops.pop();
    }

    /// Whether an expression has the same value in every iteration of `inner`: variables from
    /// outside it that it never assigns, fields of those, constants and literals, and (for a
    /// device, `calls`) constructor calls of those. A call that makes a tensor may make a new
    /// one each time (`randn`), so receivers never count calls as invariant.
    fn invariant(&self, expr: &Expr, inner: &Loop, calls: bool) -> bool {
        match peel(expr) {
            Expr::Path(path) if path.qself.is_none() => match path.path.get_ident() {
                Some(ident) => {
                    let name = ident.to_string();
                    match self.scopes.var(&name) {
                        Some((_, depth)) => depth < inner.depth && !inner.assigned.contains(&name),
                        // Not a variable: a constant, a unit variant or a static.
                        None => true,
                    }
                }
                None => true,
            },
            Expr::Field(field) => self.invariant(&field.base, inner, calls),
            Expr::Lit(_) => true,
            Expr::Call(call) => {
                calls
                    && matches!(&*call.func, Expr::Path(_))
                    && call
                        .args
                        .iter()
                        .all(|arg| self.invariant(arg, inner, calls))
            }
            _ => false,
        }
    }

    /// A transfer inside a loop whose receiver and target do not change across iterations.
    pub(super) fn check_loop_transfer(&mut self, entry: &Entry, call: &ExprMethodCall) {
        let Some(inner) = self.loops.last() else {
            return;
        };
        // Every argument counts, not only the device: `to_device_with(&gpu, mode)` over a list
        // of modes is a different transfer each time. With no device argument, the target is the
        // current device, which nothing in the loop changes in plain code.
        let target_invariant = (entry.device.is_none()
            || call.args.len() > entry.device.unwrap_or(0))
            && call.args.iter().all(|arg| self.invariant(arg, inner, true));
        if !target_invariant || !self.invariant(&call.receiver, inner, false) {
            return;
        }
        let receiver = quote::ToTokens::to_token_stream(&call.receiver)
            .to_string()
            .replace(' ', "");
        self.events.push(Event::LoopTransfer {
            shown: format!(".{}()", call.method),
            span: range(call.method.span()),
            receiver,
            keyword: inner.keyword.clone(),
        });
    }

    // ---- silent fallbacks ----------------------------------------------------------------------

    /// A `cuda_if_available` result: bound to `name`, it is pending until something looks at it.
    pub(super) fn note_fallback(
        &mut self,
        name: Option<String>,
        shown: String,
        span: Range<usize>,
    ) {
        match name {
            Some(name) => self.fallbacks.push((name, shown, span)),
            None => self.events.push(Event::SilentFallback { shown, span }),
        }
    }

    /// Something looked at `name` (compared it, matched on it, logged it, asked `is_cuda`).
    pub(super) fn checked(&mut self, name: &str) {
        self.fallbacks.retain(|(pending, ..)| pending != name);
    }

    /// At the end of a function: what nobody looked at.
    pub(super) fn finish_fallbacks(&mut self, outer: Vec<(String, String, Range<usize>)>) {
        let pending = std::mem::replace(&mut self.fallbacks, outer);
        for (_, shown, span) in pending {
            self.events.push(Event::SilentFallback { shown, span });
        }
    }
}

pub(super) fn is_arithmetic(op: &syn::BinOp) -> bool {
    matches!(
        op,
        syn::BinOp::Add(_) | syn::BinOp::Sub(_) | syn::BinOp::Mul(_) | syn::BinOp::Div(_)
    )
}

/// The names a macro body mentions, for "logged or asserted counts as looked at".
pub(super) fn mentioned(tokens: &proc_macro2::TokenStream, out: &mut Vec<String>) {
    for tree in tokens.clone() {
        match tree {
            proc_macro2::TokenTree::Ident(ident) => out.push(ident.to_string()),
            proc_macro2::TokenTree::Group(group) => mentioned(&group.stream(), out),
            proc_macro2::TokenTree::Literal(literal) => {
                // `{device}` and `{device:?}` inside format strings.
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
