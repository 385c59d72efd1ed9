//! The generator of candle's CUDA function list, from the cudarc list and candle's source.

use super::cudarc::*;
use super::*;

/// A function of candle's CUDA device, with its body's calls.
struct CandleFunction {
    path: String,
    kind: Kind,
    ordinal: Option<(usize, String)>,
    body: syn::Block,
}

/// The calls of a candle body, as written (`cudarc::driver::result::mem_get_info`), and its
/// `bind_to_thread`s.
#[derive(Default)]
struct CandleCalls {
    events: Vec<Event>,
    /// Calls of other functions of the same type (`self.alloc_zeros(..)`, `Self::new_cuda(..)`).
    own: BTreeSet<String>,
    /// Whether the body calls into cudarc: a `cudarc::` function, or a method of the device's
    /// stream, context, cuBLAS handle or cuRAND generator that is more than a getter.
    cudarc: bool,
}

/// Methods of the device's cudarc values that make no CUDA call.
const GETTERS: &[&str] = &[
    "clone",
    "ordinal",
    "is_event_tracking",
    "disable_event_tracking",
    "lock",
    "read",
    "write",
    "unwrap",
    "w",
    "cu_stream",
];

impl<'ast> Visit<'ast> for CandleCalls {
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        syn::visit::visit_expr_call(self, call);
        if let syn::Expr::Path(path) = &*call.func {
            let text = path.path.to_token_stream().to_string().replace(' ', "");
            if let Some(name) = text.strip_prefix("Self::") {
                self.own.insert(name.to_owned());
            }
            self.cudarc |= text.starts_with("cudarc::");
            self.events.push(Event::Call(vec![text]));
        }
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        syn::visit::visit_expr_method_call(self, call);
        let receiver = call.receiver.to_token_stream().to_string().replace(' ', "");
        let method = call.method.to_string();
        if method == "bind_to_thread" {
            self.events.push(Event::Bind);
        } else if receiver == "self" {
            self.own.insert(method);
        } else if ["stream", "context", "blas", "curand"]
            .iter()
            .any(|field| receiver.contains(field))
            && !GETTERS.contains(&method.as_str())
        {
            self.cudarc = true;
        }
    }
}

fn collect_candle_impls(file: &Path, ty: &str, prefix: &str, out: &mut Vec<CandleFunction>) {
    for item in parse_source(file).items {
        let syn::Item::Impl(block) = item else {
            continue;
        };
        let syn::Type::Path(self_ty) = &*block.self_ty else {
            continue;
        };
        if self_ty.path.segments.last().is_none_or(|s| s.ident != ty) {
            continue;
        }
        // A trait's functions (`BackendDevice::new`) are callable as `CudaDevice::new` too.
        let of_trait = block.trait_.is_some();
        for item in block.items {
            let syn::ImplItem::Fn(method) = item else {
                continue;
            };
            if !(of_trait || public(&method.vis)) {
                continue;
            }
            out.push(CandleFunction {
                path: format!("{prefix}::{ty}::{}", method.sig.ident),
                kind: if method.sig.receiver().is_some() {
                    Kind::Method
                } else {
                    Kind::Fn
                },
                ordinal: ordinal_param(&method.sig),
                body: method.block,
            });
        }
    }
}

