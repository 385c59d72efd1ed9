//! The `Placed` impl a derive generates. Fields go through autoref specialization, so a field
//! that holds no tensors compiles to nothing.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Member, visit::Visit};

use super::model::{PlacedField, PlacedType, Shape};

fn segment(member: &Member) -> TokenStream {
    match member {
        Member::Named(ident) => {
            let name = ident.to_string().trim_start_matches("r#").to_owned();
            quote!(::placement::Segment::Field(#name))
        }
        Member::Unnamed(index) => {
            let index = index.index as usize;
            quote!(::placement::Segment::TupleField(#index))
        }
    }
}

/// Whether a type mentions a generic parameter.
fn mentions(ty: &syn::Type, param: &syn::Ident) -> bool {
    struct Finder<'a>(&'a syn::Ident, bool);
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_ident(&mut self, ident: &'ast syn::Ident) {
            self.1 |= ident == self.0;
        }
    }
    let mut finder = Finder(param, false);
    finder.visit_type(ty);
    finder.1
}

pub(super) fn expand(model: &PlacedType) -> TokenStream {
    let input = &model.input;
    let name = &input.ident;
    let all_fields: Vec<&PlacedField> = match &model.shape {
        Shape::Struct(fields) => fields.iter().collect(),
        Shape::Enum(variants) => variants
            .iter()
            .flat_map(|v| v.fields.iter().flatten())
            .collect(),
    };
    let mut generics = input.generics.clone();
    let params: Vec<syn::Ident> = generics
        .type_params()
        .map(|param| param.ident.clone())
        .collect();
    for param in params {
        if all_fields.iter().any(|field| mentions(&field.ty, &param)) {
            generics
                .make_where_clause()
                .predicates
                .push(syn::parse_quote!(#param: ::placement::Placed));
        }
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    let path = format_ident!("__placement_path");
    let visit = format_ident!("__placement_visit");
    let device = format_ident!("__placement_device");
    let (visit_body, move_body) = match &model.shape {
        Shape::Struct(fields) => {
            let visits = fields.iter().map(|field| {
                let (member, segment) = (&field.member, segment(&field.member));
                quote!(::placement::__private::Arg(&self.#member).placement_visit(&#path.join(#segment), #visit);)
            });
            let moves = fields.iter().map(|field| {
                let (member, segment) = (&field.member, segment(&field.member));
                quote!(::placement::__private::ArgMut(&mut self.#member).placement_move(&#path.join(#segment), #device)?;)
            });
            (
                quote!(#(#visits)*),
                quote!(#(#moves)* ::core::result::Result::Ok(())),
            )
        }
        Shape::Enum(variants) => {
            let (path, visit, device) = (&path, &visit, &device);
            let arms = |moving: bool| {
                variants.iter().map(move |variant| {
                    let ident = &variant.ident;
                    let variant_name = ident.to_string();
                    let bindings: Vec<_> = (0..variant.fields.len()).map(|i| format_ident!("__placement_field_{i}")).collect();
                    let pattern = match (variant.fields.is_empty(), variant.named) {
                        (true, _) => quote!(Self::#ident { .. }),
                        (false, true) => {
                            let parts = variant.fields.iter().zip(&bindings).filter_map(|(field, binding)| {
                                let member = &field.as_ref()?.member;
                                Some(quote!(#member: #binding))
                            });
                            quote!(Self::#ident { #(#parts,)* .. })
                        }
                        (false, false) => {
                            let parts = variant.fields.iter().zip(&bindings).map(|(field, binding)| match field {
                                Some(_) => quote!(#binding),
                                None => quote!(_),
                            });
                            quote!(Self::#ident(#(#parts),*))
                        }
                    };
                    // A newtype variant's only field adds nothing to the path: `head.weight`.
                    let newtype = !variant.named && variant.fields.len() == 1;
                    let steps = variant.fields.iter().zip(&bindings).filter_map(move |(field, binding)| {
                        let in_variant = quote!(#path.join(::placement::Segment::Variant(#variant_name)));
                        let at = if newtype {
                            quote!(&#in_variant)
                        } else {
                            let segment = segment(&field.as_ref()?.member);
                            quote!(&#in_variant.join(#segment))
                        };
                        Some(if moving {
                            quote!(::placement::__private::ArgMut(#binding).placement_move(#at, #device)?;)
                        } else {
                            quote!(::placement::__private::Arg(#binding).placement_visit(#at, #visit);)
                        })
                    });
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

    quote! {
        #[automatically_derived]
        impl #impl_generics ::placement::Placed for #name #ty_generics #where_clause {
            fn visit_devices(
                &self,
                #path: &::placement::TensorPath<'_>,
                #visit: &mut dyn FnMut(&::placement::TensorPath<'_>, ::placement::Device),
            ) {
                #[allow(unused_imports)]
                use ::placement::__private::{ViaOther as _, ViaPlaced as _};
                #visit_body
            }

            fn move_tensors(
                &mut self,
                #path: &::placement::TensorPath<'_>,
                #device: &::placement::Device,
            ) -> ::placement::Result<()> {
                #[allow(unused_imports)]
                use ::placement::__private::{ViaOtherMut as _, ViaPlacedMut as _};
                #move_body
            }
        }
    }
}
