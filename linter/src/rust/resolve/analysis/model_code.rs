//! `unplaced_tensor`'s facts in Rust, the sibling of the Python analysis of the same name: in
//! model code, a tensor made on the CPU (`Tensor::arange(0, n, &Device::Cpu)`,
//! `Tensor::from_slice(..)`, `(Kind::Float, Device::Cpu)`) meeting, in one op, a tensor that
//! follows the model to its device.
//!
//! Model code is the methods that take `self` of a model type: one that implements a trait of
//! the tables' `model_traits` (candle's `Module` and `ModuleT`, tch's `nn::Module` and
//! `nn::ModuleT`), or whose own `forward` takes `self` and a tensor (candle's models that take
//! more than the input: `forward(&self, xs: &Tensor, offset: usize)`). Constructors (no `self`)
//! run before the weights are placed and are not model code. A tensor follows the model when
//! it is a tensor parameter of the method, a tensor field of `self`, or is computed from one
//! (an op, a method of it, a submodule's `forward` given it).

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use syn::spanned::Spanned;
use syn::{Expr, Item};

use super::FnInfo;
use crate::analysis::{Event, Fact, How, MadeOnCpu};
use crate::api::{Entry, Role};
use crate::rust::resolve::semantic::Semantic;
use crate::rust::resolve::semantic::scope::Resolution;
use crate::rust::resolve::semantic::syntax::{impl_owner, is_arithmetic, peel, variable};

/// The longest text of a made tensor or an op shown in a message.
const SHOWN: usize = 60;

/// An op where tensors meet: as written (`.matmul()`, `+`, `Tensor::cat`), and where.
pub(in crate::rust::resolve) struct Op {
    pub(in crate::rust::resolve) shown: String,
    pub(in crate::rust::resolve) span: Range<usize>,
}

/// The model types of a file, by name (`Attention` in `impl Module for Attention`), and the
/// file's functions that model code hands its tensors.
#[derive(Debug, Default)]
pub(in crate::rust::resolve) struct FileState {
    models: HashSet<String>,
    /// Function name → the places of the arguments where model code hands it its tensors,
    /// noted as the walk goes ([`on_call`]).
    fed: HashMap<String, HashSet<usize>>,
    /// While a function of `fed` is walked again as model code: those places.
    pub(in crate::rust::resolve) fed_places: Option<HashSet<usize>>,
}

/// The model code facts of the function being walked.
#[derive(Debug, Default)]
pub(in crate::rust::resolve) struct State {
    /// In a method of a model type that takes `self`.
    in_model: bool,
    /// Variables that follow the model to its device.
    follows: HashSet<String>,
}

/// Whether a signature takes `self`.
fn takes_self(sig: &syn::Signature) -> bool {
    matches!(sig.inputs.first(), Some(syn::FnArg::Receiver(_)))
}

impl FileState {
    /// The functions model code handed its tensors since the last call.
    pub(in crate::rust::resolve) fn take_fed(&mut self) -> HashMap<String, HashSet<usize>> {
        std::mem::take(&mut self.fed)
    }

    /// Whether the function `info` is model code: a method taking `self` of a model type.
    pub(in crate::rust::resolve) fn is_model_code(
        &self,
        sem: &Semantic<'_, '_>,
        info: &FnInfo<'_>,
    ) -> bool {
        sem.cx.model_code
            && info.in_impl
            && info.owner.is_some_and(|owner| self.models.contains(owner))
            && info.sig.is_some_and(takes_self)
    }

    /// Notes the model types among a module's `items`, whose imports are in scope.
    pub(in crate::rust::resolve) fn note_items(&mut self, sem: &Semantic<'_, '_>, items: &[Item]) {
        let names = &sem.cx.api.names;
        for item in items {
            let Item::Impl(imp) = item else { continue };
            let Some(owner) = impl_owner(imp) else {
                continue;
            };
            let model = match &imp.trait_ {
                Some((_, path, _)) => match sem.resolve(path) {
                    Resolution::Path { path, .. } => names
                        .model_traits
                        .contains(&sem.cx.api.canonical(path).join("::")),
                    _ => false,
                },
                None => imp.items.iter().any(|item| {
                    matches!(item, syn::ImplItem::Fn(method)
                        if method.sig.ident == "forward"
                            && takes_self(&method.sig)
                            && tensor_params(sem, &method.sig).next().is_some())
                }),
            };
            if model {
                self.models.insert(owner);
            }
        }
    }
}

