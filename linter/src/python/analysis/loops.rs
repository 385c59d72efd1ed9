//! Loop-invariant transfers in Python: `.to(device)` or `.cuda()` of a receiver the loop
//! does not change, in a `for` or `while` body.

use rustc_hash::{FxHashMap, FxHashSet};
use std::ops::Range;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use crate::analysis::{Event, How};
use crate::python::checker::Checker;
use compact_str::CompactString;

use crate::python::semantic::{assigned_names, collect_names, dotted, integer, keyed, peel};

/// A loop being walked.
#[derive(Debug)]
pub(crate) struct Loop {
    pub(crate) keyword: Range<usize>,
    /// What the loop assigns, its targets included.
    pub(crate) assigned: FxHashSet<CompactString>,
    /// Receivers moved by more than one call in the loop (`m.cpu()` then `m.to(d)`): a
    /// module's transfers cannot be hoisted.
    pub(crate) moved_twice: FxHashSet<String>,
    /// The dict items the loop stores into (`samples["x"] = ...`), as `samples["x"]`.
    pub(crate) stored: FxHashSet<String>,
    /// What the loop calls a method of for its effect (`obs_rms.update(x)` as a statement):
    /// it and what it holds (`obs_rms.mean`) may change in every iteration.
    pub(crate) changed: FxHashSet<String>,
    /// The names its `for` binds (`i` of `for i in range(n)`).
    counters: Vec<String>,
    /// Inside branches that run in one iteration only (`if i == 0:`).
    once: usize,
}

/// What a loop's body does to the values it might move.
#[derive(Default)]
struct Effects {
    /// How many of `.cpu()`, `.cuda(...)` and `.to(...)` each receiver gets.
    moves: FxHashMap<String, usize>,
    /// The dict items it stores into.
    stored: FxHashSet<String>,
    /// What it calls a method of for its effect.
    changed: FxHashSet<String>,
}

impl<'a> Visitor<'a> for Effects {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        let targets: &[Expr] = match stmt {
            Stmt::Assign(assign) => &assign.targets,
            Stmt::AugAssign(assign) => std::slice::from_ref(&*assign.target),
            _ => &[],
        };
        self.stored.extend(targets.iter().filter_map(receiver_name));
        if let Stmt::Expr(statement) = stmt
            && let Expr::Call(call) = &*statement.value
            && let Expr::Attribute(method) = &*call.func
            && !matches!(method.attr.as_str(), "cpu" | "cuda" | "to")
        {
            self.changed.extend(dotted(&method.value));
        }
        visitor::walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr
            && let Expr::Attribute(method) = &*call.func
            && matches!(method.attr.as_str(), "cpu" | "cuda" | "to")
            && let Some(receiver) = receiver_name(peel(&method.value))
        {
            *self.moves.entry(receiver).or_default() += 1;
        }
        visitor::walk_expr(self, expr);
    }
}

/// A receiver a loop can keep: a name, an attribute chain, a dict's item by a literal key
/// (`samples["gradcams"]`), or an item by a name (`scores[i]`, kept by a loop inside `for i`).
fn receiver_name(receiver: &Expr) -> Option<String> {
    dotted(receiver)
        .or_else(|| keyed(receiver))
        .or_else(|| indexed(receiver))
}

/// `scores[i]`: an item by a name, as `scores[i]`.
fn indexed(expr: &Expr) -> Option<String> {
    let Expr::Subscript(item) = expr else {
        return None;
    };
    let Expr::Name(index) = &*item.slice else {
        return None;
    };
    Some(format!("{}[{}]", dotted(&item.value)?, index.id))
}

