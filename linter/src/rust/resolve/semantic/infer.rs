//! Types, as far as placement needs them: the canonical name of a type a table knows (or a
//! type of this crate), and the containers around it (slices, `Vec`s, iterators, `Option`,
//! `Result`, tuples), so that a receiver is known through a loop, a closure parameter of an
//! iterator adaptor, or a pattern (`for c in contexts`, `.for_each(|c| ..)`,
//! `if let Some(ctx) = first`, `if let Device::Cuda(cuda) = device`).

use syn::{Expr, Pat, Type};

use super::Semantic;
use super::scope::{Resolution, Var};
use super::syntax::{INFERENCE_DEPTH, idents, last_name};
use crate::api::Role;
use crate::rust::model::Resolved;

/// A type, through the containers that hold it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::rust::resolve) enum Ty {
    /// A type by its canonical path (`cudarc::driver::CudaContext`).
    Named(String),
    /// Values of the type one at a time: a slice, an array, a `Vec`, an iterator.
    Seq(Box<Ty>),
    Option(Box<Ty>),
    Result(Box<Ty>),
    Tuple(Vec<Option<Ty>>),
}

impl Ty {
    pub(in crate::rust::resolve) fn named(&self) -> Option<&str> {
        match self {
            Ty::Named(name) => Some(name),
            _ => None,
        }
    }

    /// The type inside every `Option`, `Result` and sequence around it.
    pub(in crate::rust::resolve) fn innermost(&self) -> &Ty {
        match self {
            Ty::Option(inner) | Ty::Result(inner) | Ty::Seq(inner) => inner.innermost(),
            other => other,
        }
    }

    /// The type inside `Option`/`Result` (after `?`, `.unwrap()`); others are their own.
    fn unwrapped(self) -> Ty {
        match self {
            Ty::Option(inner) | Ty::Result(inner) => *inner,
            other => other,
        }
    }

    /// The type of one element of a sequence.
    pub(in crate::rust::resolve) fn element(&self) -> Option<Ty> {
        match self {
            Ty::Seq(element) => Some((**element).clone()),
            _ => None,
        }
    }
}

/// Smart pointers and cells whose contents are used through them (`Lazy` and `LazyLock` deref
/// to their value).
const TRANSPARENT: &[&str] = &["Arc", "Rc", "Box", "Cow", "Lazy", "LazyLock", "LazyCell"];
/// Collections of values of their first type argument.
const SEQUENCES: &[&str] = &[
    "Vec",
    "VecDeque",
    "HashSet",
    "BTreeSet",
    "LinkedList",
    "BinaryHeap",
];

/// Methods of an iterator or slice that give a sequence of the same values.
const SAME_SEQUENCE: &[&str] = &[
    "iter",
    "iter_mut",
    "into_iter",
    "drain",
    "rev",
    "skip",
    "take",
    "filter",
    "peekable",
    "cloned",
    "copied",
    "chain",
    "by_ref",
    "skip_while",
    "take_while",
    "step_by",
    "values",
    "into_values",
    "values_mut",
];
/// Methods that give one of the values.
const ONE_OF: &[&str] = &[
    "first",
    "last",
    "get",
    "get_mut",
    "pop",
    "next",
    "nth",
    "find",
    "min_by_key",
    "max_by_key",
    "first_mut",
    "last_mut",
    "next_back",
];
/// Iterator adaptors whose closure's first parameter is an element.
pub(in crate::rust::resolve) const TAKES_ELEMENT: &[&str] = &[
    "for_each",
    "map",
    "filter",
    "filter_map",
    "any",
    "all",
    "find",
    "position",
    "flat_map",
    "inspect",
    "try_for_each",
    "find_map",
    "take_while",
    "skip_while",
    "map_while",
    "partition",
    "retain",
];

impl Semantic<'_, '_> {
    /// The type of a written type.
    pub(in crate::rust::resolve) fn type_of(&self, ty: &Type) -> Option<Ty> {
        self.type_named(ty, &|path| match self.resolve(path) {
            Resolution::Path { path, .. } => Some(path.join("::")),
            _ => None,
        })
    }

    /// The type written for the member `name` of the workspace's type `owner` in another file
    /// ([`crate::rust::model::Model::member`]), its names resolved where it is written. The
    /// file's own structs and impls are read from its syntax tree instead ([`Semantic::field`],
    /// [`Semantic::own_method`]), which also follows members typed by its other structs; a
    /// summary keeps only members whose types name a type of the API tables.
    pub(in crate::rust::resolve) fn member_type(&self, owner: &str, name: &str) -> Option<Ty> {
        let (written, krate, module) = self.cx.model.member(owner, name)?;
        let ty: Type = syn::parse_str(written).ok()?;
        self.type_named(&ty, &|path| match self.cx.model.resolve(
            self.cx.api,
            krate,
            module,
            &idents(path),
        ) {
            Resolved::Path { path, .. } => Some(path.join("::")),
            Resolved::Unknown => None,
        })
    }

