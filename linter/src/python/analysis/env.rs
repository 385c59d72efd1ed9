//! Environment writes in Python: `os.environ["CUDA_VISIBLE_DEVICES"] = ...` and its
//! `setdefault`/`update`/`putenv` forms, and whether a device was used before them.

use std::ops::Range;

use ruff_python_ast::{self as ast, Expr};

use crate::analysis::Event;
use crate::python::checker::Checker;
use crate::python::semantic::range;

impl<'a> Checker<'a, '_> {
    /// `os.environ.setdefault(...)`, `os.environ.update(...)`.
    pub(crate) fn environ_call(&mut self, call: &ast::ExprCall, method: &str) {
        match method {
            "setdefault" | "__setitem__" => {
                if let Some(variable) =
                    (call.arguments.find_positional(0)).and_then(|key| self.string_of(key))
                {
                    self.set_env(variable.to_owned(), range(call));
                }
            }
            "update" => {
                let mut variables: Vec<String> = call
                    .arguments
                    .keywords
                    .iter()
                    .filter_map(|keyword| keyword.arg.as_ref().map(|arg| arg.to_string()))
                    .collect();
                if let Some(Expr::Dict(dict)) = call.arguments.find_positional(0) {
                    variables.extend(
                        dict.iter()
                            .filter_map(|item| {
                                item.key.as_ref().and_then(|key| self.string_of(key))
                            })
                            .map(str::to_owned),
                    );
                }
                for variable in variables {
                    self.set_env(variable, range(call));
                }
            }
            _ => {}
        }
    }

    pub(crate) fn set_env(&mut self, variable: String, span: Range<usize>) {
        self.events.push(Event::SetEnvVar {
            variable,
            span,
            in_entry_point: self.function.in_entry,
            after_device_use: self.function.flow.first_device_use.clone(),
        });
    }
}
