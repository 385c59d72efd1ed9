//! Where `Default::default()` is a device: burn's devices implement `Default` (its default
//! device: GPU 0, or the adapter the graphics API prefers), and code names one as
//! `Default::default()` wherever the type is known from where it goes: a burn tensor
//! constructor's device argument, a `let` of a device type, a device parameter of the
//! workspace's own functions (`train::<Wgpu>(config, Default::default())`, or `let device =
//! Default::default();` handed on as `&device`), and a payload of a library's device variant
//! (`DispatchDevice::Cuda(Default::default())`).

use syn::spanned::Spanned;
use syn::{Expr, Pat, Type};

use super::Checker;
use crate::analysis::ApiUse;
use crate::api::Entry;
use crate::rust::resolve::semantic::scope::Resolution;
use crate::rust::resolve::semantic::syntax::shown;

/// burn's backends whose default device is the CPU: their only device, or (libtorch's, candle's)
/// the default of theirs.
const CPU_BACKENDS: &[&str] = &["NdArray", "Flex", "Cpu", "LibTorch", "Candle"];

/// Whether a call names a backend whose default device is the CPU in its generic arguments
/// (`train::<Autodiff<NdArray<f32>>>(..)`): its `Default::default()` device chooses no GPU.
fn for_cpu_backend(func: &syn::Path) -> bool {
    fn names_cpu(ty: &Type) -> bool {
        let Type::Path(path) = ty else { return false };
        path.path.segments.iter().any(|segment| {
            CPU_BACKENDS.iter().any(|name| segment.ident == name)
                || generic_types(&segment.arguments).any(names_cpu)
        })
    }
    fn generic_types(arguments: &syn::PathArguments) -> impl Iterator<Item = &Type> {
        let args = match arguments {
            syn::PathArguments::AngleBracketed(angle) => Some(&angle.args),
            _ => None,
        };
        (args.into_iter().flatten()).filter_map(|arg| match arg {
            syn::GenericArgument::Type(ty) => Some(ty),
            _ => None,
        })
    }
    (func.segments.iter()).any(|segment| generic_types(&segment.arguments).any(names_cpu))
}

impl<'a> Checker<'_, 'a> {
    /// A `let` of no written type bound to `Default::default()`: its type is what the name is
    /// handed to, so it is remembered until then; any other `let` of the name forgets it.
    pub(super) fn note_untyped_default(&mut self, pat: &Pat, init: &Expr) {
        let Pat::Ident(ident) = pat else { return };
        let name = ident.ident.to_string();
        self.untyped_defaults.retain(|(bound, _)| *bound != name);
        if let Some(func) = self.default_call(init) {
            self.untyped_defaults.push((name, func.clone()));
        }
    }

    /// A call of the workspace's function `path`: the `Default::default()` handed as one of
    /// its device parameters (directly, or through a name bound to it) is the backend's
    /// default device, in a file that uses burn.
    pub(super) fn defaults_handed(&mut self, func: &syn::Path, path: &str, args: &[&Expr]) {
        let places = self.sem.cx.model.device_params(path);
        if places.is_empty() || for_cpu_backend(func) {
            return;
        }
        for place in places {
            let Some(arg) = args.get(*place) else {
                continue;
            };
            let value = match arg {
                Expr::Reference(reference) => &*reference.expr,
                other => other,
            };
            let func = match self.default_call(value) {
                Some(func) => func.clone(),
                None => {
                    let Expr::Path(named) = value else { continue };
                    let Some(name) = named.path.get_ident().map(ToString::to_string) else {
                        continue;
                    };
                    let Some(at) =
                        (self.untyped_defaults.iter()).position(|(bound, _)| *bound == name)
                    else {
                        continue;
                    };
                    self.untyped_defaults.remove(at).1
                }
            };
            if let Some(found) = self.sem.burn_default() {
                self.use_default(&func, found);
            }
        }
    }

    /// `DispatchDevice::Cuda(Default::default())`: the default of the variant's payload, a
    /// device type of the tables (`burn::backend::cuda::CudaDevice::default`).
    pub(super) fn default_payload(&mut self, payload: &str, args: &[&Expr]) -> bool {
        let [arg] = args else { return false };
        let Some(func) = self.default_call(arg) else {
            return false;
        };
        let path = format!("{payload}::default");
        let Some(entry) = self.sem.cx.api.item(&path) else {
            return false;
        };
        let func = func.clone();
        self.use_default(&func, (path, entry));
        true
    }

    /// `Tensor::ones(shape, &Default::default())` in a file that uses burn: the argument's
    /// type is the backend's device, so `Default::default()` is its default device.
    pub(super) fn default_device_argument(&mut self, arg: &Expr) -> bool {
        let value = match arg {
            Expr::Reference(reference) => &*reference.expr,
            other => other,
        };
        let Some(func) = self.default_call(value) else {
            return false;
        };
        let Some(found) = self.sem.burn_default() else {
            return false;
        };
        self.use_default(func, found);
        true
    }

    /// `let d: B::Device = Default::default();` and `let d: Device = Default::default();`.
    pub(super) fn check_default_call(&mut self, ty: &Type, init: &Expr) {
        let Some(func) = self.default_call(init) else {
            return;
        };
        let Type::Path(declared) = ty else { return };
        if declared.qself.is_some() {
            return;
        }
        let found = match self.sem.resolve(&declared.path) {
            Resolution::Generic { rest } if rest.last().is_some_and(|last| last == "Device") => {
                self.sem.burn_default()
            }
            Resolution::Path { path, local: false } => {
                let path = format!("{}::default", path.join("::"));
                self.sem.cx.api.item(&path).map(|entry| (path, entry))
            }
            _ => None,
        };
        if let Some(found) = found {
            self.use_default(func, found);
        }
    }

    /// The callee of `expr` when it is `Default::default()`.
    fn default_call<'e>(&self, expr: &'e Expr) -> Option<&'e syn::ExprPath> {
        let Expr::Call(call) = expr else {
            return None;
        };
        let Expr::Path(func) = &*call.func else {
            return None;
        };
        let is_default = call.args.is_empty()
            && matches!(
                self.sem.resolve(&func.path),
                Resolution::Path { path, .. } if path.join("::") == "std::default::Default::default"
            );
        is_default.then_some(func)
    }

    /// The default device `found` chosen where `func` (`Default::default`) is called.
    fn use_default(&mut self, func: &syn::ExprPath, (path, entry): (String, &'a Entry)) {
        let (shown, span) = (shown(&func.path), self.sem.byte_range(func.span()));
        self.use_api(ApiUse::new(entry, path, shown, span));
    }
}
