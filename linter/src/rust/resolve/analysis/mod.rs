//! The analyses: each reads the semantic model at the hooks the checker calls as it walks
//! (`on_fn_enter`, `on_api_use`, `on_let`, `on_method_call`, `on_binary`, `on_loop_enter`,
//! `on_macro`, `on_fn_exit`, …) and reports what it finds as [`Event`]s for the rules. Each
//! keeps its per-function state in its own module; [`FnState`] gathers them, so that the
//! checker saves and restores the state of a function as one value when it enters and leaves
//! a function. Adding an analysis is its module, a field of [`FnState`] and its calls in these
//! hooks; the traversal does not change.

pub(super) mod best_available;
pub(super) mod choosers;
pub(super) mod context;
pub(super) mod defaults;
pub(super) mod entry;
pub(super) mod env;
pub(super) mod fallback;
pub(super) mod flow;
pub(super) mod loops;
pub(super) mod macros;
pub(super) mod model_code;

use std::ops::Range;

use syn::Expr;

use super::semantic::Semantic;
use crate::analysis::{ApiUse, Event};
use crate::api::{Entry, Role};

/// The state of every analysis for the function being walked.
#[derive(Debug, Default)]
pub(super) struct FnState {
    pub(super) entry: entry::State,
    pub(super) context: context::State,
    pub(super) choosers: choosers::State,
    pub(super) env: env::State,
    pub(super) fallback: fallback::State,
    pub(super) loops: loops::State,
    pub(super) defaults: defaults::State,
    pub(super) model_code: model_code::State,
}

/// A function about to be walked.
pub(super) struct FnInfo<'f> {
    pub(super) attrs: &'f [syn::Attribute],
    /// The signature, for a function (not for code walked as if it were one).
    pub(super) sig: Option<&'f syn::Signature>,
    pub(super) name: String,
    /// The type whose method it is (`Engine` in `impl Engine`), if any.
    pub(super) owner: Option<&'f str>,
    /// In an `impl` of a type, its own or a trait's (not a trait's default method): its
    /// associated functions are called by the type's path (`Engine::pick()`, `Self::pick()`,
    /// `Context::default()`).
    pub(super) in_impl: bool,
    /// `fn default` of `impl Default for T`.
    pub(super) defines_default: bool,
    /// Declared `pub` (not `pub(crate)`): callable from other crates.
    pub(super) public: bool,
    /// For a static's initializer walked as a function: the static's type. Its readers get what
    /// the initializer returns, as callers do (`static DEVICE: Lazy<Device>`).
    pub(super) static_type: Option<&'f syn::Type>,
}

/// The analyses of one file.
pub(super) struct Analyses {
    pub(super) function: FnState,
    pub(super) file: entry::FileState,
    /// The file's model types, noted module by module as the walk enters them.
    pub(super) models: model_code::FileState,
}

impl Analyses {
    pub(super) fn new(sem: &Semantic<'_, '_>) -> Analyses {
        let file = entry::FileState::new(sem.cx.role);
        Analyses {
            function: FnState {
                entry: entry::State::at_file_level(&file),
                ..FnState::default()
            },
            file,
            models: model_code::FileState::default(),
        }
    }

    /// Entering a function: its fresh state; the caller keeps the outer one to restore.
    pub(super) fn on_fn_enter(&mut self, sem: &Semantic<'_, '_>, info: &FnInfo<'_>) -> FnState {
        let state = FnState {
            entry: entry::State::for_function(&self.file, sem, info),
            context: context::State::for_function(info),
            choosers: choosers::State::for_function(sem, info),
            defaults: defaults::State::for_function(info),
            model_code: model_code::State::for_function(&self.models, sem, info),
            ..FnState::default()
        };
        std::mem::replace(&mut self.function, state)
    }

    /// Leaving a function: what is still pending is reported, and the outer state restored.
    pub(super) fn on_fn_exit(&mut self, events: &mut Vec<Event<'_>>, outer: FnState) {
        let state = std::mem::replace(&mut self.function, outer);
        fallback::finish(state.fallback, events);
    }

