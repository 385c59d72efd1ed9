//! A device picked by hand the way `cuda_if_available` picks it: a GPU when one opens, the CPU
//! otherwise. Written as `Device::new_cuda(0).unwrap_or(Device::Cpu)` (or `unwrap_or_else`,
//! `or`, `or_else`), as a `match` or an `if let` on opening the GPU that goes on without it when
//! that fails (`Err(_) => Device::Cpu`, or an `Err` arm that only logs and lets the function
//! fall through to the CPU), or as `if tch::Cuda::is_available() { Device::Cuda(0) } else {
//! Device::Cpu }`. Each is a "best available" choice: the function's own implicit choice (and,
//! in a device chooser, its choice for its callers), and a fallback that may quietly run on
//! the CPU unless the path that falls back reports it.

use std::ops::Range;

use syn::Expr;
use syn::spanned::Spanned;

use crate::api::Role;
use crate::rust::resolve::semantic::Semantic;
use crate::rust::resolve::semantic::syntax::{device_variant, passes_value, shown};

/// A hand-written "best available" device.
#[derive(Debug)]
pub(in crate::rust::resolve) struct Written {
    /// The GPU constructor's path, where findings point.
    pub(in crate::rust::resolve) span: Range<usize>,
    /// How the choice reads in messages (`Device::new_cuda(..).unwrap_or(Device::Cpu)`).
    pub(in crate::rust::resolve) shown: String,
    /// Whether the path that falls back to the CPU says so (logs, prints or asserts).
    pub(in crate::rust::resolve) reported: bool,
}

/// What follows a statement until its function ends, for a `match` or `if let` whose fallback
/// goes on past it: the text after it, and whether the function's body ends in an error
/// (`Err(..)`, `bail!`) rather than a device.
#[derive(Clone, Copy, Debug)]
pub(in crate::rust::resolve) struct After<'t> {
    pub(in crate::rust::resolve) text: &'t str,
    pub(in crate::rust::resolve) ends_in_error: bool,
}

impl After<'_> {
    /// Whether the path that goes on past the statement falls back to a device, and whether
    /// it says so (a logging or printing macro after it).
    fn goes_on(after: Option<After<'_>>) -> Option<bool> {
        match after {
            Some(after) if after.ends_in_error => None,
            Some(after) => Some(text_reports(after.text)),
            None => Some(false),
        }
    }
}

/// Whether source text calls a reporting macro (`log::warn!(..)`, `println!(..)`).
fn text_reports(text: &str) -> bool {
    text.match_indices('!').any(|(at, _)| {
        let before = &text[..at];
        let word = before
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(before, |start| &before[start + 1..]);
        reporting(word) && text[at + 1..].starts_with(['(', '[', '{'])
    })
}

/// Whether a macro of this name tells a person something: one of [`REPORTING`], or a
/// project's own named for one (`log_device!`, `warn_once!`, `print_error!`).
pub(in crate::rust::resolve) fn reporting(name: &str) -> bool {
    REPORTING.contains(&name)
        || name
            .split('_')
            .any(|part| matches!(part, "log" | "warn" | "info" | "error" | "print" | "debug"))
}

/// Whether a function's body ends in an error rather than a value (`Err(..)`, `bail!(..)`).
pub(in crate::rust::resolve) fn ends_in_error(block: &syn::Block) -> bool {
    match block.stmts.last() {
        Some(syn::Stmt::Expr(tail, None)) => diverges(tail) && !matches!(tail, Expr::Return(_)),
        Some(syn::Stmt::Macro(mac)) => stops(&mac.mac),
        Some(syn::Stmt::Expr(Expr::Return(ret), _)) => ret.expr.as_deref().is_some_and(diverges),
        _ => false,
    }
}

/// Macros that tell a person something: a fallback path that calls one is not silent.
const REPORTING: &[&str] = &[
    "println", "eprintln", "print", "eprint", "info", "warn", "error", "debug", "trace", "log",
    "assert", "panic",
];