/// The names of a signature's parameters of a tensor type.
fn tensor_params<'s>(
    sem: &'s Semantic<'_, '_>,
    sig: &'s syn::Signature,
) -> impl Iterator<Item = String> + 's {
    sig.inputs.iter().filter_map(move |input| {
        let syn::FnArg::Typed(typed) = input else {
            return None;
        };
        let syn::Pat::Ident(name) = &*typed.pat else {
            return None;
        };
        let ty = sem.type_of(&typed.ty)?;
        let tensor = ty
            .named()
            .is_some_and(|ty| sem.cx.api.names.tensor_types.contains(ty));
        tensor.then(|| name.ident.to_string())
    })
}

impl State {
    pub(in crate::rust::resolve) fn for_function(
        file: &FileState,
        sem: &Semantic<'_, '_>,
        info: &FnInfo<'_>,
    ) -> State {
        // A function that model code hands its tensors, walked again: those parameters.
        if let (Some(places), Some(sig)) = (&file.fed_places, info.sig) {
            let follows = (sig.inputs.iter().enumerate())
                .filter(|(at, _)| places.contains(at))
                .filter_map(|(_, input)| match input {
                    syn::FnArg::Typed(typed) => match &*typed.pat {
                        syn::Pat::Ident(name) => Some(name.ident.to_string()),
                        _ => None,
                    },
                    syn::FnArg::Receiver(_) => None,
                })
                .collect();
            return State {
                in_model: true,
                follows,
            };
        }
        let in_model = file.is_model_code(sem, info);
        let follows = match (in_model, info.sig) {
            (true, Some(sig)) => tensor_params(sem, sig).collect(),
            _ => HashSet::new(),
        };
        State { in_model, follows }
    }
}

/// A call of a function by its last name (`apply_rotary(&q, offset)`) in model code: where it
/// hands the function tensors that follow the model.
pub(in crate::rust::resolve) fn on_call(
    state: &State,
    file: &mut FileState,
    sem: &Semantic<'_, '_>,
    callee: &syn::Ident,
    args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
) {
    if !state.in_model {
        return;
    }
    for (at, arg) in args.iter().enumerate() {
        if follows(state, sem, arg).is_some() {
            let places = file.fed.entry(callee.to_string()).or_default();
            places.insert(at);
        }
    }
}

/// `let name = init;` in model code: whether `name` follows the model from here on.
pub(in crate::rust::resolve) fn on_let(
    state: &mut State,
    sem: &Semantic<'_, '_>,
    names: &[String],
    init: &Expr,
) {
    if !state.in_model {
        return;
    }
    let follows = follows(state, sem, init).is_some();
    for name in names {
        match follows && names.len() == 1 {
            true => state.follows.insert(name.clone()),
            false => state.follows.remove(name),
        };
    }
}

/// The tensor that `expr` follows the model through, as written (`xs`, `self.weight`).
fn follows(state: &State, sem: &Semantic<'_, '_>, expr: &Expr) -> Option<String> {
    follows_within(state, sem, expr, 8)
}

fn follows_within(
    state: &State,
    sem: &Semantic<'_, '_>,
    expr: &Expr,
    depth: usize,
) -> Option<String> {
    let depth = depth.checked_sub(1)?;
    let follows = |expr: &Expr| follows_within(state, sem, expr, depth);
    let expr = peel(expr);
    if let Some(name) = variable(expr) {
        return state.follows.contains(&name).then_some(name);
    }
    let names = &sem.cx.api.names;
    match expr {
        // A tensor field of the model (`self.weight`).
        Expr::Field(field) if is_self(&field.base) => {
            let ty = sem.infer(expr)?;
            let tensor = ty.named().is_some_and(|ty| names.tensor_types.contains(ty));
            tensor
                .then(|| source_text(sem, &sem.byte_range(expr.span())))
                .flatten()
        }
        Expr::Binary(binary) => follows(&binary.left).or_else(|| follows(&binary.right)),
        // What a tensor gives that is no tensor (`xs.dims()`, `xs.device()`) follows nothing.
        Expr::MethodCall(call) if names.not_tensors.contains(&call.method.to_string()) => None,
        // Moved (`xs.to_device(&Device::Cpu)`): no longer where the model is.
        Expr::MethodCall(call) if moves(sem, call) => None,
        // A method of a tensor that follows (`xs.transpose(1, 2)`), or of a submodule given one
        // (`self.linear.forward(&xs)`, `xs.apply(&self.linear)`).
        Expr::MethodCall(call) => {
            let receiver = peel(&call.receiver);
            follows(receiver).or_else(|| {
                let submodule = matches!(receiver, Expr::Field(field) if is_self(&field.base));
                submodule
                    .then(|| call.args.iter().find_map(&follows))
                    .flatten()
            })
        }
        // A function given one (`candle_nn::ops::softmax_last_dim(&xs)`, `Tensor::cat(&[&xs])`).
        Expr::Call(call) => call.args.iter().find_map(&follows),
        Expr::Array(array) => array.elems.iter().find_map(&follows),
        _ => None,
    }
}

