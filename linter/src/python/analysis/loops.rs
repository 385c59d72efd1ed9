//! Loop-invariant transfers in Python: `.to(device)` or `.cuda()` of a receiver the loop
//! does not change, in a `for` or `while` body.

use rustc_hash::{FxHashMap, FxHashSet};
use std::ops::Range;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use crate::analysis::Event;
use crate::python::checker::Checker;
use compact_str::CompactString;

use crate::python::semantic::{assigned_names, collect_names, dotted, keyed, peel, root};

/// A loop being walked.
#[derive(Debug)]
pub(crate) struct Loop {
    pub(crate) keyword: Range<usize>,
    /// What the loop assigns, its targets included.
    pub(crate) assigned: FxHashSet<CompactString>,
    /// Receivers moved by more than one call in the loop (`m.cpu()` then `m.to(d)`): their
    /// transfers cannot be hoisted.
    pub(crate) moved_twice: FxHashSet<String>,
    /// The dict items the loop stores into (`samples["x"] = ...`), as `samples["x"]`.
    pub(crate) stored: FxHashSet<String>,
}

/// What a loop's body does to receivers: those of more than one of `.cpu()`, `.cuda(...)` and
/// `.to(...)`, and the dict items it stores into.
pub(crate) fn moves_and_stores(body: &[Stmt]) -> (FxHashSet<String>, FxHashSet<String>) {
    struct Moves(FxHashMap<String, usize>, FxHashSet<String>);
    impl<'a> Visitor<'a> for Moves {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            let targets: &[Expr] = match stmt {
                Stmt::Assign(assign) => &assign.targets,
                Stmt::AugAssign(assign) => std::slice::from_ref(&*assign.target),
                _ => &[],
            };
            self.1.extend(targets.iter().filter_map(keyed));
            visitor::walk_stmt(self, stmt);
        }

        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Call(call) = expr
                && let Expr::Attribute(method) = &*call.func
                && matches!(method.attr.as_str(), "cpu" | "cuda" | "to")
                && let Some(receiver) = receiver_name(peel(&method.value))
            {
                *self.0.entry(receiver).or_default() += 1;
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut moves = Moves(FxHashMap::default(), FxHashSet::default());
    visitor::walk_body(&mut moves, body);
    let twice = (moves.0.into_iter())
        .filter(|(_, count)| *count > 1)
        .map(|(name, _)| name)
        .collect();
    (twice, moves.1)
}

/// A receiver a loop can keep: a name, an attribute chain, or a dict's item by a literal key
/// (`samples["gradcams"]`).
fn receiver_name(receiver: &Expr) -> Option<String> {
    dotted(receiver).or_else(|| keyed(receiver))
}

impl<'a> Checker<'a, '_> {
    pub(crate) fn loop_transfer(
        &mut self,
        call: &ast::ExprCall,
        receiver: &Expr,
        from_dot: Range<usize>,
    ) {
        let Some(frame) = self.function.loops.last() else {
            return;
        };
        let Some(receiver_name) = receiver_name(receiver) else {
            return;
        };
        let invariant = |expr: &Expr| -> bool {
            let mut names = Vec::new();
            collect_names(expr, &mut names);
            names
                .iter()
                .all(|name| !frame.assigned.contains(name.as_str()))
        };
        // Of a dict's item, the dict's (`batch` of `batch["input_ids"]`).
        let receiver_root = match receiver {
            Expr::Subscript(item) => root(&item.value),
            other => root(other),
        }
        .unwrap_or_default();
        if frame.assigned.contains(receiver_name.as_str())
            || frame.assigned.contains(receiver_root)
            || frame.moved_twice.contains(&receiver_name)
            || frame.stored.contains(&receiver_name)
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

    /// A `for` (its `target`) or `while` (its `test`, evaluated in every iteration) loop.
    pub(crate) fn a_loop<'v>(
        &mut self,
        keyword: Range<usize>,
        target: Option<&Expr>,
        test: Option<&'v Expr>,
        body: &'v [Stmt],
    ) {
        let mut assigned = assigned_names(body, true, self.walrus);
        if let Some(target) = target {
            let mut names = Vec::new();
            collect_names(target, &mut names);
            assigned.extend(names.into_iter().map(CompactString::from));
        }
        let (moved_twice, stored) = moves_and_stores(body);
        self.function.loops.push(Loop {
            keyword,
            assigned: assigned.clone(),
            moved_twice,
            stored,
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
