//! The current context: a function that makes a context current itself (`bind_to_thread`,
//! `set_current`, or a call that binds the device it opens or is given: `CudaDevice::new(i)`,
//! `CudaBlas::new(device)`) has chosen the device for what follows in it, so a later use of "whatever is
//! current" is its own choice. A private helper that uses the current context without binding
//! one is right when every caller in the crate binds one before calling it: each such use names
//! its helper, and once every file is walked, the files of the crate that mention a helper are
//! walked again to record, for each call of it, whether its caller had bound a context (see
//! [`crate::diagnostic::Requirement`]).

use super::FnInfo;
use crate::analysis::{ApiUse, CallFact, Event};
use crate::api::Role;
use crate::rust::resolve::semantic::Semantic;

#[derive(Debug, Default)]
pub(in crate::rust::resolve) struct State {
    /// Whether the current function made a context current so far.
    binds: bool,
    /// The current function's name, when it is not public (only its crate can call it).
    helper: Option<String>,
}

impl State {
    pub(super) fn for_function(info: &FnInfo<'_>) -> State {
        State {
            binds: false,
            helper: (!info.public).then(|| info.name.clone()),
        }
    }
}

/// Marks a use made after the function bound a context, or names the helper it is in.
pub(super) fn on_api_use<'a>(state: &mut State, use_: ApiUse<'a>) -> ApiUse<'a> {
    let role = &use_.entry.role;
    let after_bind = state.binds;
    let helper = (*role == Role::CurrentDeviceUser && !after_bind)
        .then(|| state.helper.clone())
        .flatten();
    state.binds |= *role == Role::SetCurrentDevice || use_.entry.binds_context;
    ApiUse {
        after_bind,
        helper,
        ..use_
    }
}

/// A context bound by hand, whatever its receiver: the function chose its device.
pub(super) fn on_method_call(state: &mut State, call: &syn::ExprMethodCall) {
    if call.method == "bind_to_thread" {
        state.binds = true;
    }
}

/// A call of a function by name: recorded when the walk was asked for the calls of that name,
/// with whether this function had bound a context by then.
pub(super) fn on_plain_call(
    state: &State,
    sem: &Semantic<'_, '_>,
    events: &mut Vec<Event<'_>>,
    callee: &syn::Ident,
) {
    if sem
        .cx
        .calls_to
        .is_some_and(|names| names.contains_ident(callee))
    {
        events.push(Event::Call(CallFact {
            callee: callee.to_string(),
            caller: state.helper.clone(),
            binds: state.binds,
        }));
    }
}