impl<'a> Checker<'a, '_> {
    pub(crate) fn loop_transfer(
        &mut self,
        call: &ast::ExprCall,
        receiver: &Expr,
        from_dot: Range<usize>,
    ) {
        let Some(frame) = self.function.loops.last().filter(|frame| frame.once == 0) else {
            return;
        };
        // `torch.from_numpy(stats.mean).to(device)`: the same array wrapped anew in every
        // iteration is the same tensor moved.
        let moved = match receiver {
            Expr::Call(wrap)
                if wrap.arguments.args.len() == 1
                    && wrap.arguments.keywords.is_empty()
                    && self.resolve(&wrap.func).is_some_and(|path| {
                        matches!(
                            path.as_str(),
                            "torch.from_numpy" | "torch.as_tensor" | "torch.tensor"
                        )
                    }) =>
            {
                &wrap.arguments.args[0]
            }
            other => other,
        };
        let Some(receiver_name) = receiver_name(moved) else {
            return;
        };
        let invariant = |expr: &Expr| -> bool {
            let mut names = Vec::new();
            collect_names(expr, &mut names);
            names
                .iter()
                .all(|name| !frame.assigned.contains(name.as_str()))
        };
        // A tensor made or moved here is left where it is by `.cpu()` and `.cuda()`, which
        // return copies: moved twice, it is still the same tensor (a module moves itself).
        let tensor = (self.function.flow.facts.get(receiver_name.as_str()))
            .is_some_and(|fact| fact.how != How::Named);
        // What it is made of, the dict of a dict's item (`batch` of `batch["input_ids"]`) and
        // the index of an item (`i` of `scores[i]`) among it, is not assigned in the loop.
        if !invariant(moved)
            || (frame.moved_twice.contains(&receiver_name) && !tensor)
            || frame.stored.contains(&receiver_name)
            || (frame.changed.iter()).any(|changed| {
                receiver_name == *changed
                    || receiver_name
                        .strip_prefix(changed.as_str())
                        .is_some_and(|rest| rest.starts_with('.'))
            })
            || !call.arguments.args.iter().all(&invariant)
            || !call.arguments.keywords.iter().all(|k| invariant(&k.value))
        {
            return;
        }
        let keyword = frame.keyword.clone();
        let shown = self.source(&from_dot).trim_start().to_owned();
        let span =
            usize::from(receiver.range().end()) + (from_dot.len() - shown.len())..from_dot.end;
        self.events.push(Event::LoopTransfer {
            shown,
            span,
            receiver: receiver_name,
            keyword,
        });
    }

    /// Whether `test` holds in one iteration of the innermost loop only: its counter compared
    /// equal to a number (`i == 0`, `step == 0`).
    pub(crate) fn first_iteration(&self, test: &Expr) -> bool {
        let Some(frame) = self.function.loops.last() else {
            return false;
        };
        let Expr::Compare(compare) = test else {
            return false;
        };
        let counter = |e: &Expr| matches!(e, Expr::Name(name) if frame.counters.iter().any(|c| c == name.id.as_str()));
        let number = |e: &Expr| integer(e).is_some();
        matches!(&*compare.ops, [ast::CmpOp::Eq])
            && compare.comparators.len() == 1
            && ((counter(&compare.left) && number(&compare.comparators[0]))
                || (number(&compare.left) && counter(&compare.comparators[0])))
    }

    /// Enters (`step` 1) or leaves (-1) a branch that runs in one iteration of the innermost
    /// loop, when `once`.
    pub(crate) fn once_in_loop(&mut self, once: bool, step: isize) {
        if let Some(frame) = self.function.loops.last_mut().filter(|_| once) {
            frame.once = frame.once.saturating_add_signed(step);
        }
    }

    /// A `for` (its `target`) or `while` (its `test`, evaluated in every iteration) loop.
    pub(crate) fn a_loop<'v>(
        &mut self,
        keyword: Range<usize>,
        target: Option<&Expr>,
        test: Option<&'v Expr>,
        body: &'v [Stmt],
    ) {
        let mut assigned = assigned_names(body, true, self.walrus);
        let mut counters = Vec::new();
        if let Some(target) = target {
            collect_names(target, &mut counters);
            assigned.extend(counters.iter().map(CompactString::from));
        }
        let mut effects = Effects::default();
        visitor::walk_body(&mut effects, body);
        self.function.loops.push(Loop {
            keyword,
            assigned: assigned.clone(),
            moved_twice: (effects.moves.into_iter())
                .filter(|(_, count)| *count > 1)
                .map(|(name, _)| name)
                .collect(),
            stored: effects.stored,
            changed: effects.changed,
            counters,
            once: 0,
        });
        if let Some(test) = test {
            self.visit_expr(test);
        }
        for stmt in body {
            self.visit_stmt(stmt);
        }
        self.function.loops.pop();
        // What the loop assigned is unknown after it.
        for name in assigned {
            self.function.flow.facts.remove(name.as_str());
        }
    }
}
