//! `silent_cpu_fallback` in Python: a device chosen by an availability check
//! (`"cuda" if torch.cuda.is_available() else "cpu"`, or an `if` chain that binds it) that
//! nothing reports, so a job that lost its GPU runs on the CPU without a word.

use rustc_hash::FxHashSet;
use std::ops::Range;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use crate::analysis::{Event, says_device};
use crate::python::Slot;
use crate::python::checker::Checker;
use crate::python::semantic::{dotted, integer, last_name, peel, peel_not, range, string};

/// The conditions a test joins (`a and b`), or the test itself.
fn conditions(test: &Expr) -> &[Expr] {
    match test {
        Expr::BoolOp(conditions) => &conditions.values,
        test => std::slice::from_ref(test),
    }
}

/// What a body tells a person, not looking into nested functions.
#[derive(Debug, Default)]
pub(crate) struct Said {
    /// It reports something: a print, a log, a warning, or a sentence about running without a
    /// GPU that it writes somewhere (`DESCRIPTION += "Running on CPU, this will be slow"`).
    pub(crate) reports: bool,
    /// It says in words what happens without a GPU (`"No accessible GPU, device set to CPU"`),
    /// in a string or an f-string.
    pub(crate) without_gpu: bool,
}

/// What `body` tells a person; `reporting` names the calls that report.
pub(crate) fn said(body: &[Stmt], reporting: &FxHashSet<String>) -> Said {
    struct Reads<'r>(Said, &'r FxHashSet<String>);
    impl Reads<'_> {
        /// A sentence (not a device string, `"cpu"`) about running without a GPU.
        fn text(&mut self, text: &str) {
            let text = text.to_ascii_lowercase();
            let without_gpu = text.contains(' ')
                && ["cpu", "no gpu", "no cuda"]
                    .iter()
                    .any(|words| text.contains(words));
            self.0.without_gpu |= without_gpu;
            self.0.reports |= without_gpu;
        }
    }
    impl<'a> Visitor<'a> for Reads<'_> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if !matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
                visitor::walk_stmt(self, stmt);
            }
        }

        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Call(call) = expr {
                let callee = last_name(&call.func);
                // A person reads these; `str` or `format` alone reports nothing.
                self.0.reports |= self.1.contains(callee)
                    && !matches!(callee, "str" | "repr" | "format" | "write");
            }
            visitor::walk_expr(self, expr);
        }

        fn visit_string_literal(&mut self, literal: &'a ast::StringLiteral) {
            self.text(&literal.value);
        }

        fn visit_interpolated_string_element(
            &mut self,
            element: &'a ast::InterpolatedStringElement,
        ) {
            if let ast::InterpolatedStringElement::Literal(literal) = element {
                self.text(&literal.value);
            }
            visitor::walk_interpolated_string_element(self, element);
        }
    }
    let mut reads = Reads(Said::default(), reporting);
    visitor::walk_body(&mut reads, body);
    reads.0
}

/// What a body does with the device bound to `name` after `after`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Nothing reads it: no device is used, so nothing can fall back.
    Unused,
    /// It is used, and nothing looks at which device it is.
    Unchecked,
    /// Something compares it, asserts on it, reports it (`print`, logging, an f-string), or
    /// reads its `.type`.
    LookedAt,
}

