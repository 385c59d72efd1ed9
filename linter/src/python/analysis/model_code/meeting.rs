//! Where tensors meet in model code (an op, a layer's input, a function of torch), and the
//! finding when a tensor made on the CPU meets one that follows the model; what calls hand
//! the project's functions.

use std::ops::Range;

use compact_str::CompactString;

use ruff_python_ast::{self as ast, Expr};

use super::values::device_of;
use super::{given_tensors, is_self};
use crate::analysis::Event;
use crate::api::last_part;
use crate::diagnostic::Requirement;
use crate::python::analysis::flow::Origin;
use crate::python::checker::Checker;
use crate::python::project::HandedOn;
use crate::python::semantic::range;

impl Checker<'_, '_> {
    /// A call in model code where tensors meet: a layer of `torch.nn` given a CPU tensor
    /// (`self.rnn(torch.zeros(b, h), hidden)`: its weights are on the model's device), and a
    /// tensor method that combines (`x.masked_fill(mask, value)`, `x.index_select(0, index)`).
    pub(crate) fn model_call(&mut self, call: &ast::ExprCall, path: Option<&str>) {
        if !self.function.flow.in_model {
            return;
        }
        self.hand_on(call, path);
        // A layer of `torch.nn`, and whether recurrent; a module of the project.
        let (layer, submodule) = match &*call.func {
            Expr::Attribute(layer) if is_self(&layer.value) => {
                let name = layer.attr.as_str();
                let class = self.model_class();
                (
                    class.and_then(|class| class.layers.get(name).copied()),
                    class.and_then(|class| class.submodules.get(name).cloned()),
                )
            }
            // A part of a layer of `torch.nn` (`self.transformer.decoder(...)`): a layer too.
            Expr::Attribute(part) if self.is_layer(part) => (Some(false), None),
            _ => (None, None),
        };
        let combining = match &*call.func {
            Expr::Attribute(method) if path.is_none() => {
                // In place (`dots.masked_fill_(mask, v)`, `out.scatter_(1, index, src)`), as
                // the method it is the in-place form of.
                let name = method.attr.as_str();
                let name = name
                    .strip_suffix('_')
                    .filter(|name| !name.ends_with('_'))
                    .unwrap_or(name);
                (self.api.names.combining.contains(name) || self.api.names.meeting.contains(name))
                    .then_some(&*method.value)
            }
            _ => None,
        };
        let operands: Vec<&Expr> = match combining {
            Some(receiver) => std::iter::once(receiver)
                .chain(&call.arguments.args)
                .collect(),
            // Its input, the first argument, and a recurrent layer's state: the others may be
            // lengths or options, which a layer takes on the CPU (`nn.CTCLoss`'s lengths).
            None => {
                let inputs = match (layer, &submodule) {
                    (Some(recurrent), _) => 1 + usize::from(recurrent),
                    (None, Some(_)) => 1,
                    (None, None) => return,
                };
                // A layer's masks (`attn_mask=`, `tgt_mask=`) are where its input is.
                let masks = (call.arguments.keywords.iter())
                    .filter(|_| layer.is_some())
                    .filter(|keyword| {
                        keyword
                            .arg
                            .as_ref()
                            .is_some_and(|arg| arg.ends_with("mask"))
                    })
                    .map(|keyword| &keyword.value);
                std::iter::once(&*call.func)
                    .chain(call.arguments.args.iter().take(inputs))
                    .chain(masks)
                    .collect()
            }
        };
        // Another module's class is a module if the project says so.
        let needs = (submodule.filter(|submodule| !submodule.known))
            .and_then(|submodule| submodule.class)
            .map(|base| Requirement::ModuleClass { base });
        self.meets_needing(range(call), &operands, needs);
    }

    /// Whether `operand` is one of the project's modules among the module's attributes.
    pub(super) fn is_submodule(&self, operand: &Expr) -> bool {
        matches!(operand, Expr::Attribute(attribute) if is_self(&attribute.value)
            && (self.model_class())
                .is_some_and(|class| class.submodules.contains_key(attribute.attr.as_str())))
    }

    /// A function of torch (or of another library of tensor functions) where the tensors it is
    /// given meet (`torch.cat([a, b])`, `torch.where(mask, x, y)`, `F.conv2d(x, weight=kernel)`,
    /// `scatter_add(ones, index)`), by its last name.
    pub(crate) fn function_meets(&mut self, call: &ast::ExprCall, path: &str) {
        let library = path.split('.').next().unwrap_or(path);
        if !self.function.flow.in_model || !self.api.names.tensor_libraries.contains(library) {
            return;
        }
        let name = last_part(path);
        if !self.api.names.combining.contains(name) && !self.api.names.meeting.contains(name) {
            return;
        }
        let operands: Vec<&Expr> = given_tensors(call).collect();
        self.meets(range(call), &operands);
    }

    /// Notes what a call hands the project's functions of tensors that follow the model: a
    /// function of the module (`load(x)`), another module's (`utils.pad(x)`), or a method of
    /// the class (`self.mask(lengths)`), by the arguments' places and keywords.
    pub(super) fn hand_on(&mut self, call: &ast::ExprCall, path: Option<&str>) {
        if call.arguments.is_empty() {
            return;
        }
        let Some(callee) = self.project_callee(call, path) else {
            return;
        };
        let positional = (call.arguments.args.iter().enumerate())
            .map(|(at, argument)| (format!("#{at}"), argument));
        let keywords = (call.arguments.keywords.iter())
            .filter_map(|keyword| Some((keyword.arg.as_ref()?.to_string(), &keyword.value)));
        for (parameter, argument) in positional.chain(keywords) {
            // A tensor, or its device (`device=x.device`).
            let handed = device_of(argument).unwrap_or(argument);
            let Some(origin) = self.follows(handed) else {
                continue;
            };
            let from = match origin {
                0 => None,
                origin => match self.function.flow.fed_by.as_ref() {
                    Some((caller, fed)) => Some((caller.to_string(), parameter_keys(fed, origin))),
                    None => continue,
                },
            };
            self.model.fed.push(HandedOn {
                function: callee.to_string(),
                parameter,
                from,
            });
        }
    }

