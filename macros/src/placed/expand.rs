//! The `Placed` impl a derive generates. Fields go through autoref specialization, so a field
//! that holds no tensors compiles to nothing, and one whose tensors cannot be seen (behind a
//! lock) is a compile error at the field. The impl's bounds are what the fields need: each field
//! whose type mentions a type parameter must be `Placed` itself (so `PhantomData<T>` asks
//! nothing of `T`, and a field `X::Weight` asks `X::Weight: Placed`, not `X: Placed`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Member;
use syn::spanned::Spanned;

use super::model::{PlacedField, PlacedType, Shape};

fn segment(krate: &syn::Path, member: &Member) -> TokenStream {
    match member {
        Member::Named(ident) => {
            let name = ident.to_string().trim_start_matches("r#").to_owned();
            quote!(#krate::Segment::Field(#name))
        }
        Member::Unnamed(index) => {
            let index = index.index as usize;
            quote!(#krate::Segment::TupleField(#index))
        }
    }
}

/// Visits the field held by `value` (a reference) at `at` (a `&TensorPath`).
fn visit(field: &PlacedField, value: TokenStream, at: TokenStream) -> TokenStream {
    let visit = format_ident!("__placement_visit");
    quote_spanned! {field.ty.span()=>
        (&&__PlacementArg(#value)).placement_view().visit(#at, #visit);
    }
}

/// Hands out the tensors of the field held by `value` (a mutable reference) at `at`.
fn visit_mut(krate: &syn::Path, value: TokenStream, at: TokenStream) -> TokenStream {
    let visit = format_ident!("__placement_visit");
    quote!(#krate::__private::ArgMut(#value).placement_visit_mut(#at, #visit)?;)
}

pub(super) fn expand(model: &PlacedType) -> TokenStream {
    let krate = &model.krate;
    let input = &model.input;
    let name = &input.ident;
    let all_fields: Vec<&PlacedField> = match &model.shape {
        Shape::Struct(fields) => fields.iter().collect(),
        Shape::Enum(variants) => variants
            .iter()
            .flat_map(|v| v.fields.iter().flatten())
            .collect(),
    };
    let (impl_generics, ty_generics, declared_where) = input.generics.split_for_impl();
    let mut generics = input.generics.clone();
    for field in all_fields.iter().filter(|field| field.needs_bound) {
        let ty = &field.ty;
        generics
            .make_where_clause()
            .predicates
            .push(syn::parse_quote!(#ty: #krate::Placed));
    }
    let where_clause = &generics.where_clause;

    let path = format_ident!("__placement_path");
    let (visit_body, move_body) = match &model.shape {
        Shape::Struct(fields) => {
            let visits = fields.iter().map(|field| {
                let (member, segment) = (&field.member, segment(krate, &field.member));
                visit(field, quote!(&self.#member), quote!(&#path.join(#segment)))
            });
            let moves = fields.iter().map(|field| {
                let (member, segment) = (&field.member, segment(krate, &field.member));
                visit_mut(
                    krate,
                    quote!(&mut self.#member),
                    quote!(&#path.join(#segment)),
                )
            });
            (
                quote!(#(#visits)*),
                quote!(#(#moves)* ::core::result::Result::Ok(())),
            )
        }
        Shape::Enum(variants) => {
            let path = &path;
            let arms =
                |moving: bool| {
                    variants.iter().map(move |variant| {
                        let ident = &variant.ident;
                        let variant_name = ident.to_string();
                        let bindings: Vec<_> = (0..variant.fields.len())
                            .map(|i| format_ident!("__placement_field_{i}"))
                            .collect();
                        let pattern =
                            match (variant.fields.is_empty(), variant.named) {
                                (true, _) => quote!(Self::#ident { .. }),
                                (false, true) => {
                                    let parts = variant.fields.iter().zip(&bindings).filter_map(
                                        |(field, binding)| {
                                            let member = &field.as_ref()?.member;
                                            Some(quote!(#member: #binding))
                                        },
                                    );
                                    quote!(Self::#ident { #(#parts,)* .. })
                                }
                                (false, false) => {
                                    let parts = variant.fields.iter().zip(&bindings).map(
                                        |(field, binding)| match field {
                                            Some(_) => quote!(#binding),
                                            None => quote!(_),
                                        },
                                    );
                                    quote!(Self::#ident(#(#parts),*))
                                }
                            };
                        // A newtype variant's only field adds nothing to the path: `head.weight`.
                        let newtype = !variant.named && variant.fields.len() == 1;
                        let steps = variant.fields.iter().zip(&bindings).filter_map(
                            move |(field, binding)| {
                                let field = field.as_ref()?;
                                let in_variant =
                                    quote!(#path.join(#krate::Segment::Variant(#variant_name)));
                                let at = if newtype {
                                    quote!(&#in_variant)
                                } else {
                                    let segment = segment(krate, &field.member);
                                    quote!(&#in_variant.join(#segment))
                                };
                                Some(if moving {
                                    visit_mut(krate, quote!(#binding), at)
                                } else {
                                    visit(field, quote!(#binding), at)
                                })
                            },
                        );
                        quote!(#pattern => { #(#steps)* })
                    })
                };
            let visit_arms: Vec<_> = arms(false).collect();
            let move_arms: Vec<_> = arms(true).collect();
            (
                quote!(#[allow(unreachable_patterns)] match self { #(#visit_arms)* _ => {} }),
                quote!(#[allow(unreachable_patterns)] match self { #(#move_arms)* _ => {} } ::core::result::Result::Ok(())),
            )
        }
    };

    let visit = format_ident!("__placement_visit");
    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::Placed for #name #ty_generics #where_clause {
            fn visit_devices(
                &self,
                #path: &#krate::TensorPath<'_>,
                #visit: &mut dyn FnMut(&#krate::TensorPath<'_>, #krate::Device),
            ) {
                #[allow(unused_imports)]
                use #krate::__private::{
                    Arg as __PlacementArg, ViaDerived as _, ViaLock as _, ViaOther as _, ViaPlaced as _,
                    View as _,
                };
                #visit_body
            }

            fn visit_tensors_mut(
                &mut self,
                #path: &#krate::TensorPath<'_>,
                #visit: &mut dyn FnMut(&#krate::TensorPath<'_>, &mut dyn #krate::Movable) -> #krate::Result<()>,
            ) -> #krate::Result<()> {
                #[allow(unused_imports)]
                use #krate::__private::{ViaOtherMut as _, ViaPlacedMut as _};
                #move_body
            }
        }

        // Whatever the type arguments, so that a value whose impl above does not apply is a
        // compile error where `#[device_check]` meets it, not a silent skip.
        #[automatically_derived]
        impl #impl_generics #krate::__private::Derived for #name #ty_generics #declared_where {}
    }
}