/// `reports` says whether a call shows what it is given to a person.
pub(crate) fn fate(
    body: &[Stmt],
    name: &str,
    choice: Range<usize>,
    after: usize,
    reports: &dyn Fn(&ast::ExprCall) -> bool,
) -> Fate {
    struct Looks<'n> {
        name: &'n str,
        reports: &'n dyn Fn(&ast::ExprCall) -> bool,
        /// Where the choice was made: what is looked at before it is the caller's value.
        after: usize,
        /// Where the name is bound again at the body's level: what is read after it is the new
        /// value.
        before: usize,
        /// Inside something that looks at what it contains.
        looking: usize,
        /// Inside an accessor of a device (`.device`, `.is_cuda`).
        revealing: usize,
        /// The method of the call being entered (`device.startswith` of
        /// `device.startswith("cuda")`): called, not a field read.
        callee: Option<ruff_text_size::TextRange>,
        found: bool,
        used: bool,
    }
    impl<'a> Visitor<'a> for Looks<'_> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if usize::from(stmt.start()) >= self.before {
                return;
            }
            if let Stmt::Assert(_) | Stmt::Raise(_) = stmt {
                self.looking += 1;
                visitor::walk_stmt(self, stmt);
                self.looking -= 1;
            } else {
                visitor::walk_stmt(self, stmt);
            }
        }

        fn visit_expr(&mut self, expr: &'a Expr) {
            if usize::from(expr.start()) >= self.before {
                return;
            }
            if let Expr::Call(call) = expr
                && let Expr::Attribute(method) = &*call.func
            {
                self.callee = Some(method.range());
            }
            let is_name = dotted(expr).as_deref() == Some(self.name)
                && usize::from(expr.range().start()) >= self.after;
            self.used |= is_name;
            if is_name && self.looking > 0 {
                self.found = true;
                return;
            }
            let looks = match expr {
                Expr::Compare(_) | Expr::FString(_) => true,
                // `device.type`, `device.index`; a field other than a device accessor
                // (`model.mode == "RAW"`) is no device's: a device has no other (a method's
                // call, `device.startswith(..)`, reads the device itself).
                Expr::Attribute(attribute)
                    if dotted(&attribute.value).as_deref() == Some(self.name)
                        && usize::from(expr.range().start()) >= self.after =>
                {
                    if matches!(attribute.attr.as_str(), "type" | "index") {
                        self.found = true;
                        return;
                    }
                    let accessor = matches!(attribute.attr.as_str(), "device" | "is_cuda");
                    if !accessor && self.callee != Some(attribute.range()) {
                        self.used = true;
                        return;
                    }
                    false
                }
                // `print("loaded", model.load_state_dict(sd))` shows what the method returned,
                // not the device of the value it was called on; `.get_device()` is the device.
                Expr::Call(call) if self.looking > 0 && self.revealing == 0 => {
                    if let Expr::Attribute(method) = &*call.func
                        && method.attr.as_str() != "get_device"
                    {
                        let looking = std::mem::take(&mut self.looking);
                        self.visit_expr(&method.value);
                        // `torch.rand(n).to(device) < epsilon` compares the tensor moved, not
                        // the device it went to.
                        let moves = matches!(method.attr.as_str(), "to" | "cuda" | "type");
                        if !moves {
                            self.looking = looking;
                        }
                        visitor::walk_arguments(self, &call.arguments);
                        self.looking = looking;
                        return;
                    }
                    (self.reports)(call)
                }
                // `self.assertEqual(x.device.type, "cuda")`, `torch.testing.assert_close(..)`:
                // an assertion, as `assert` is.
                Expr::Call(call) => {
                    (self.reports)(call) || last_name(&call.func).starts_with("assert")
                }
                _ => false,
            };
            // `next(model.parameters()).device`: what the accessor reads is the device of the
            // value it is called on.
            let reveals = matches!(expr, Expr::Attribute(attribute)
                if matches!(attribute.attr.as_str(), "device" | "is_cuda" | "type" | "index"));
            self.revealing += usize::from(reveals);
            self.looking += usize::from(looks);
            visitor::walk_expr(self, expr);
            self.looking -= usize::from(looks);
            self.revealing -= usize::from(reveals);
        }
    }
    // `device = "cuda" if ... else "cpu"` again, later in the same body (a notebook's next
    // section): the first choice ends where the second is bound (its value still reads the
    // first). A choice the name is bound from (a flag: `use_cuda = is_available()`, then
    // `device = torch.device("cuda" if use_cuda else "cpu")`) is held from its first binding on.
    let bindings: Vec<(ruff_text_size::TextRange, usize)> = (body.iter())
        .filter_map(|stmt| match stmt {
            Stmt::Assign(assign)
                if (assign.targets.iter())
                    .any(|target| dotted(target).as_deref() == Some(name)) =>
            {
                Some((stmt.range(), usize::from(assign.value.end())))
            }
            _ => None,
        })
        .collect();
    let holds = bindings.iter().any(|(range, _)| {
        usize::from(range.start()) <= choice.start && choice.end <= usize::from(range.end())
    });
    let before = (bindings.iter())
        .filter(|(range, _)| usize::from(range.start()) > after)
        .nth(usize::from(!holds))
        .map_or(usize::MAX, |(_, end)| *end);
    let mut looks = Looks {
        name,
        reports,
        after,
        before,
        looking: 0,
        revealing: 0,
        callee: None,
        found: false,
        used: false,
    };
    visitor::walk_body(&mut looks, body);
    match (looks.found, looks.used) {
        (true, _) => Fate::LookedAt,
        (false, true) => Fate::Unchecked,
        (false, false) => Fate::Unused,
    }
}

