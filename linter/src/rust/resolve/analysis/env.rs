//! `late_visible_devices`' facts: where a function first used a device, so that setting
//! `CUDA_VISIBLE_DEVICES` after it is known to come too late.

use std::ops::Range;

use crate::analysis::ApiUse;
use crate::api::Role;

#[derive(Debug, Default)]
pub(in crate::rust::resolve) struct State {
    /// The first device use of the current function.
    pub(in crate::rust::resolve) first_device_use: Option<Range<usize>>,
}

pub(super) fn on_api_use(state: &mut State, use_: &ApiUse<'_>) {
    let uses_device = !matches!(
        use_.entry.role,
        Role::SetEnvVar | Role::SpawnThread { .. } | Role::ThreadScope { .. }
    );
    if uses_device {
        state
            .first_device_use
            .get_or_insert_with(|| use_.span.clone());
    }
}
