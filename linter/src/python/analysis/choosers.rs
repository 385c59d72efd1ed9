//! Device choosers in Python: functions and methods that return a device they chose, whose
//! calls choose the device for their callers when they pass none.

use ruff_python_ast::{self as ast, Expr};

use crate::analysis::Event;
use crate::api::Role;
use crate::python::checker::Checker;
use crate::python::semantic::range;

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

    /// Whether a returned value is the current device, asked of the framework: the query itself
    /// (`torch.cuda.current_device()`) or a device built from it (`torch.device("cuda",
    /// torch.cuda.current_device())`), by the events its walk gave since `before`.
    pub(crate) fn built_from_current(&self, value: &Expr, before: usize) -> bool {
        let Expr::Call(call) = value else {
            return false;
        };
        let span = range(value);
        let builds = self.resolve(&call.func).as_deref() == Some("torch.device");
        self.events[before..].iter().any(|event| match event {
            Event::Api { use_, .. } => {
                matches!(use_.entry.role, Role::ImplicitDevice { .. })
                    && span.start <= use_.span.start
                    && use_.span.end <= span.end
                    && (builds || use_.span.start == span.start)
            }
            _ => false,
        })
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