    /// [`Semantic::type_of`], with `resolve` giving the full path a path names.
    fn type_named(&self, ty: &Type, resolve: &dyn Fn(&syn::Path) -> Option<String>) -> Option<Ty> {
        let type_of = |ty: &Type| self.type_named(ty, resolve);
        match ty {
            Type::Reference(reference) => type_of(&reference.elem),
            Type::Paren(paren) => type_of(&paren.elem),
            Type::Group(group) => type_of(&group.elem),
            Type::Slice(slice) => Some(Ty::Seq(Box::new(type_of(&slice.elem)?))),
            Type::Array(array) => Some(Ty::Seq(Box::new(type_of(&array.elem)?))),
            Type::Tuple(tuple) => {
                let elems: Vec<Option<Ty>> = tuple.elems.iter().map(&type_of).collect();
                elems
                    .iter()
                    .any(Option::is_some)
                    .then_some(Ty::Tuple(elems))
            }
            // `Self::Context`: the associated type of the impl's type, written in an impl of it.
            Type::Path(path)
                if path.qself.is_none()
                    && path.path.segments.len() == 2
                    && path.path.segments[0].ident == "Self" =>
            {
                let Some(Ty::Named(owner)) = &self.self_type else {
                    return None;
                };
                self.member_type(owner, &path.path.segments[1].ident.to_string())
            }
            Type::Path(path) if path.qself.is_none() => {
                let last = path.path.segments.last()?;
                let name = last.ident.to_string();
                let first_argument = || match &last.arguments {
                    syn::PathArguments::AngleBracketed(args) => {
                        args.args.iter().find_map(|arg| match arg {
                            syn::GenericArgument::Type(inner) => type_of(inner),
                            _ => None,
                        })
                    }
                    _ => None,
                };
                if TRANSPARENT.contains(&name.as_str()) {
                    return first_argument();
                }
                if SEQUENCES.contains(&name.as_str()) {
                    return Some(Ty::Seq(Box::new(first_argument()?)));
                }
                match name.as_str() {
                    "Option" => return Some(Ty::Option(Box::new(first_argument()?))),
                    "Result" => return Some(Ty::Result(Box::new(first_argument()?))),
                    _ => {}
                }
                let worth_resolving = self.cx.api.mentions_type(&name)
                    || self.structs.contains(&name)
                    || self.cx.model.aliases.contains(&name)
                    || self.cx.model.member_owners.contains(&name);
                if !worth_resolving {
                    return None;
                }
                resolve(&path.path).map(Ty::Named)
            }
            _ => None,
        }
    }

    /// What an expression is known to be.
    pub(in crate::rust::resolve) fn infer(&self, expr: &Expr) -> Option<Ty> {
        self.infer_within(expr, INFERENCE_DEPTH)
    }