    /// Whether `self.<name>` is a layer of `torch.nn`, or a part of one
    /// (`self.transformer.decoder`).
    pub(super) fn is_layer(&self, attribute: &ast::ExprAttribute) -> bool {
        match &*attribute.value {
            Expr::Attribute(layer) => self.is_layer(layer),
            owner => {
                is_self(owner)
                    && (self.model_class())
                        .is_some_and(|class| class.layers.contains_key(attribute.attr.as_str()))
            }
        }
    }

    /// `positions < lengths`: a comparison of tensors is an op where they meet.
    pub(crate) fn compared(&mut self, expr: &Expr) {
        if let Expr::Compare(compare) = expr
            && self.function.flow.in_model
        {
            let operands: Vec<&Expr> = std::iter::once(&*compare.left)
                .chain(&compare.comparators)
                .collect();
            self.meets(range(compare), &operands);
        }
    }

    /// `cpu[gpu_mask]`: a CPU tensor indexed with a tensor on the model's device fails (the
    /// other way round works: a CPU index is moved to the indexed tensor's device).
    pub(crate) fn indexed(&mut self, item: &ast::ExprSubscript) {
        if self.function.flow.in_model
            && self.follows(&item.slice).is_some()
            && self.follows(&item.value).is_none()
        {
            self.meets(range(item), &[&item.value, &item.slice]);
        }
    }

    /// Operands that meet in one op (`op`): a tensor made on the CPU meeting one that follows
    /// the model is reported where it was made.
    pub(crate) fn meets(&mut self, op: Range<usize>, operands: &[&Expr]) {
        self.meets_needing(op, operands, None);
    }

    /// [`Checker::meets`], where the finding also `needs` the project to say something (that a
    /// submodule's class is a module class).
    pub(super) fn meets_needing(
        &mut self,
        op: Range<usize>,
        operands: &[&Expr],
        needs: Option<Requirement>,
    ) {
        if !self.function.flow.in_model || self.model.in_tests {
            return;
        }
        let Some((cpu, (span, how))) = (operands.iter().enumerate())
            .find_map(|(at, operand)| Some((at, self.made_on_cpu(operand)?)))
        else {
            return;
        };
        // Another operand that certainly follows the model, or else one that may.
        let follows = |operand: &Expr| {
            (self.follows(operand)).or_else(|| self.is_submodule(operand).then_some(0))
        };
        let Some((other, origin)) = (operands.iter().enumerate())
            .filter(|(at, _)| *at != cpu)
            .filter_map(|(_, operand)| Some((*operand, follows(operand)?)))
            .min_by_key(|(_, origin)| *origin != 0)
        else {
            return;
        };
        let requires = match origin {
            0 => (self.model_class().and_then(|class| class.requires.clone()))
                .map(|base| Requirement::ModuleClass { base }),
            origin => {
                let Some((function, fed)) = self.function.flow.fed_by.as_ref() else {
                    return;
                };
                Some(Requirement::Fed {
                    function: function.to_string(),
                    parameters: parameter_keys(fed, origin),
                })
            }
        };
        let requires = match (requires, needs) {
            (None, needs) => needs,
            (requires, None) => requires,
            // One requirement a finding: two are one too many to be sure.
            (Some(_), Some(_)) => return,
        };
        // A tensor reported once for certain is reported once. One that may meet the model's
        // tensors in several places, each if model code hands a different parameter, is a
        // candidate at each, unless one is certain: of those the project lets stand, the run
        // keeps the first, as it keeps one finding of a rule at one place.
        let certain = requires.is_none();
        let already = |event: &Event<'_>| {
            matches!(event, Event::UnplacedTensor { span: at, requires: was, .. }
                if at.start == span.start && (certain || *was == requires))
        };
        match self.model.reported.get(&span.start) {
            Some(true) => return,
            Some(false) if !certain && self.events.iter().any(already) => return,
            Some(false) if certain => self.events.retain(|event| !already(event)),
            Some(false) | None => {}
        }
        self.model.reported.insert(span.start, certain);
        let shown = |span: &Range<usize>| {
            let text = (self.source(span).split_whitespace())
                .collect::<Vec<_>>()
                .join(" ");
            (text.len() <= 60).then_some(text)
        };
        // A layer has no `.device`; an expression's device is named by one of its tensors.
        let device_of = match other {
            Expr::Attribute(layer) if self.is_layer(layer) => None,
            Expr::Name(_) | Expr::Attribute(_) => shown(&range(other)),
            _ => None,
        };
        self.events.push(Event::UnplacedTensor {
            shown: shown(&span),
            span,
            how,
            op: shown(&op),
            op_span: op,
            other: shown(&range(other)).unwrap_or_else(|| "the model's tensor".to_owned()),
            device_of,
            requires,
        });
    }
}

/// The parameters an origin names, each by its place among a call's arguments (`#1`) and by
/// its name, as calls hand them on.
pub(super) fn parameter_keys(fed: &[(usize, CompactString)], origin: Origin) -> Vec<String> {
    (fed.iter().enumerate())
        .filter(|(bit, _)| origin & (1 << bit) != 0)
        .flat_map(|(_, (at, name))| [format!("#{at}"), name.to_string()])
        .collect()
}
