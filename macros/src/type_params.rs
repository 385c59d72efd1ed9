//! What a type says about generics: which type parameters it mentions, whether it holds an
//! `impl Trait`, and which parameters are callables (bounded by `Fn`, `FnMut` or `FnOnce`),
//! whose values are opaque and hold no tensor `Placed` can see.

use syn::visit::Visit;
use syn::{GenericParam, Generics, Ident, Type, TypeParamBound, WherePredicate};

/// Whether `bounds` name `Fn`, `FnMut` or `FnOnce`.
fn callable<'a>(mut bounds: impl Iterator<Item = &'a TypeParamBound>) -> bool {
    bounds.any(|bound| match bound {
        TypeParamBound::Trait(bound) => bound
            .path
            .segments
            .last()
            .is_some_and(|segment| ["Fn", "FnMut", "FnOnce"].iter().any(|f| segment.ident == f)),
        _ => false,
    })
}

/// The type parameters of `generics`, each with whether it is a callable.
pub(crate) fn type_params(generics: &Generics) -> Vec<(Ident, bool)> {
    generics
        .params
        .iter()
        .filter_map(|param| match param {
            GenericParam::Type(param) => {
                let in_where = generics.where_clause.iter().flat_map(|clause| {
                    clause
                        .predicates
                        .iter()
                        .filter_map(|predicate| match predicate {
                            WherePredicate::Type(predicate)
                                if is_param(&predicate.bounded_ty, &param.ident) =>
                            {
                                Some(predicate.bounds.iter())
                            }
                            _ => None,
                        })
                });
                let is_callable =
                    callable(param.bounds.iter()) || in_where.into_iter().any(callable);
                Some((param.ident.clone(), is_callable))
            }
            _ => None,
        })
        .collect()
}

/// Whether `ty` is the type parameter `param` itself.
pub(crate) fn is_param(ty: &Type, param: &Ident) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none() && path.path.is_ident(param))
}

/// What `ty` says about generics.
#[derive(Default)]
pub(crate) struct Mentions {
    /// Type parameters (of those asked about) that appear in it.
    pub(crate) params: Vec<Ident>,
    /// Whether it holds an `impl Trait` that is not a callable.
    pub(crate) opaque: bool,
    /// Whether it holds an `impl Trait` at all.
    pub(crate) impl_trait: bool,
}

impl Mentions {
    pub(crate) fn of(ty: &Type, params: &[(Ident, bool)]) -> Mentions {
        struct Finder<'a> {
            params: &'a [(Ident, bool)],
            found: Mentions,
        }
        impl<'ast> Visit<'ast> for Finder<'_> {
            fn visit_type_path(&mut self, path: &'ast syn::TypePath) {
                if let Some(first) = path.path.segments.first() {
                    for (param, _) in self.params {
                        if first.ident == *param
                            && path.qself.is_none()
                            && !self.found.params.contains(param)
                        {
                            self.found.params.push(param.clone());
                        }
                    }
                }
                syn::visit::visit_type_path(self, path);
            }

            fn visit_type_impl_trait(&mut self, node: &'ast syn::TypeImplTrait) {
                self.found.impl_trait = true;
                self.found.opaque |= !callable(node.bounds.iter());
                syn::visit::visit_type_impl_trait(self, node);
            }
        }
        let mut finder = Finder {
            params,
            found: Mentions::default(),
        };
        finder.visit_type(ty);
        finder.found
    }

    /// Whether a value of the type may hold tensors only a `Placed` bound can show: it mentions
    /// a type parameter that is not a callable, or an opaque `impl Trait`.
    pub(crate) fn hides_tensors(&self, params: &[(Ident, bool)]) -> bool {
        self.opaque
            || self.params.iter().any(|mentioned| {
                params
                    .iter()
                    .any(|(param, callable)| param == mentioned && !callable)
            })
    }
}
