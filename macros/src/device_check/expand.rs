//! The code `#[device_check]` generates: a check before the body (and after it, with `output`)
//! that costs a few comparisons when devices agree; the message is built only on failure.
//!
//! Every checked value goes through autoref specialization once, into a view (`Visit` of a
//! `Placed` value, or `Skip`), at the value's own span, so that a value `#[device_check]` cannot
//! look into is a compile error there. The views' kinds are or-ed at compile time: a function
//! whose checked values are all skipped does not compile.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{Ident, Path};

use super::model::{CheckedFn, Expected};
use placement_device_name::DeviceName;

fn expected_tokens(krate: &Path, expected: &Option<Expected>) -> TokenStream {
    match expected {
        None => quote!(::core::option::Option::None),
        Some(Expected::Name(DeviceName::Cpu)) => {
            quote!(::core::option::Option::Some(#krate::Device::Cpu))
        }
        Some(Expected::Name(DeviceName::Cuda(ordinal))) => {
            quote!(::core::option::Option::Some(#krate::Device::Cuda(#ordinal)))
        }
        Some(Expected::Expr(expr)) => quote!(#krate::__private::expected(#expr)),
    }
}

/// `return <error as the function's return value>`: `Err` where the return type allows, a
/// panic at the caller's location otherwise.
fn fail(function: &CheckedFn, error: &Ident) -> TokenStream {
    let krate = &function.krate;
    match function.nameable_return() {
        Some(ty) => quote! {
            #[allow(unused_imports)]
            use #krate::__private::{Panics as _, ReturnsError as _};
            return #krate::__private::Ret::<#ty>::new().fail(#error);
        },
        None => quote!(#krate::__private::panic_mismatch(#error)),
    }
}

/// The function's name in messages: `Type::method` for methods.
fn name_tokens(function: &CheckedFn) -> TokenStream {
    let (krate, name) = (&function.krate, &function.name);
    if function.has_receiver {
        quote!(#krate::__private::method_name::<Self>(#name))
    } else {
        quote!(::std::string::String::from(#name))
    }
}

/// One checked value: its name in messages and the variable holding its view.
struct Checked {
    name: String,
    view: Ident,
}

/// Checks `values` against `expected`, and on disagreement builds the report and fails.
fn check(
    function: &CheckedFn,
    values: &[Checked],
    expected: TokenStream,
    in_result: bool,
) -> TokenStream {
    let krate = &function.krate;
    let checker = format_ident!("__placement_checker");
    let report = format_ident!("__placement_report");
    let error = format_ident!("__placement_error");
    let observe = values.iter().map(|Checked { name, view }| {
        quote! {
            #view.visit(&#krate::TensorPath::root(#name), &mut |_, device| #checker.observe(device));
        }
    });
    let record = values
        .iter()
        .map(|Checked { name, view }| quote!(#report.argument(#name, &#view);));
    let arguments = function.checked.iter().map(|binding| binding.name());
    let name = name_tokens(function);
    let fail = fail(function, &error);
    quote! {
        #[allow(unused_mut)]
        let mut #checker = #krate::__private::Checker::new(#expected);
        #(#observe)*
        if !#checker.ok() {
            #[allow(unused_mut)]
            let mut #report = #krate::__private::Report::new(#name, &[#(#arguments),*], #expected, #in_result);
            #(#record)*
            let #error = #report.finish();
            if __placement_mode == #krate::CheckMode::Warn {
                #krate::__private::warn_once(#error);
            } else {
                #fail
            }
        }
    }
}

pub(super) fn expand(function: &CheckedFn) -> TokenStream {
    let krate = &function.krate;
    let item = &function.item;
    let (attrs, vis, sig, block) = (&item.attrs, &item.vis, &item.sig, &item.block);
    let inner_attrs = &function.inner_attrs;
    let enabled = quote!(#krate::__private::ENABLED && __placement_mode != #krate::CheckMode::Off);

    // A generic argument is looked into only through a `Placed` bound: assert that it has one.
    let generic = function.generic.iter().map(|binding| {
        let ident = &binding.ident;
        quote_spanned!(ident.span()=> #krate::__private::generic_argument(&#ident);)
    });
    let values: Vec<Checked> = function
        .checked
        .iter()
        .enumerate()
        .map(|(index, binding)| Checked {
            name: binding.name(),
            view: format_ident!("__placement_view_{index}"),
        })
        .collect();
    let views = function
        .checked
        .iter()
        .zip(&values)
        .map(|(binding, Checked { view, .. })| {
            let ident = &binding.ident;
            quote_spanned!(ident.span()=> let #view = (&&__PlacementArg(&#ident)).placement_view();)
        });
    let kinds = values
        .iter()
        .map(|Checked { view, .. }| quote!(| #view.kind()));
    let inputs = check(function, &values, quote!(__placement_expected), false);
    let trace = function.trace.then(|| {
        let name = &function.name;
        quote!(let _placement_trace = #krate::__private::Trace::start(#name);)
    });
    let track_caller = function.track_caller.then(|| quote!(#[track_caller]));
    // A function that checks nothing is reported at its name.
    let assert_checks =
        quote_spanned!(sig.ident.span()=> __placement_assert_checks(__placement_kinds););
    let stmts = &block.stmts;

    let body = if function.output {
        let run = if sig.asyncness.is_some() {
            quote!(async move #block.await)
        } else {
            let annotation = function.nameable_return().map(|ty| quote!(-> #ty));
            // `FnOnce`, so that the body may give out what it borrows from its arguments.
            quote!(#krate::__private::run_once(move || #annotation #block))
        };
        let result = Checked {
            name: "result".to_owned(),
            view: format_ident!("__placement_result_view"),
        };
        let result_view = &result.view;
        let outputs = check(
            function,
            std::slice::from_ref(&result),
            quote!(__placement_inputs),
            true,
        );
        quote! {
            let __placement_result = #run;
            let #result_view = (&&__PlacementArg(&__placement_result)).placement_view();
            let __placement_kinds = __placement_kinds | #result_view.kind();
            #assert_checks
            if #enabled {
                #outputs
            }
            __placement_result
        }
    } else {
        quote! {
            #assert_checks
            #(#stmts)*
        }
    };

    let expected_value = expected_tokens(krate, &function.expected);
    quote! {
        #(#attrs)*
        #track_caller
        #vis #sig {
            #(#inner_attrs)*
            #trace
            let __placement_mode = if #krate::__private::ENABLED {
                #krate::__private::mode()
            } else {
                #krate::CheckMode::Off
            };
            #[allow(unused_imports)]
            use #krate::__private::{
                Arg as __PlacementArg, assert_checks as __placement_assert_checks, ViaDerived as _,
                ViaLock as _, ViaOther as _, ViaPlaced as _, View as _,
            };
            #(#generic)*
            #(#views)*
            let __placement_kinds = #krate::__private::ChecksNothing #(#kinds)*;
            #[allow(unused_variables, unused_mut)]
            let mut __placement_inputs: ::core::option::Option<#krate::Device> = ::core::option::Option::None;
            if #enabled {
                let __placement_expected: ::core::option::Option<#krate::Device> = #expected_value;
                #inputs
                __placement_inputs = __placement_expected.or(__placement_checker.device());
            }
            #body
        }
    }
}