#[test]
#[ignore = "rewrites src/api/candle-0.11-cuda.functions from the source in $CANDLE_SRC"]
fn generate_candle_function_list() {
    let root = source_dir("CANDLE_SRC");
    let version = root
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("candle-core");
    let (cudarc, errors) = parse_list(&read_api_file(CUDARC_LIST));
    assert!(errors.is_empty(), "{CUDARC_LIST}: {errors:?}");

    let mut functions = Vec::new();
    let backend = root.join("src/cuda_backend");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&backend)
        .unwrap_or_else(|err| panic!("{}: {err}", backend.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .collect();
    files.sort();
    for file in &files {
        collect_candle_impls(file, "CudaDevice", "candle_core", &mut functions);
    }
    let mut devices = Vec::new();
    collect_candle_impls(
        &root.join("src/device.rs"),
        "Device",
        "candle_core",
        &mut devices,
    );
    // `Device`'s CUDA constructors: they reach `CudaDevice` or `new_cuda` (Metal's do not).
    devices.retain(|function| {
        let body = function.body.to_token_stream().to_string();
        function.ordinal.is_some() && (body.contains("CudaDevice") || body.contains("new_cuda"))
    });
    functions.extend(devices);
    functions.sort_by(|a, b| a.path.cmp(&b.path));

    let mut out = format!(
        "# {version}, CUDA: every method and associated function of `CudaDevice`\n\
         # (src/cuda_backend, re-exported as `candle_core::CudaDevice`) and every CUDA constructor of\n\
         # `Device` (src/device.rs) that changes the current device or context, acts on whichever\n\
         # one is current, or takes a GPU ordinal.\n\
         # Generated by `generate_candle_function_list` in linter/tests/api_tables/candle.rs from the\n\
         # crate's source (CANDLE_SRC=<folder of {version}> cargo test -p cargo-placement --test\n\
         # api_tables -- --ignored generate_candle), using {CUDARC_LIST} for the cudarc calls;\n\
         # reviewed; `candle.toml` must agree with it.\n\
         {FORMAT}\n\n"
    );
    let calls: BTreeMap<&str, CandleCalls> = functions
        .iter()
        .map(|function| {
            let mut calls = CandleCalls::default();
            calls.visit_block(&function.body);
            (function.path.as_str(), calls)
        })
        .collect();
    // Which functions reach cudarc, also through the type's other functions.
    let mut reach: BTreeSet<String> = calls
        .iter()
        .filter(|(_, calls)| calls.cudarc)
        .map(|(path, _)| last_segment(path).to_owned())
        .collect();
    loop {
        let before = reach.len();
        for (path, calls) in &calls {
            if calls.own.iter().any(|name| reach.contains(name)) {
                reach.insert(last_segment(path).to_owned());
            }
        }
        if reach.len() == before {
            break;
        }
    }
    let mut through_cudarc = Vec::new();
    let mut plain = Vec::new();
    for function in &functions {
        let calls = &calls[function.path.as_str()];
        let mut bound = false;
        let mut set = None;
        let mut used = None;
        for event in &calls.events {
            match event {
                Event::Bind => {
                    bound = true;
                    set.get_or_insert_with(|| "bind_to_thread".to_owned());
                }
                Event::Call(paths) => {
                    for path in paths {
                        match cudarc.get(path.as_str()).map(|entry| entry.role) {
                            Some(Role::SetCurrentDevice) => {
                                set.get_or_insert_with(|| path.clone());
                            }
                            Some(Role::CurrentDeviceUser) if !bound => {
                                used.get_or_insert_with(|| path.clone());
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
        let (role, why) = match (&function.ordinal, set, used) {
            (Some((_, param)), _, _) => (Role::ExplicitDevice, format!("`{param}` is a device")),
            (None, Some(callee), _) => (Role::SetCurrentDevice, format!("calls {callee}")),
            (None, None, Some(callee)) => (Role::CurrentDeviceUser, format!("calls {callee}")),
            (None, None, None) => {
                let name = last_segment(&function.path).to_owned();
                if reach.contains(&name) {
                    through_cudarc.push(name);
                } else {
                    plain.push(name);
                }
                continue;
            }
        };
        let entry = Entry {
            kind: function.kind,
            role,
            ordinal: function.ordinal.as_ref().map(|(index, _)| *index),
        };
        out.push_str(&list_line(&function.path, &entry, &why));
        out.push('\n');
    }
    out.push_str(
        "\n# Not listed: `CudaDevice` methods that act through cudarc's safe API (which binds the\n\
         # device's context itself, or acts through the device's stream, module or generator), and\n\
         # those that make no CUDA call.\n",
    );
    name_lines(&mut out, "through cudarc's safe API", &through_cudarc);
    name_lines(&mut out, "no CUDA call", &plain);
    write_list(CANDLE_LIST, &out);
}