/// `gpu.unwrap_or(cpu)`, `gpu.unwrap_or_else(|_| cpu)`, `gpu.or(Ok(cpu))`,
/// `gpu.or_else(|_| Ok(cpu))`.
pub(in crate::rust::resolve) fn in_method_call(
    sem: &Semantic<'_, '_>,
    call: &syn::ExprMethodCall,
) -> Option<Written> {
    // Most method calls are no fallback: their name is looked at before anything is resolved.
    let fallback = fallback_of(call)?;
    let (gpu, cpu) = (
        gpu_value(sem, &call.receiver)?,
        falls_to_cpu(sem, fallback)?,
    );
    Some(Written {
        span: sem.byte_range(gpu.span()),
        shown: format!("{}(..).{}({cpu})", shown(gpu), call.method),
        reported: false,
    })
}

/// `match gpu { Ok(d) => d, Err(_) => cpu }`, or an `Err` arm that goes on without the GPU,
/// where the arm that opened it gives the device back.
pub(in crate::rust::resolve) fn in_match(
    sem: &Semantic<'_, '_>,
    matched: &syn::ExprMatch,
    after: Option<After<'_>>,
) -> Option<Written> {
    let gpu = gpu_value(sem, &matched.expr)?;
    let opened = matched
        .arms
        .iter()
        .find_map(|arm| opened_name(&arm.pat).map(|name| (name, arm)))?;
    // The arm gives the device back, or keeps it (`state.device = dev;`).
    let kept = match gives_back(&opened.1.body, &opened.0) {
        true => None,
        false => Some(kept_in(&opened.1.body, &opened.0)?),
    };
    let fallback = matched
        .arms
        .iter()
        .find(|arm| opened_name(&arm.pat).is_none() && !diverges(&arm.body))?;
    // An arm that gives no CPU lets the function go on without the GPU; where the GPU is kept,
    // the other arm keeps the CPU there.
    let on = match (kept, cpu_value(sem, &fallback.body)) {
        (Some(place), _) => match keeps_cpu(sem, &fallback.body, &place) {
            true => false,
            false => return None,
        },
        (None, Some(_)) => false,
        (None, None) => After::goes_on(after)?,
    };
    Some(Written {
        span: sem.byte_range(gpu.span()),
        shown: format!("match {}(..)", shown(gpu)),
        reported: reports(&fallback.body) || on,
    })
}

/// `if let Ok(d) = gpu { .. }` whose `else`, if any, goes on without the GPU; and
/// `if available() { gpu } else { cpu }`.
pub(in crate::rust::resolve) fn in_if(
    sem: &Semantic<'_, '_>,
    branch: &syn::ExprIf,
    after: Option<After<'_>>,
) -> Option<Written> {
    let otherwise = branch
        .else_branch
        .as_ref()
        .map(|(_, otherwise)| &**otherwise);
    if let Expr::Let(binding) = &*branch.cond
        && let Some(name) = opened_name(&binding.pat)
    {
        let gpu = gpu_value(sem, &binding.expr)?;
        let gives = returns_it(
            |visitor| syn::visit::Visit::visit_block(visitor, &branch.then_branch),
            &name,
        ) || block_value(&branch.then_branch).is_some_and(|value| holds(value, &name));
        if otherwise.is_some_and(diverges) || !gives {
            return None;
        }
        // Without an `else`, the function goes on without the GPU.
        let reported = match otherwise {
            Some(otherwise) => reports(otherwise),
            None => After::goes_on(after)?,
        };
        return Some(Written {
            span: sem.byte_range(gpu.span()),
            shown: format!("if let Ok(..) = {}(..)", shown(gpu)),
            reported,
        });
    }
    let check = availability_check(sem, &branch.cond)?;
    let gpu = block_value(&branch.then_branch).and_then(|then| gpu_value(sem, then))?;
    let cpu = falls_to_cpu(sem, otherwise?)?;
    let last = |path: &str| path.rsplit("::").next().unwrap_or(path).to_owned();
    Some(Written {
        span: sem.byte_range(gpu.span()),
        shown: format!(
            "if {}() {{ {}(..) }} else {{ {} }}",
            last(&check),
            last(&shown(gpu)),
            last(&cpu)
        ),
        reported: otherwise.is_some_and(reports),
    })
}

