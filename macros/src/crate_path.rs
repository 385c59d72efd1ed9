//! The `crate = "..."` option of both macros, as serde's: where the runtime is, for a dependency
//! renamed in `Cargo.toml` (`pl = { package = "placement" }` → `crate = "pl"`).

use syn::spanned::Spanned;
use syn::{Expr, Lit, Path};

/// `::placement`, where the runtime is unless the option says otherwise.
pub(crate) fn default() -> Path {
    syn::parse_quote!(::placement)
}

/// The path in `crate = "path"` (or `crate = path`).
pub(crate) fn parse(value: &Expr) -> syn::Result<Path> {
    match value {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(text),
            ..
        }) => text.parse::<Path>().map_err(|_| {
            syn::Error::new_spanned(
                text,
                format!(
                    "`crate` takes the path the runtime is known by, such as \"::pl\"; {:?} is not a path",
                    text.value()
                ),
            )
        }),
        Expr::Path(path) if path.qself.is_none() && path.attrs.is_empty() => Ok(path.path.clone()),
        other => Err(syn::Error::new(
            other.span(),
            "`crate` takes the path the runtime is known by, such as `crate = \"::pl\"`",
        )),
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    /// Every path the expansions name goes through the option: none is `::placement`.
    fn assert_renamed(expansion: proc_macro2::TokenStream) {
        let text = expansion.to_string();
        assert!(text.contains("pl :: __private ::"), "{text}");
        assert!(!text.contains("placement ::"), "{text}");
        assert!(!text.contains("compile_error"), "{text}");
    }

    #[test]
    fn device_check_names_the_runtime_by_the_option() {
        assert_renamed(crate::device_check::expand(
            quote!(crate = "pl", expect = "cuda:0", output, trace),
            quote!(
                fn f(&self, x: &pl::Tensor) -> pl::Result<pl::Tensor> {
                    Ok(x.clone())
                }
            ),
        ));
        assert_renamed(crate::device_check::expand(
            quote!(crate = pl, expect = self.device),
            quote!(
                fn g<T: pl::Placed>(x: T, (a, b): (pl::Tensor, pl::Tensor)) -> usize {
                    0
                }
            ),
        ));
    }

    #[test]
    fn derive_names_the_runtime_by_the_option() {
        assert_renamed(crate::placed::expand(quote! {
            #[placed(crate = "pl")]
            struct Model<T> { weight: pl::Tensor, rest: Vec<T>, #[placed(skip)] name: String }
        }));
        assert_renamed(crate::placed::expand(quote! {
            #[placed(crate = "pl")]
            enum Head { Dense(pl::Tensor), Tied { weight: pl::Tensor, scale: f32 }, Identity }
        }));
    }
}