    fn infer_within(&self, expr: &Expr, depth: usize) -> Option<Ty> {
        let depth = depth.checked_sub(1)?;
        let infer = |expr: &Expr| self.infer_within(expr, depth);
        match expr {
            Expr::Reference(inner) => infer(&inner.expr),
            Expr::Paren(inner) => infer(&inner.expr),
            Expr::Group(inner) => infer(&inner.expr),
            Expr::Try(inner) => infer(&inner.expr).map(Ty::unwrapped),
            Expr::Path(path) if path.qself.is_none() => {
                if let Some(ident) = path.path.get_ident() {
                    let name = ident.to_string();
                    if name == "self" {
                        return self.self_type.clone();
                    }
                    if let Some((var, _)) = self.scopes.var(&name) {
                        return var.ty.clone();
                    }
                }
                let (_, entry) = self.known_path(&path.path)?;
                entry.returns.clone().map(Ty::Named)
            }
            Expr::Call(call) => {
                let Expr::Path(func) = &*call.func else {
                    return None;
                };
                let first = || call.args.first().and_then(&infer);
                match last_name(&func.path).as_str() {
                    "Some" => return Some(Ty::Option(Box::new(first()?))),
                    "Ok" => return Some(Ty::Result(Box::new(first()?))),
                    // `Arc::new(x)`, `Box::new(x)`: the value inside.
                    "new" | "from" => {
                        let segments = &func.path.segments;
                        let wraps = segments.len() >= 2
                            && ["Arc", "Rc", "Box"]
                                .iter()
                                .any(|name| segments[segments.len() - 2].ident == name);
                        if wraps {
                            return first();
                        }
                    }
                    _ => {}
                }
                let (_, entry) = self.known_path(&func.path)?;
                entry.returns.clone().map(Ty::Named)
            }
            Expr::MethodCall(call) => {
                let method = call.method.to_string();
                let receiver = infer(&call.receiver)?;
                match method.as_str() {
                    "unwrap" | "expect" | "unwrap_or_default" | "unwrap_or" | "unwrap_or_else"
                    | "unwrap_unchecked" => return Some(receiver.unwrapped()),
                    "clone" | "to_owned" | "as_ref" | "as_mut" | "borrow" | "borrow_mut"
                    | "as_deref" | "deref" => return Some(receiver),
                    _ => {}
                }
                match receiver {
                    Ty::Named(ty) => match self.method(&ty, &method) {
                        Some(entry) => entry.returns.clone().map(Ty::Named),
                        None => self
                            .own_method(&ty, &method)
                            .cloned()
                            .or_else(|| self.member_type(&ty, &method)),
                    },
                    Ty::Seq(element) => {
                        let method = method.as_str();
                        if SAME_SEQUENCE.contains(&method) {
                            Some(Ty::Seq(element))
                        } else if ONE_OF.contains(&method) {
                            Some(Ty::Option(element))
                        } else if method == "enumerate" {
                            Some(Ty::Seq(Box::new(Ty::Tuple(vec![None, Some(*element)]))))
                        } else if method == "zip" {
                            let other = call.args.first().and_then(|arg| infer(arg)?.element());
                            Some(Ty::Seq(Box::new(Ty::Tuple(vec![Some(*element), other]))))
                        } else {
                            None
                        }
                    }
                    Ty::Option(inner) => match method.as_str() {
                        "take" | "cloned" | "copied" | "or" | "or_else" | "filter" | "replace" => {
                            Some(Ty::Option(inner))
                        }
                        "iter" | "into_iter" => Some(Ty::Seq(inner)),
                        _ => None,
                    },
                    Ty::Result(inner) => match method.as_str() {
                        "ok" => Some(Ty::Option(inner)),
                        "map_err" | "or_else" => Some(Ty::Result(inner)),
                        _ => None,
                    },
                    Ty::Tuple(_) => None,
                }
            }
            Expr::Field(field) => {
                let owner = infer(&field.base)?;
                match &field.member {
                    syn::Member::Named(name) => {
                        let (owner, name) = (owner.named()?, name.to_string());
                        self.field(owner, &name)
                            .cloned()
                            .or_else(|| self.member_type(owner, &name))
                    }
                    syn::Member::Unnamed(index) => match owner {
                        Ty::Tuple(elems) => elems.get(index.index as usize).cloned().flatten(),
                        _ => None,
                    },
                }
            }
            Expr::Index(index) => infer(&index.expr)?.element(),
            Expr::Tuple(tuple) => {
                let elems: Vec<Option<Ty>> = tuple.elems.iter().map(&infer).collect();
                elems
                    .iter()
                    .any(Option::is_some)
                    .then_some(Ty::Tuple(elems))
            }
            Expr::Array(array) => Some(Ty::Seq(Box::new(infer(array.elems.first()?)?))),
            _ => None,
        }
    }

    /// Binds the names of a pattern matched against a value of type `ty`, with the types the
    /// pattern gives them: `Some(x)` of an `Option<T>`, `(a, b)` of a tuple, `&x`, `x: T`, and
    /// variants that tables say hold a type (`Device::Cuda(cuda)`).
    pub(in crate::rust::resolve) fn bind_pattern(&mut self, pat: &Pat, ty: Option<Ty>) {
        match pat {
            Pat::Ident(ident) => {
                self.scopes
                    .bind_var(&ident.ident.to_string(), Var::of_type(ty.clone()));
                if let Some((_, sub)) = &ident.subpat {
                    self.bind_pattern(sub, ty);
                }
            }
            Pat::Type(typed) => {
                let ty = self.type_of(&typed.ty).or(ty);
                self.bind_pattern(&typed.pat, ty);
            }
            Pat::Reference(reference) => self.bind_pattern(&reference.pat, ty),
            Pat::Paren(paren) => self.bind_pattern(&paren.pat, ty),
            Pat::Tuple(tuple) => {
                let types = match ty {
                    Some(Ty::Tuple(types)) if types.len() == tuple.elems.len() => types,
                    _ => vec![None; tuple.elems.len()],
                };
                for (elem, ty) in tuple.elems.iter().zip(types) {
                    self.bind_pattern(elem, ty);
                }
            }
            Pat::TupleStruct(tuple) => {
                let inner = match (last_name(&tuple.path).as_str(), ty) {
                    ("Some", Some(Ty::Option(inner))) | ("Ok", Some(Ty::Result(inner))) => {
                        Some(*inner)
                    }
                    _ => self.variant_payload(&tuple.path),
                };
                let single = tuple.elems.len() == 1;
                for elem in &tuple.elems {
                    self.bind_pattern(elem, if single { inner.clone() } else { None });
                }
            }
            other => {
                let mut names = Vec::new();
                super::syntax::pattern_names(other, &mut names);
                names.iter().for_each(|name| self.scopes.bind_unknown(name));
            }
        }
    }

    /// The type a table says an enum variant holds.
    fn variant_payload(&self, path: &syn::Path) -> Option<Ty> {
        let (_, entry) = self.known_path(path)?;
        match &entry.role {
            Role::Variant { payload } => Some(Ty::Named(payload.clone())),
            _ => None,
        }
    }
}