/// The GPU constructor (a table's explicit device: `Device::new_cuda`, `Device::Cuda`; or a
/// project's device chooser) whose value `expr` is, through `?`, `.ok()`, `.map(..)`, borrows and blocks.
fn gpu_value<'e>(sem: &Semantic<'_, '_>, expr: &'e Expr) -> Option<&'e syn::Path> {
    match expr {
        Expr::Call(call) => {
            let Expr::Path(func) = &*call.func else {
                return None;
            };
            // `Ok(Device::new_cuda(0)?)`: the GPU, wrapped.
            let last = func.path.segments.last()?.ident.to_string();
            if matches!(last.as_str(), "Ok" | "Some") && call.args.len() == 1 {
                return gpu_value(sem, call.args.first()?);
            }
            // A table's own fallback (`cuda_if_available`) is followed as itself.
            let (_, entry) = sem.known_path(&func.path)?;
            // A function of the project that chooses a GPU for its callers
            // (`try_accelerator_device()`, which opens `new_cuda(0)`).
            if entry.chooser {
                return Some(&func.path);
            }
            let Role::ExplicitDevice { ordinal, gpu } = &entry.role else {
                return None;
            };
            // A project's function that opens the GPU a variant of its parameter names, given
            // a variant of another kind (`DeviceConfig::new(Device::Metal(0))` of one that opens
            // CUDA's GPUs too).
            let other_kind = !entry.builtin
                && (call.args.iter().nth(*ordinal))
                    .and_then(|arg| device_variant(arg, gpu))
                    .is_some_and(|(kind, _)| !kind);
            if other_kind {
                return None;
            }
            // Metal's device 0 is the Mac's one GPU (as `hardcoded_device` says): opening it,
            // or the CPU without it, chooses no GPU among others.
            let default_metal = gpu == "metal"
                && call.args.iter().nth(*ordinal).is_some_and(|arg| {
                    matches!(arg, Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(int), .. })
                        if int.base10_digits() == "0")
                });
            (!entry.may_fall_back && !default_metal).then_some(&func.path)
        }
        // `Device::new_cuda(0).unwrap()` in the branch an availability check chose: the GPU
        // that check found, or a panic where it lied.
        Expr::MethodCall(call) if passes_value(&call.method) || call.method == "map" => {
            gpu_value(sem, &call.receiver)
        }
        // `(Device::Cuda(0), None)`: a device with what goes with it (a dtype).
        Expr::Tuple(tuple) => tuple.elems.iter().find_map(|elem| gpu_value(sem, elem)),
        Expr::Try(inner) => gpu_value(sem, &inner.expr),
        Expr::Paren(inner) => gpu_value(sem, &inner.expr),
        Expr::Group(inner) => gpu_value(sem, &inner.expr),
        Expr::Reference(inner) => gpu_value(sem, &inner.expr),
        Expr::Block(block) => gpu_value(sem, block_value(&block.block)?),
        _ => None,
    }
}

