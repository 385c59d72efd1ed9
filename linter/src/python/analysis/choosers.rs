//! Device choosers in Python: functions and methods that return a device they chose, whose
//! calls choose the device for their callers when they pass none.

use ruff_python_ast::{self as ast};

use crate::python::checker::Checker;

impl<'a> Checker<'a, '_> {
    /// Whether a chooser's call leaves it the choice: it passes no device of its own
    /// (`get_device()`, `get_device("cuda")`, not `get_device(device=cfg.device)`).
    pub(crate) fn lets_choose(&self, call: &ast::ExprCall) -> bool {
        let mut passed = call
            .arguments
            .args
            .iter()
            .chain(call.arguments.keywords.iter().map(|keyword| &keyword.value));
        call.arguments.is_empty() || passed.any(|value| self.device_literal(value).is_some())
    }

    /// Whether `path` names a device chooser: of the project, or of this file above (in the
    /// first pass, before the project knows them, a chooser calling one).
    pub(crate) fn chooses(&self, path: &str) -> bool {
        {
            let asked = &mut self.asked.borrow_mut().chooses;
            if !asked.contains(path) {
                asked.insert(path.to_owned());
            }
        }
        self.project.chooses(path) || self.choosers.iter().any(|chooser| chooser == path)
    }
}