    /// A use of a known API.
    pub(super) fn on_api_use<'a>(&mut self, events: &mut Vec<Event<'a>>, use_: ApiUse<'a>) {
        let state = &mut self.function;
        if defaults::vetoes(&state.defaults, &use_) {
            return;
        }
        env::on_api_use(&mut state.env, &use_);
        fallback::on_api_use(&mut state.fallback, events, &use_);
        // Saving and restoring the context is no finding, but what it makes current is the
        // function's own choice for what follows.
        let restoring = context::vetoes(&state.context, &use_);
        let use_ = context::on_api_use(&mut state.context, use_);
        if restoring {
            return;
        }
        // A `match` on the caller's device (`match preference { Auto => Self::auto(), .. }`)
        // calls a chooser where its caller asked for that choice.
        if use_.entry.chooser && state.choosers.dispatching > 0 {
            return;
        }
        let place = choosers::Place {
            in_entry: state.entry.chooses(&use_.entry.role),
            in_program: self.file.in_program,
        };
        // A device asked about or opened while the library is loaded.
        let asks_gpu = matches!(
            use_.entry.role,
            Role::ExplicitDevice { .. }
                | Role::ImplicitDevice { .. }
                | Role::CurrentDeviceUser
                | Role::SetCurrentDevice
        );
        if state.entry.at_load && asks_gpu && !place.in_entry && !place.in_program {
            events.push(Event::CudaAtImport {
                shown: use_.shown.clone(),
                span: use_.span.clone(),
                when: "when the library is loaded",
            });
        }
        // A call that falls back by itself, given a literal GPU (candle's
        // `cuda_if_available(0)`), is also the library's "best available" choice, as the same
        // choice written by hand is; one given its caller's GPU (`cuda_if_available(rank)`)
        // leaves only the fallback to the library.
        let best_available = (matches!(use_.entry.role, Role::ExplicitDevice { .. })
            && use_.entry.may_fall_back
            && use_.literal_ordinal.is_some()
            && !state.choosers.takes_device)
            .then(|| ApiUse {
                entry: crate::api::Api::best_available_choice(),
                path: use_.path.clone(),
                shown: use_.shown.clone(),
                span: use_.span.clone(),
                as_value: use_.as_value,
                literal_ordinal: None,
                ordinal_from: None,
                after_bind: false,
                helper: None,
                chooser: None,
            });
        let use_ = choosers::on_api_use(&state.choosers, use_, place);
        events.push(Event::Api {
            use_,
            in_entry_point: place.in_entry,
            in_program: place.in_program,
        });
        if let Some(use_) = best_available {
            let use_ = choosers::on_api_use(&state.choosers, use_, place);
            events.push(Event::Api {
                use_,
                in_entry_point: place.in_entry,
                in_program: place.in_program,
            });
        }
    }

    /// A device picked by hand the way `cuda_if_available` picks it ([`best_available`]): the
    /// function's implicit "best available" choice, and a fallback unless its path reports it.
    pub(super) fn on_written<'a>(
        &mut self,
        sem: &Semantic<'_, 'a>,
        events: &mut Vec<Event<'a>>,
        written: best_available::Written,
    ) {
        if written.reported {
            self.function.fallback.looked_at(written.span.clone());
        }
        let entry = sem.cx.api.best_available();
        let use_ = ApiUse::new(entry, String::new(), written.shown, written.span);
        self.on_api_use(events, use_);
    }

    /// A call of a function that is no known API (by its last name), for the analyses that
    /// follow calls between functions.
    pub(super) fn on_plain_call(
        &mut self,
        sem: &Semantic<'_, '_>,
        events: &mut Vec<Event<'_>>,
        callee: &syn::Ident,
    ) {
        context::on_plain_call(&self.function.context, sem, events, callee);
    }

    /// The arguments of a call of a function that is no known API (by its last name).
    pub(super) fn on_call_arguments(
        &mut self,
        sem: &Semantic<'_, '_>,
        callee: &syn::Ident,
        args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
    ) {
        model_code::on_call(
            &self.function.model_code,
            &mut self.models,
            sem,
            callee,
            args,
        );
    }

    /// `std::env::set_var(VAR, ..)`.
    pub(super) fn on_set_env(
        &mut self,
        events: &mut Vec<Event<'_>>,
        variable: String,
        span: Range<usize>,
    ) {
        events.push(Event::SetEnvVar {
            variable,
            span,
            in_entry_point: self.function.entry.in_entry,
            after_device_use: self.function.env.first_device_use.clone(),
        });
    }

    /// `"cuda:N".parse()`.
    pub(super) fn on_device_string(
        &mut self,
        events: &mut Vec<Event<'_>>,
        ordinal: u128,
        span: Range<usize>,
    ) {
        events.push(Event::DeviceString {
            ordinal,
            shown: format!("\"cuda:{ordinal}\""),
            span,
            reaches: Vec::new(),
            in_entry_point: self.function.entry.in_entry,
            chooser: choosers::on_device_string(
                &self.function.choosers,
                choosers::Place {
                    in_entry: self.function.entry.in_entry,
                    in_program: self.file.in_program,
                },
            ),
        });
    }

    /// `let pat = init;`, before `init` is walked.
    pub(super) fn on_let(&mut self, sem: &Semantic<'_, '_>, names: &[String], init: &Expr) {
        fallback::on_let(&mut self.function.fallback, sem, names, init);
        model_code::on_let(&mut self.function.model_code, sem, names, init);
    }

    /// A method call, before its receiver is walked.
    pub(super) fn on_method_enter(&mut self, sem: &Semantic<'_, '_>, call: &syn::ExprMethodCall) {
        fallback::on_chain(&mut self.function.fallback, sem, call);
    }

    /// A method call; `entry` when its receiver's type and the method are known.
    pub(super) fn on_method_call<'a>(
        &mut self,
        sem: &Semantic<'_, 'a>,
        events: &mut Vec<Event<'a>>,
        call: &syn::ExprMethodCall,
        entry: Option<&'a Entry>,
    ) {
        let state = &mut self.function;
        fallback::on_method_call(&mut state.fallback, call);
        context::on_method_call(&mut state.context, call);
        // Model code's tensors are tensors, whether or not the walk knew their type.
        let operands = entry.or_else(|| model_code::follower_method(&state.model_code, sem, call));
        if operands.is_some_and(|entry| entry.role == Role::BinaryOp)
            && let Some(rhs) = call.args.first()
        {
            let shown = format!(".{}()", call.method);
            let quoted = || format!("`{shown}`");
            flow::check_operands(sem, events, quoted, &call.receiver, rhs, call.method.span());
            let op = model_code::Op {
                shown,
                span: sem.byte_range(call.method.span()),
            };
            model_code::check_operands(&state.model_code, sem, events, op, &call.receiver, rhs);
        }
        if let Some(entry) = entry
            && (matches!(entry.role, Role::Transfer { .. }) || entry.transfers)
        {
            loops::check_transfer(&state.loops, sem, events, entry, call);
        }
    }

    /// A call of a known item with its arguments (`Tensor::cat(&[a, b], 0)`).
    pub(super) fn on_item_call<'a>(
        &mut self,
        sem: &Semantic<'_, 'a>,
        events: &mut Vec<Event<'a>>,
        entry: &Entry,
        shown: &str,
        span: Range<usize>,
        args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
    ) {
        if entry.role == Role::Concat
            && let Some(list) = args.first()
        {
            flow::check_list(sem, events, format!("`{shown}`"), span.clone(), list);
            let op = model_code::Op {
                shown: shown.to_owned(),
                span,
            };
            model_code::check_list(&self.function.model_code, sem, events, op, list);
        }
    }

    /// A binary expression, after its operands were walked.
    pub(super) fn on_binary<'a>(
        &mut self,
        sem: &Semantic<'_, 'a>,
        events: &mut Vec<Event<'a>>,
        binary: &syn::ExprBinary,
    ) {
        flow::on_binary(sem, events, binary);
        fallback::on_binary(&mut self.function.fallback, binary);
        model_code::on_binary(&self.function.model_code, sem, events, binary);
    }

    /// A value compared (an operand of `==` or `!=`, the value of `matches!`), before it is
    /// walked.
    pub(super) fn on_compared(&mut self, sem: &Semantic<'_, '_>, value: &Expr) {
        fallback::on_compared(&mut self.function.fallback, sem, value);
    }

    /// The value a `match` or `if let` looks at.
    pub(super) fn on_scrutinee(&mut self, expr: &Expr) {
        fallback::on_scrutinee(&mut self.function.fallback, expr);
    }

    /// A `match`, before its scrutinee is walked.
    pub(super) fn on_match(&mut self, sem: &Semantic<'_, '_>, matched: &syn::ExprMatch) {
        fallback::on_match(&mut self.function.fallback, sem, matched);
    }

    /// An `if let` or `while let`, before its value is walked.
    pub(super) fn on_let_expr(&mut self, sem: &Semantic<'_, '_>, binding: &syn::ExprLet) {
        fallback::on_let_expr(&mut self.function.fallback, sem, binding);
    }

    /// A macro call, before its body (if it is code) is walked.
    pub(super) fn on_macro(&mut self, mac: &syn::Macro) {
        fallback::on_macro(&mut self.function.fallback, mac);
    }

    /// A `match` on `scrutinee`, before its arms are walked; returns whether it dispatches on
    /// the caller's device ([`Analyses::leave_match`] undoes it).
    pub(super) fn enter_match(&mut self, scrutinee: &Expr) -> bool {
        let choosers = &mut self.function.choosers;
        let dispatches = choosers::reads_device_param(choosers, scrutinee);
        choosers.dispatching += usize::from(dispatches);
        dispatches
    }

    pub(super) fn leave_match(&mut self, dispatched: bool) {
        self.function.choosers.dispatching -= usize::from(dispatched);
    }

    /// An arm of a `match` on `scrutinee`, before its body is walked; returns what to restore
    /// after it.
    pub(super) fn on_arm(&mut self, scrutinee: &Expr, arm: &syn::Arm) -> (bool, usize) {
        (
            defaults::on_arm(&mut self.function.defaults, arm),
            self.function.choosers.enter_arm(scrutinee, arm),
        )
    }

    pub(super) fn after_arm(&mut self, (outer, bound): (bool, usize)) {
        self.function.defaults.in_default_arm = outer;
        self.function.choosers.leave_arm(bound);
    }

    pub(super) fn on_loop_enter(
        &mut self,
        sem: &mut Semantic<'_, '_>,
        keyword: Range<usize>,
        body: &syn::Block,
    ) {
        loops::enter(&mut self.function.loops, sem, keyword, body);
    }

    pub(super) fn on_loop_exit(&mut self) {
        loops::exit(&mut self.function.loops);
    }

    /// Entering an item or block that is all entry point (`#[cfg(test)]`, a thread's closure);
    /// returns what to restore.
    pub(super) fn enter_entry_region(&mut self, region: bool) -> (bool, bool) {
        entry::enter_region(&mut self.file, &mut self.function.entry, region)
    }

    pub(super) fn leave_entry_region(&mut self, outer: (bool, bool)) {
        entry::leave_region(&mut self.file, &mut self.function.entry, outer);
    }

    /// A thread's closure (the per-rank worker): an entry point; returns what to restore.
    /// Entering the closure of a spawned thread: an entry point in a program's code; in
    /// library code, for the thread's own current context only. Returns the outer state.
    pub(super) fn enter_thread(&mut self) -> (bool, bool) {
        let entry = &mut self.function.entry;
        let outer = (entry.in_entry, entry.library_thread);
        if !entry.in_entry && !self.file.in_program {
            entry.library_thread = true;
        } else {
            entry.in_entry = true;
        }
        outer
    }

    pub(super) fn leave_thread(&mut self, (in_entry, library_thread): (bool, bool)) {
        self.function.entry.in_entry = in_entry;
        self.function.entry.library_thread = library_thread;
    }
}