/// How the CPU device whose value `expr` is reads (`Device::Cpu`), through `Ok(..)`,
/// `Some(..)`, borrows and blocks.
fn cpu_value(sem: &Semantic<'_, '_>, expr: &Expr) -> Option<String> {
    match expr {
        Expr::Path(path) => {
            let (_, entry) = sem.known_path(&path.path)?;
            (entry.role == Role::CpuDevice).then(|| shown(&path.path))
        }
        Expr::Call(call) => {
            let Expr::Path(func) = &*call.func else {
                return None;
            };
            let last = func.path.segments.last()?.ident.to_string();
            if matches!(last.as_str(), "Ok" | "Some") && call.args.len() == 1 {
                return cpu_value(sem, call.args.first()?);
            }
            let (_, entry) = sem.known_path(&func.path)?;
            // A project's function that opens the device a variant of its parameter names,
            // given the CPU's (`DeviceConfig::new(Device::Cpu)`): that variant.
            if let Role::ExplicitDevice { ordinal, .. } = &entry.role
                && !entry.builtin
                && let Some(Expr::Path(variant)) = call.args.iter().nth(*ordinal)
                && (variant.path.segments.last())
                    .is_some_and(|last| last.ident.to_string().eq_ignore_ascii_case("cpu"))
            {
                return Some(shown(&variant.path));
            }
            (entry.role == Role::CpuDevice).then(|| format!("{}()", shown(&func.path)))
        }
        Expr::Tuple(tuple) => tuple.elems.iter().find_map(|elem| cpu_value(sem, elem)),
        Expr::Paren(inner) => cpu_value(sem, &inner.expr),
        Expr::Group(inner) => cpu_value(sem, &inner.expr),
        Expr::Reference(inner) => cpu_value(sem, &inner.expr),
        Expr::Block(block) => cpu_value(sem, bound_value(&block.block)?),
        _ => None,
    }
}

/// The availability check a condition calls (`tch::Cuda::is_available()`), as written.
fn availability_check(sem: &Semantic<'_, '_>, cond: &Expr) -> Option<String> {
    let Expr::Call(call) = cond else {
        return match cond {
            Expr::Paren(inner) => availability_check(sem, &inner.expr),
            Expr::Binary(both) if matches!(both.op, syn::BinOp::And(_)) => {
                availability_check(sem, &both.left).or_else(|| availability_check(sem, &both.right))
            }
            _ => None,
        };
    };
    let Expr::Path(func) = &*call.func else {
        return None;
    };
    // Most conditions call no availability check: only a name that ends one is resolved.
    if !(func.path.segments.last())
        .is_some_and(|last| sem.cx.api.names.ends_availability(&last.ident.to_string()))
    {
        return None;
    }
    let crate::rust::resolve::semantic::scope::Resolution::Path { path, .. } =
        sem.resolve(&func.path)
    else {
        return None;
    };
    sem.cx
        .api
        .names
        .availability
        .contains(&path.join("::"))
        .then(|| shown(&func.path))
}

/// The hand-written "best available" devices that `expr`'s value may be: the expression itself,
/// or a branch of its `if`s, `match`es and blocks.
pub(in crate::rust::resolve) fn in_value(
    sem: &Semantic<'_, '_>,
    expr: &Expr,
    out: &mut Vec<Written>,
) {
    let found = match expr {
        Expr::MethodCall(call) => in_method_call(sem, call),
        Expr::Match(matched) => in_match(sem, matched, None),
        Expr::If(branch) => in_if(sem, branch, None),
        _ => None,
    };
    // An `else if` chain holds one choice per GPU it tries.
    let chained = found.is_some() && matches!(expr, Expr::If(_));
    if let Some(found) = found {
        out.push(found);
        if !chained {
            return;
        }
    }
    match expr {
        Expr::If(branch) => {
            if let Some(then) = block_value(&branch.then_branch) {
                in_value(sem, then, out);
            }
            if let Some((_, otherwise)) = &branch.else_branch {
                in_value(sem, otherwise, out);
            }
        }
        Expr::Match(matched) => matched
            .arms
            .iter()
            .for_each(|arm| in_value(sem, &arm.body, out)),
        Expr::Block(block) => {
            if let Some(tail) = block_value(&block.block) {
                in_value(sem, tail, out);
            }
        }
        Expr::Paren(inner) => in_value(sem, &inner.expr, out),
        Expr::Reference(inner) => in_value(sem, &inner.expr, out),
        Expr::Try(inner) => in_value(sem, &inner.expr, out),
        _ => {}
    }
}