/// Whether a method call moves a tensor to a device.
fn moves(sem: &Semantic<'_, '_>, call: &syn::ExprMethodCall) -> bool {
    let entry = sem.method_entry(call).or_else(|| tensor_method(sem, call));
    entry.is_some_and(|entry| matches!(entry.role, Role::Transfer { .. }) || entry.transfers)
}

/// Whether an expression is `self`.
fn is_self(expr: &Expr) -> bool {
    matches!(peel(expr), Expr::Path(path) if path.path.is_ident("self"))
}

/// The source text at `span`, unless too long to show in a message.
fn source_text(sem: &Semantic<'_, '_>, span: &Range<usize>) -> Option<String> {
    (sem.text.get(span.clone()))
        .filter(|text| text.len() <= SHOWN && !text.contains('\n'))
        .map(str::to_owned)
}

/// A tensor made on the CPU, as the device facts tell: made so here, not moved there, and not
/// computed from the model's (an op of both is where they met).
fn made_on_cpu(state: &State, sem: &Semantic<'_, '_>, expr: &Expr) -> Option<Fact> {
    let fact = sem.tensor_device(expr)?;
    let made = fact.device == "cpu" && fact.how == How::Created;
    (made && follows(state, sem, expr).is_none()).then_some(fact)
}

/// Two operands of one op (`a + b`, `a.matmul(&b)`): a tensor made on the CPU meeting one that
/// follows the model.
pub(in crate::rust::resolve) fn check_operands<'a>(
    state: &State,
    sem: &Semantic<'_, 'a>,
    events: &mut Vec<Event<'a>>,
    op: Op,
    lhs: &Expr,
    rhs: &Expr,
) {
    if !state.in_model {
        return;
    }
    for (made, met) in [(lhs, rhs), (rhs, lhs)] {
        if let Some(fact) = made_on_cpu(state, sem, made)
            && let Some(other) = follows(state, sem, met)
        {
            events.push(unplaced(sem, fact, op, other));
            return;
        }
    }
}

/// The table's entry of a method called on a tensor that follows the model, whose type the
/// walk did not know (`self.linear.forward(xs)?.matmul(&w)`): a method of a tensor type.
pub(in crate::rust::resolve) fn follower_method<'a>(
    state: &State,
    sem: &Semantic<'_, 'a>,
    call: &syn::ExprMethodCall,
) -> Option<&'a Entry> {
    if !state.in_model || follows(state, sem, &call.receiver).is_none() {
        return None;
    }
    tensor_method(sem, call)
}

/// The entry of a method of a tensor type named as `call`'s.
fn tensor_method<'a>(sem: &Semantic<'_, 'a>, call: &syn::ExprMethodCall) -> Option<&'a Entry> {
    let method = call.method.to_string();
    let types = &sem.cx.api.names.tensor_types;
    types.iter().find_map(|ty| sem.method(ty, &method))
}

/// `a + b` and the other arithmetic operators.
pub(in crate::rust::resolve) fn on_binary<'a>(
    state: &State,
    sem: &Semantic<'_, 'a>,
    events: &mut Vec<Event<'a>>,
    binary: &syn::ExprBinary,
) {
    if state.in_model && is_arithmetic(&binary.op) {
        let op = Op {
            shown: quote::ToTokens::to_token_stream(&binary.op).to_string(),
            span: sem.byte_range(binary.op.span()),
        };
        check_operands(state, sem, events, op, &binary.left, &binary.right);
    }
}

/// `Tensor::cat(&[&a, &b], 0)`: a listed tensor made on the CPU with one that follows.
pub(in crate::rust::resolve) fn check_list<'a>(
    state: &State,
    sem: &Semantic<'_, 'a>,
    events: &mut Vec<Event<'a>>,
    op: Op,
    list: &Expr,
) {
    if !state.in_model {
        return;
    }
    let elems = super::flow::listed(list);
    let made = elems.iter().find_map(|elem| made_on_cpu(state, sem, elem));
    let other = elems.iter().find_map(|elem| follows(state, sem, elem));
    if let (Some(fact), Some(other)) = (made, other) {
        events.push(unplaced(sem, fact, op, other));
    }
}

fn unplaced<'a>(sem: &Semantic<'_, 'a>, fact: Fact, op: Op, other: String) -> Event<'a> {
    let device_of = (!other.contains('.')).then(|| other.clone());
    Event::UnplacedTensor {
        shown: source_text(sem, &fact.origin),
        span: fact.origin,
        how: MadeOnCpu::Made,
        op: Some(op.shown),
        op_span: op.span,
        other,
        device_of,
        requires: None,
    }
}
