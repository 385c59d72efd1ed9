//! Defaults: a `Default` implementation whose value is the device (`impl Default for Dispatch {
//! fn default() -> Self { Dispatch(WgpuDevice::default()) } }`), or a match arm on a default
//! variant, that forwards to the library's own default (`Device::default()`,
//! `WgpuDevice::DefaultDevice`) defines or translates a default: it is not a choice, and not
//! flagged. A `Default` that chooses a GPU (`cuda_if_available()`, `new_cuda(0)`), or one that
//! fills a device field among others (`Self { device: B::Device::default(), .. }` of a
//! training config), chooses for every user of the type, and is.

use super::FnInfo;
use crate::analysis::ApiUse;
use crate::api::Role;
use crate::rust::resolve::semantic::syntax::last_name;

#[derive(Debug, Default)]
pub(in crate::rust::resolve) struct State {
    /// Inside `impl Default for T { fn default() }`.
    defining_default: bool,
    /// Inside a match arm that matches a default (`DeviceKind::DefaultDevice =>`).
    pub(in crate::rust::resolve) in_default_arm: bool,
}

impl State {
    pub(super) fn for_function(info: &FnInfo<'_>) -> State {
        State {
            defining_default: info.defines_default,
            in_default_arm: false,
        }
    }
}

/// Whether a `fn default` builds a value of named fields (`Self { device, epochs, .. }`): a
/// type that holds a device among other things, not a device.
pub(in crate::rust::resolve) fn builds_fields(block: &syn::Block) -> bool {
    matches!(block.stmts.last(), Some(syn::Stmt::Expr(syn::Expr::Struct(built), None))
        if built.fields.len() > 1 || built.rest.is_some())
}

/// Whether a use forwards to a default rather than choosing: its name says default.
fn is_default(use_: &ApiUse<'_>) -> bool {
    use_.shown
        .rsplit("::")
        .next()
        .is_some_and(|last| last.to_lowercase().contains("default"))
}

/// Whether an implicit device here defines or translates a default rather than choosing one.
pub(super) fn vetoes(state: &State, use_: &ApiUse<'_>) -> bool {
    matches!(use_.entry.role, Role::ImplicitDevice { .. })
        && (state.defining_default || state.in_default_arm)
        && is_default(use_)
}

/// A match arm: whether it matches a default variant; returns the outer value to restore.
pub(super) fn on_arm(state: &mut State, arm: &syn::Arm) -> bool {
    std::mem::replace(&mut state.in_default_arm, matches_default(&arm.pat))
}

/// Whether a pattern names a default variant (`DeviceKind::DefaultDevice`, `DeviceIndex::Default`).
fn matches_default(pat: &syn::Pat) -> bool {
    let path = match pat {
        syn::Pat::Path(path) => &path.path,
        syn::Pat::TupleStruct(tuple) => &tuple.path,
        syn::Pat::Struct(strukt) => &strukt.path,
        syn::Pat::Or(or) => return or.cases.iter().any(matches_default),
        _ => return false,
    };
    last_name(path).to_lowercase().contains("default")
}