/// A block's value: its tail expression, or what a `let` of the block bound to the name it
/// ends with (`let r = (Device::Cpu, dtype); r`).
fn bound_value(block: &syn::Block) -> Option<&Expr> {
    let tail = block_value(block)?;
    let Some(name) = (match tail {
        Expr::Path(path) => path.path.get_ident(),
        _ => None,
    }) else {
        return Some(tail);
    };
    let bound = block.stmts.iter().rev().find_map(|stmt| match stmt {
        syn::Stmt::Local(local) => match &local.pat {
            syn::Pat::Ident(bound) if bound.ident == *name => Some(&*local.init.as_ref()?.expr),
            _ => None,
        },
        _ => None,
    });
    Some(bound.unwrap_or(tail))
}

/// A block's value: its tail expression.
fn block_value(block: &syn::Block) -> Option<&Expr> {
    match block.stmts.last()? {
        syn::Stmt::Expr(tail, None) => Some(tail),
        _ => None,
    }
}

/// The CPU an `else` ends with, through the `else if` branches of a chain
/// (`else if metal_is_available() { .. } else { Device::Cpu }`).
fn falls_to_cpu(sem: &Semantic<'_, '_>, otherwise: &Expr) -> Option<String> {
    match otherwise {
        Expr::If(branch) => falls_to_cpu(sem, &branch.else_branch.as_ref()?.1),
        // `Device::new_metal(0).unwrap_or(Device::Cpu)`: another GPU, or else the CPU.
        Expr::MethodCall(call) if fallback_of(call).is_some() => {
            falls_to_cpu(sem, fallback_of(call)?)
        }
        other => cpu_value(sem, other),
    }
}

/// What `x.unwrap_or(..)`, `.unwrap_or_else(|| ..)`, `.or(..)` or `.or_else(|| ..)` falls back
/// to.
fn fallback_of(call: &syn::ExprMethodCall) -> Option<&Expr> {
    let fallback = ["unwrap_or", "unwrap_or_else", "or", "or_else"]
        .iter()
        .any(|name| call.method == name);
    if !fallback {
        return None;
    }
    match call.args.first()? {
        Expr::Closure(closure) => Some(&closure.body),
        other => Some(other),
    }
}

/// The name a pattern gives the GPU that opened (`Ok(device)`, `Some(device)`).
fn opened_name(pat: &syn::Pat) -> Option<String> {
    let syn::Pat::TupleStruct(tuple) = pat else {
        return None;
    };
    let last = tuple.path.segments.last()?;
    if last.ident != "Ok" && last.ident != "Some" {
        return None;
    }
    match tuple.elems.first()? {
        syn::Pat::Ident(name) => Some(name.ident.to_string()),
        _ => None,
    }
}

/// Whether code gives `name` back as its value or in a `return` (`device`, `return Ok(device)`,
/// `return (device, dtype)`): the device it opened is what the function chose.
fn gives_back(body: &Expr, name: &str) -> bool {
    returns_it(|visitor| syn::visit::Visit::visit_expr(visitor, body), name)
        || value_of(body).is_some_and(|value| holds(value, name))
}

/// The place an arm keeps the device it opened in (`guard.device = dev;`), as written.
fn kept_in(body: &Expr, name: &str) -> Option<String> {
    assignments(body).find_map(|(place, value)| holds(value, name).then(|| place.clone()))
}

/// Whether an arm keeps the CPU in `place` (`guard.device = Device::Cpu;`).
fn keeps_cpu(sem: &Semantic<'_, '_>, body: &Expr, place: &str) -> bool {
    assignments(body).any(|(kept, value)| kept == place && cpu_value(sem, value).is_some())
}

