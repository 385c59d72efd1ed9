//! Device parameters: the module's functions (and methods, and classes by their constructor)
//! that take a device, found by the parameter's name or by its use in the body, and the GPU
//! index a device string is built with.

use compact_str::CompactString;
use rustc_hash::FxHashSet;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use crate::analysis::says_gpu_index;
use crate::python::DeviceParam;
use crate::python::semantic::{last_name, string, takes_receiver};

/// The module's functions that take a device (`def generate(model, params, device)`), its
/// classes' methods that do (`self.load(path, device)`), and its classes whose constructor does
/// (`ModelRunner(config, rank)` for `def __init__(self, config, rank)` that calls
/// `torch.cuda.set_device(rank)`): each as `module.function` or `module.Class` with the
/// parameter's place among a call's positional arguments (none for a keyword-only one), its
/// name, and whether the function looks at it (false here; the checker marks it as it walks the
/// function). A parameter is a device by its name (`device`, `dev`, `..._device`, a GPU's index
/// such as `local_rank`) or by its use in the body: where a device goes (`set_device(rank)`,
/// `torch.device("cuda", rank)`, `.cuda(rank)`, `device=rank`, `f"cuda:{rank}"`).
pub(crate) fn device_params(body: &[Stmt], module: &str, text: &str) -> Vec<DeviceParam> {
    let mut found = Vec::new();
    if module.is_empty() {
        return found;
    }
    let mentions = Mentions::of(text);
    // Module-level functions, and each class's methods (`__init__` as the class, called to
    // construct one), whose receiver a call does not pass.
    let functions = body.iter().flat_map(|stmt| match stmt {
        Stmt::FunctionDef(def) => vec![(def, None, 0)],
        Stmt::ClassDef(class) => (class.body.iter())
            .filter_map(|stmt| match stmt {
                Stmt::FunctionDef(def) => Some((
                    def,
                    Some(class.name.as_str()),
                    usize::from(takes_receiver(def)),
                )),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    });
    for (def, class, skip) in functions {
        let positional = (def.parameters.posonlyargs.iter())
            .chain(&def.parameters.args)
            .enumerate()
            .skip(skip)
            .map(|(at, parameter)| (Some(at - skip), parameter));
        let keyword_only = (def.parameters.kwonlyargs.iter()).map(|parameter| (None, parameter));
        // Only a body that names a device at all can place with a parameter: most are not
        // walked again.
        let mut used: Option<FxHashSet<String>> =
            (!mentions.within(def.range())).then(FxHashSet::default);
        for (at, parameter) in positional.chain(keyword_only) {
            let name = parameter.parameter.name.as_str();
            let by_name = matches!(name, "device" | "dev")
                || name.ends_with("_device")
                || says_gpu_index(name);
            let mut by_use = || {
                used.get_or_insert_with(|| names_placing(&def.body))
                    .contains(name)
            };
            if by_name || by_use() {
                let path = match (class, def.name.as_str()) {
                    (None, name) => format!("{module}.{name}"),
                    (Some(class), "__init__") => format!("{module}.{class}"),
                    (Some(class), name) => format!("{module}.{class}.{name}"),
                };
                found.push(DeviceParam {
                    function: path,
                    at,
                    name: name.into(),
                    looked: false,
                    method: class.is_some() && def.name.as_str() != "__init__",
                });
            }
        }
    }
    found
}

/// The names of the methods the module's classes define, constructors aside, one for each
/// definition ([`Summary::methods`](crate::python::Summary::methods)).
pub(crate) fn methods(body: &[Stmt]) -> Vec<CompactString> {
    let classes = body.iter().filter_map(|stmt| match stmt {
        Stmt::ClassDef(class) => Some(class),
        _ => None,
    });
    (classes.flat_map(|class| &class.body))
        .filter_map(|stmt| match stmt {
            Stmt::FunctionDef(def) if def.name.as_str() != "__init__" => {
                Some(def.name.as_str().into())
            }
            _ => None,
        })
        .collect()
}

/// Where a module's text says `cuda` or `device`, found in one pass over it, so that whether a
/// function's text does is a lookup.
struct Mentions(Vec<std::ops::Range<usize>>);

impl Mentions {
    fn of(text: &str) -> Mentions {
        let mut found: Vec<std::ops::Range<usize>> = ["cuda", "device"]
            .iter()
            .flat_map(|word| {
                memchr::memmem::find_iter(text.as_bytes(), word).map(|at| at..at + word.len())
            })
            .collect();
        found.sort_unstable_by_key(|range| range.start);
        Mentions(found)
    }

    /// Whether one of the words lies wholly inside `range`.
    fn within(&self, range: ruff_text_size::TextRange) -> bool {
        let (start, end) = (usize::from(range.start()), usize::from(range.end()));
        let first = self.0.partition_point(|word| word.start < start);
        self.0[first..]
            .iter()
            .take_while(|word| word.start < end)
            .any(|word| word.end <= end)
    }
}

/// The bare names a function's body hands where a device goes: `set_device(n)`,
/// `torch.device(kind, n)`, `.cuda(n)`, `device=n`, `f"cuda:{n}"`, `"cuda:" + str(n)`,
/// `"cuda:{}".format(n)`, `"cuda:%d" % n`.
fn names_placing(body: &[Stmt]) -> FxHashSet<String> {
    struct Placing(FxHashSet<String>);
    impl Placing {
        fn name(&mut self, expr: Option<&Expr>) {
            if let Some(Expr::Name(name)) = expr {
                self.0.insert(name.id.as_str().to_owned());
            }
        }
    }
    impl<'a> Visitor<'a> for Placing {
        fn visit_expr(&mut self, expr: &'a Expr) {
            match expr {
                Expr::Call(call) => {
                    match last_name(&call.func) {
                        "set_device" | "cuda" => self.name(call.arguments.args.first()),
                        "device" => self.name(call.arguments.find_argument_value("index", 1)),
                        _ => {}
                    }
                    self.name(call.arguments.find_keyword("device").map(|k| &k.value));
                    self.name(gpu_index_in(expr));
                }
                Expr::BinOp(_) => self.name(gpu_index_in(expr)),
                Expr::FString(fstring) => {
                    let mut literal = String::new();
                    for element in fstring.value.elements() {
                        match element {
                            ast::InterpolatedStringElement::Literal(text) => {
                                literal.push_str(text);
                            }
                            ast::InterpolatedStringElement::Interpolation(value) => {
                                if literal.ends_with("cuda:") {
                                    self.name(Some(&value.expression));
                                }
                                literal.clear();
                            }
                        }
                    }
                }
                _ => {}
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut placing = Placing(FxHashSet::default());
    placing.visit_body(body);
    placing.0
}

/// The GPU index a device string is built with, other than by an f-string: `"cuda:" +
/// str(n)`, `"cuda:{}".format(n)`, `"cuda:%d" % n` (`n`, without its `str(...)`).
pub(crate) fn gpu_index_in(expr: &Expr) -> Option<&Expr> {
    let gpu_string = |expr: &Expr| string(expr).is_some_and(|text| text.starts_with("cuda:"));
    let index = match expr {
        Expr::BinOp(op)
            if matches!(op.op, ast::Operator::Add | ast::Operator::Mod) && gpu_string(&op.left) =>
        {
            &*op.right
        }
        Expr::Call(call)
            if matches!(&*call.func, Expr::Attribute(method)
                if method.attr.as_str() == "format" && gpu_string(&method.value)) =>
        {
            call.arguments.args.first()?
        }
        _ => return None,
    };
    match index {
        Expr::Call(call)
            if matches!(&*call.func, Expr::Name(f) if f.id.as_str() == "str")
                && call.arguments.len() == 1 =>
        {
            call.arguments.args.first()
        }
        other => Some(other),
    }
}
