//! `#[device_check]` and `#[derive(Placed)]`: run-time placement checks that name the culprit.
//!
//! Use them through the runtime, as `placement::device_check` and `placement::Placed`; the
//! expansions call `::placement`.

mod device_check;
mod errors;
mod placed;

use proc_macro::TokenStream;

/// Checks, before the body runs, that every tensor among the function's arguments (`self`
/// included) is on one device, and names the function, each argument and its device when not.
///
/// Options: `expect = "cuda:0"` or `expect = <expression giving a Device>`, `skip(arg, …)`,
/// `output` (check the returned value too) and `trace` (report the call's wall time and memory
/// change per device through `tracing`). On a mismatch, a function returning `Result<_, E>`
/// with `E: From<placement::DeviceMismatch>` returns the error; any other panics at the
/// caller's location. `PLACEMENT_DEVICE_CHECK=off|warn|error` chooses at run time.
#[proc_macro_attribute]
pub fn device_check(args: TokenStream, item: TokenStream) -> TokenStream {
    device_check::expand(args.into(), item.into()).into()
}

/// Implements `placement::Placed` for a struct or enum: every field that holds tensors is
/// visited with its path (`encoder.layers[3].weight`) and moved by `to_device`; other fields
/// are skipped, and `#[placed(skip)]` skips one explicitly.
#[proc_macro_derive(Placed, attributes(placed))]
pub fn derive_placed(input: TokenStream) -> TokenStream {
    placed::expand(input.into()).into()
}