/// The assignments an arm's block makes, as the place written and the value.
fn assignments(body: &Expr) -> impl Iterator<Item = (String, &Expr)> {
    let stmts = match body {
        Expr::Block(block) => block.block.stmts.as_slice(),
        _ => &[],
    };
    let single = matches!(body, Expr::Assign(_)).then_some(body);
    stmts
        .iter()
        .filter_map(|stmt| match stmt {
            syn::Stmt::Expr(expr, _) => Some(expr),
            _ => None,
        })
        .chain(single)
        .filter_map(|expr| match expr {
            Expr::Assign(assign) => Some((shown_tokens(&assign.left), &*assign.right)),
            _ => None,
        })
}

/// A place as written, without spaces (`guard.device`).
fn shown_tokens(expr: &Expr) -> String {
    use quote::ToTokens;
    expr.to_token_stream().to_string().replace(' ', "")
}

/// Looks for a `return` whose value holds `name`, in what `walk` visits.
struct Returns<'n> {
    name: &'n str,
    found: bool,
}

impl<'ast> syn::visit::Visit<'ast> for Returns<'_> {
    fn visit_expr_return(&mut self, ret: &'ast syn::ExprReturn) {
        if let Some(value) = &ret.expr {
            self.found |= holds(value, self.name);
        }
    }
}

fn returns_it(walk: impl FnOnce(&mut Returns<'_>), name: &str) -> bool {
    let mut visitor = Returns { name, found: false };
    walk(&mut visitor);
    visitor.found
}

/// The value a block or expression ends with.
fn value_of(expr: &Expr) -> Option<&Expr> {
    match expr {
        Expr::Block(block) => value_of(block_value(&block.block)?),
        other => Some(other),
    }
}

/// Whether a value is `name`, or holds it (`Ok(name)`, `(name, dtype)`, `&name`).
fn holds(value: &Expr, name: &str) -> bool {
    match value {
        Expr::Path(path) => path.path.is_ident(name),
        Expr::Call(call) => call.args.iter().any(|arg| holds(arg, name)),
        Expr::Tuple(tuple) => tuple.elems.iter().any(|elem| holds(elem, name)),
        Expr::Reference(inner) => holds(&inner.expr, name),
        Expr::Paren(inner) => holds(&inner.expr, name),
        Expr::MethodCall(call) => holds(&call.receiver, name),
        _ => false,
    }
}

/// Whether code leaves without a device: returns, propagates or builds an error, panics.
fn diverges(expr: &Expr) -> bool {
    match expr {
        Expr::Return(_) | Expr::Break(_) | Expr::Continue(_) | Expr::Try(_) => true,
        Expr::Call(call) => matches!(&*call.func, Expr::Path(func)
            if func.path.segments.last().is_some_and(|last| last.ident == "Err")),
        Expr::Macro(mac) => stops(&mac.mac),
        Expr::Block(block) => block.block.stmts.last().is_some_and(|last| match last {
            syn::Stmt::Expr(tail, _) => diverges(tail),
            syn::Stmt::Macro(mac) => stops(&mac.mac),
            _ => false,
        }),
        Expr::Paren(inner) => diverges(&inner.expr),
        _ => false,
    }
}

/// Whether a macro stops the function (`panic!`, `bail!`, `unreachable!`).
fn stops(mac: &syn::Macro) -> bool {
    mac.path.segments.last().is_some_and(|last| {
        ["panic", "unreachable", "todo", "unimplemented", "bail"]
            .iter()
            .any(|name| last.ident == name)
    })
}

/// Whether code logs, prints or asserts something.
pub(in crate::rust::resolve) fn reports(expr: &Expr) -> bool {
    struct Reports(bool);
    impl<'ast> syn::visit::Visit<'ast> for Reports {
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            self.0 |= mac
                .path
                .segments
                .last()
                .is_some_and(|last| reporting(&last.ident.to_string()));
        }
    }
    let mut found = Reports(false);
    syn::visit::Visit::visit_expr(&mut found, expr);
    found.0
}