impl<'a> Checker<'a, '_> {
    /// Whether a call shows what it is given to a person: a logger or `print` by its last name
    /// (not a function of a module that computes, `torch.log`), or a dotted path of the
    /// `reporting` table by what the callee resolves to (Lightning's `Trainer` reports the
    /// accelerator it was given and whether a GPU is available).
    /// `path` is the callee resolved.
    pub(crate) fn reports_value(&self, call: &ast::ExprCall, path: Option<&str>) -> bool {
        let names = &self.api.names;
        match path {
            Some(path) if path.contains('.') => {
                names.reporting.contains(path)
                    || (names.reporting.contains(last_name(&call.func)) && !names.computes(path))
            }
            _ => names.reporting.contains(last_name(&call.func)),
        }
    }

    /// Whether a statement stops the function: `raise`, or a call that exits or skips
    /// (`sys.exit(1)`, `pytest.skip("no GPU")`).
    pub(crate) fn stops(&self, stmt: &Stmt) -> bool {
        match stmt {
            Stmt::Raise(_) => true,
            Stmt::Expr(statement) => matches!(&*statement.value, Expr::Call(call)
            if self.resolve(&call.func).is_some_and(|path| {
                self.api.names.stopping.contains(path.as_str())
            })),
            _ => false,
        }
    }

    /// Whether `call` hands `name` to a function of the project that looks at the device it
    /// takes there (`sync(device)` of `def sync(device): if device.type == "cuda": ...`).
    /// By position or by name (`print_train_time(start, end, device=device)`).
    fn hands_to_looker(&self, call: &ast::ExprCall, path: &str, name: &str) -> bool {
        Slot::of(&call.arguments).any(|(slot, arg)| {
            dotted(arg).as_deref() == Some(name) && self.looks_at_device(path, &slot)
        })
    }

    /// `"cuda" if torch.cuda.is_available() else "cpu"`: the availability check, when this is
    /// one.
    pub(crate) fn fallback(&self, expr: &Expr) -> Option<(String, Range<usize>)> {
        let expr = match expr {
            Expr::Call(call) if self.resolves_to(&call.func, "torch.device") => {
                call.arguments.find_positional(0)?
            }
            // `device or torch.device("cuda" if ... else "cpu")`: the caller's, or the choice.
            Expr::BoolOp(or) if or.op == ast::BoolOp::Or => {
                return self.fallback(or.values.last()?);
            }
            other => other,
        };
        let Expr::If(choice) = expr else {
            return None;
        };
        let Some(check) = self.availability_check(&choice.test) else {
            // `args.device if args.device is not None else "cuda" if ... else "cpu"`: the
            // caller's, or the choice in a branch.
            return self
                .fallback(&choice.orelse)
                .or_else(|| self.fallback(&choice.body));
        };
        let cpu = |e: &Expr| self.device_of(e).as_deref() == Some("cpu");
        // `map_location="cpu" if not torch.cuda.is_available() else None` only lets a
        // checkpoint load without a GPU: no GPU is chosen.
        let none = |e: &Expr| e.is_none_literal_expr();
        // `get_device_name(0) if torch.cuda.is_available() else "cpu"` names the hardware for a
        // report: an answer to a question, no device.
        let asks = |e: &Expr| matches!(e, Expr::Call(call) if self.is_query(call));
        let other = |e: &Expr| !none(e) && !asks(e);
        // `model.cuda(rank) if torch.cuda.is_available() else model.to(device)`: moved to a GPU
        // in one branch, and not in the other.
        let to_gpu = |e: &Expr| self.moves_to_gpu(e);
        let chooses = (cpu(&choice.body) && other(&choice.orelse))
            || (cpu(&choice.orelse) && other(&choice.body))
            || (to_gpu(&choice.body) != to_gpu(&choice.orelse));
        chooses.then_some(check)
    }

    /// Whether a value is moved to a GPU: `.cuda(...)`, or `.to(...)` a device known to be one.
    fn moves_to_gpu(&self, value: &Expr) -> bool {
        let Expr::Call(call) = value else {
            return false;
        };
        let Expr::Attribute(method) = &*call.func else {
            return false;
        };
        match method.attr.as_str() {
            "cuda" => true,
            "to" => call
                .arguments
                .find_argument_value("device", 0)
                .and_then(|device| self.device_of(device))
                .is_some_and(|device| device != "cpu"),
            _ => false,
        }
    }

    /// The availability check in a condition, shown, and where it is. It may be one of several
    /// conditions (`use_gpu and torch.cuda.is_available()`), negated (`"cpu" if not
    /// torch.cuda.is_available() else "cuda"`), or a count of GPUs (`torch.cuda.device_count()`,
    /// also against a number: `device_count() > 0`).
    pub(crate) fn availability_check(&self, test: &Expr) -> Option<(String, Range<usize>)> {
        let tests = conditions(test);
        let check = |call: &ast::ExprCall| {
            self.resolve(&call.func)
                .is_some_and(|path| self.api.names.availability.contains(path.as_str()))
                .then(|| {
                    (
                        format!("{}()", self.source(&range(&*call.func))),
                        range(call),
                    )
                })
        };
        let flags = &self.function.flow.availability_flags;
        tests.iter().find_map(|test| match peel_not(test) {
            Expr::Call(call) => check(call),
            // `use_cuda = torch.cuda.is_available()` earlier (or `self.use_cuda = ...`): the
            // flag is the check.
            flag @ (Expr::Name(_) | Expr::Attribute(_)) if !flags.is_empty() => {
                match flags.get(dotted(flag)?.as_str()) {
                    Some((shown, span, false)) => Some((shown.clone(), span.clone())),
                    _ => None,
                }
            }
            // `torch.cuda.device_count() > 0`: a count against a number.
            Expr::Compare(compare)
                if compare
                    .comparators
                    .iter()
                    .all(|number| matches!(number, Expr::NumberLiteral(_))) =>
            {
                match &*compare.left {
                    Expr::Call(call) => check(call),
                    _ => None,
                }
            }
            _ => None,
        })
    }

    /// `name = value`: a flag the value computes from an availability check (`use_cuda = not
    /// no_cuda and torch.cuda.is_available()`), which later conditions test.
    pub(crate) fn bound_availability(&mut self, name: &str, value: &Expr) {
        let flags = &mut self.function.flow.availability_flags;
        if !flags.is_empty() {
            flags.remove(name);
        }
        if !self.mentions_availability(value) {
            return;
        }
        if let Some((shown, span)) = self.availability_check(value) {
            let flags = &mut self.function.flow.availability_flags;
            flags.insert(name.to_owned(), (shown, span, false));
        }
    }

    /// Whether a condition calls something named as an availability check ends
    /// (`is_available`, `device_count`), before anything is resolved.
    pub(crate) fn mentions_availability(&self, value: &Expr) -> bool {
        match value {
            Expr::Call(call) => self.api.names.ends_availability(last_name(&call.func)),
            Expr::BoolOp(conditions) => conditions
                .values
                .iter()
                .any(|v| self.mentions_availability(v)),
            Expr::UnaryOp(unary) => self.mentions_availability(&unary.operand),
            Expr::Compare(compare) => self.mentions_availability(&compare.left),
            _ => false,
        }
    }

    /// `if use_cuda:` on a flag bound to an availability check: branched on once.
    pub(crate) fn branched_on(&mut self, test: &Expr) {
        let flags = &mut self.function.flow.availability_flags;
        if flags.is_empty() {
            return;
        }
        for test in conditions(test) {
            if let Some(name) = dotted(peel_not(test))
                && let Some(flag) = flags.get_mut(name.as_str())
            {
                flag.2 = true;
            }
        }
    }

    /// `name = value`: a device the value chose by availability (`"cuda" if
    /// torch.cuda.is_available() else "cpu"`, whose uses count after it), or one a branch an
    /// availability check chose binds ([`Self::branch_fallback`]).
    pub(crate) fn bound_fallback(&mut self, name: String, value: &Expr) {
        self.branch_fallback(&name, value);
        if let Some((shown, span)) = self.fallback(value) {
            let after = span.end;
            self.function
                .flow
                .fallbacks
                .push((name, shown, span, after));
        }
    }

    /// A device bound to `name` in a branch an availability check chose
    /// (`if torch.cuda.is_available(): device = "cuda"`): a fallback, as the conditional
    /// expression is.
    pub(crate) fn branch_fallback(&mut self, name: &str, value: &Expr) {
        let Some((shown, span, end)) = self.function.checked_branch.clone() else {
            return;
        };
        let known = self
            .function
            .flow
            .fallbacks
            .iter()
            .any(|(held, _, at, _)| held == name && *at == span);
        // A device string or a `torch.device(...)`, not a number or a name; or the name's own
        // value moved to a GPU (`model = model.cuda()`): without one it stays on the CPU.
        let device = self.is_device_value(value);
        let moved = self.moved_to_gpu(value).as_deref() == Some(name);
        // `device = -1`: the CPU of transformers' pipelines, in the branch without a GPU.
        let minus_one = matches!(value, Expr::UnaryOp(negative)
            if negative.op == ast::UnaryOp::USub && integer(&negative.operand) == Some(1));
        let cpu = minus_one && says_device(name);
        if !known && (device || moved || cpu) && self.fallback(value).is_none() {
            self.function
                .flow
                .fallbacks
                .push((name.to_owned(), shown, span, end));
        }
    }

    /// A device string, a `torch.device(...)` or the current GPU's index, not a number or a
    /// name; or a conditional between two (`torch.device(f"cuda:{index}") if index else
    /// torch.device("cuda:0")`).
    fn is_device_value(&self, value: &Expr) -> bool {
        if let Expr::If(choice) = value {
            return self.is_device_value(&choice.body) && self.is_device_value(&choice.orelse);
        }
        let written = match value {
            // The current GPU's index (`device = torch.cuda.current_device()`): a GPU.
            Expr::Call(call) if self.resolves_to(&call.func, "torch.cuda.current_device") => {
                return true;
            }
            Expr::Call(call) => self.resolves_to(&call.func, "torch.device"),
            other => string(other).is_some(),
        };
        // `torch.device(f"cuda:{rank}")`: a GPU, whatever its index.
        written && (self.device_of(value).is_some() || self.names_gpu(value))
    }

    /// A device returned from a branch an availability check chose (`if
    /// torch.cuda.is_available(): return "cuda"`, `if not torch.cuda.is_available(): return
    /// torch.device("cpu")`): the function's callers get the CPU without a word, as from the
    /// conditional expression.
    pub(crate) fn returned_in_branch(&mut self, value: &Expr) {
        let Some((shown, span, _)) = self.function.checked_branch.clone() else {
            return;
        };
        let known = self
            .events
            .iter()
            .any(|event| matches!(event, Event::SilentFallback { span: at, .. } if *at == span));
        let said = self.function.flow.said_without_gpu || self.function.returns_fallback;
        if !known && !said && self.is_device_value(value) && self.fallback(value).is_none() {
            self.events.push(Event::SilentFallback { shown, span });
            self.function.returns_fallback = true;
        }
    }

    /// The name whose value `expr` moves to a GPU (`model.cuda()`, `x.to("cuda")`), if any.
    pub(crate) fn moved_to_gpu(&self, expr: &Expr) -> Option<String> {
        let Expr::Call(call) = expr else {
            return None;
        };
        let Expr::Attribute(method) = &*call.func else {
            return None;
        };
        self.moves_to_gpu(expr)
            .then(|| dotted(peel(&method.value)))
            .flatten()
    }

    /// `model.cuda()` alone in a branch an availability check chose: a module moved in place,
    /// which stays on the CPU without a GPU, as `model = model.cuda()` does.
    pub(crate) fn moved_in_branch(&mut self, expr: &Expr) {
        if self.function.checked_branch.is_none() {
            return;
        }
        if let Some(name) = self.moved_to_gpu(expr) {
            self.branch_fallback(&name, expr);
        }
    }

    /// Ends a function's flow: each fallback nothing looked at is a finding.
    pub(crate) fn finish_flow(&mut self, body: &[Stmt]) {
        let fallbacks = std::mem::take(&mut self.function.flow.fallbacks);
        if self.function.flow.said_without_gpu {
            return;
        }
        for (name, shown, span, after) in fallbacks {
            // An attribute (`self.device`) is read by other functions, and a library module's
            // variable by the modules that import it: only a plain name that nothing reads
            // chose nothing.
            let exported = self.qualname.is_empty() && !self.program;
            let report = match fate(body, &name, span.clone(), after, &|call| {
                let path = self.resolve(&call.func);
                self.reports_value(call, path.as_deref())
                    || path.is_some_and(|path| self.hands_to_looker(call, &path, &name))
            }) {
                Fate::LookedAt => false,
                Fate::Unused => name.contains('.') || exported,
                Fate::Unchecked => true,
            };
            if report {
                self.events.push(Event::SilentFallback { shown, span });
            }
        }
    }
}
