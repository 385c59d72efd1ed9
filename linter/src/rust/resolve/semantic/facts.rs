//! Device facts: which device an expression definitely names (a device value) or is on (a
//! tensor), from where devices are named (`Device::Cpu`, `Device::Cuda(1)`, `new_cuda(0)`,
//! `"cuda:1".parse()`), through tensor constructors that take them, transfers, and ops that
//! keep their operands' device. Only definite facts are kept: an unknown device never makes a
//! finding.

use std::ops::Range;

use syn::Expr;
use syn::spanned::Spanned;

use super::Semantic;
use super::syntax::{INFERENCE_DEPTH, device_string, is_arithmetic, literal_usize, peel, variable};
use crate::analysis::{Fact, How};
use crate::api::Role;

impl Semantic<'_, '_> {
    /// The device an expression definitely names (a device value, not a tensor).
    pub(in crate::rust::resolve) fn device_value(&self, expr: &Expr) -> Option<Fact> {
        let expr = peel(expr);
        if let Some(name) = variable(expr) {
            return self
                .scopes
                .var(&name)
                .and_then(|(var, _)| var.names.clone());
        }
        let named = |device: String, origin: Range<usize>| {
            Some(Fact {
                device,
                origin,
                how: How::Named,
            })
        };
        match expr {
            Expr::Path(path) => {
                let (_, entry) = self.known_path(&path.path)?;
                match &entry.role {
                    Role::CpuDevice => named("cpu".to_owned(), self.byte_range(path.span())),
                    Role::ImplicitDevice {
                        fixed_device: Some(device),
                    } => named(device.clone(), self.byte_range(path.span())),
                    _ => None,
                }
            }
            Expr::Call(call) => {
                let Expr::Path(func) = &*call.func else {
                    return None;
                };
                let (_, entry) = self.known_path(&func.path)?;
                match &entry.role {
                    Role::CpuDevice => named("cpu".to_owned(), self.byte_range(call.span())),
                    // A fallback may be the CPU: its device is not definite.
                    Role::ExplicitDevice { ordinal, gpu } if !entry.may_fall_back => {
                        let (ordinal, _) = literal_usize(call.args.iter().nth(*ordinal)?)?;
                        named(format!("{gpu}:{ordinal}"), self.byte_range(call.span()))
                    }
                    _ => None,
                }
            }
            Expr::MethodCall(call) if call.method == "parse" => {
                let ordinal = device_string(peel(&call.receiver))?;
                named(format!("cuda:{ordinal}"), self.byte_range(call.span()))
            }
            // tch's creation options: `(Kind::Float, device)`.
            Expr::Tuple(tuple) => tuple.elems.iter().find_map(|elem| self.device_value(elem)),
            _ => None,
        }
    }

    /// The device a tensor expression is definitely on.
    pub(in crate::rust::resolve) fn tensor_device(&self, expr: &Expr) -> Option<Fact> {
        self.tensor_device_within(expr, INFERENCE_DEPTH)
    }

    fn tensor_device_within(&self, expr: &Expr, depth: usize) -> Option<Fact> {
        let depth = depth.checked_sub(1)?;
        let expr = peel(expr);
        if let Some(name) = variable(expr) {
            return self.scopes.var(&name).and_then(|(var, _)| var.on.clone());
        }
        match expr {
            Expr::Call(call) => {
                let Expr::Path(func) = &*call.func else {
                    return None;
                };
                let (_, entry) = self.known_path(&func.path)?;
                match &entry.role {
                    Role::TensorConstructor { device } => {
                        let fact = self.device_value(call.args.iter().nth(*device)?)?;
                        Some(Fact {
                            how: How::Created,
                            origin: self.byte_range(call.span()),
                            ..fact
                        })
                    }
                    Role::CpuTensor => Some(Fact {
                        device: "cpu".to_owned(),
                        origin: self.byte_range(call.span()),
                        how: How::Created,
                    }),
                    _ => None,
                }
            }
            Expr::MethodCall(call) => {
                let entry = self.method_entry(call)?;
                match &entry.role {
                    Role::Transfer { device } => {
                        let fact = self.device_value(call.args.iter().nth(*device)?)?;
                        Some(Fact {
                            how: How::Moved,
                            origin: self.byte_range(call.method.span()),
                            ..fact
                        })
                    }
                    Role::SameDevice => self.tensor_device_within(&call.receiver, depth),
                    Role::BinaryOp => self
                        .tensor_device_within(&call.receiver, depth)
                        .or_else(|| self.tensor_device_within(call.args.first()?, depth)),
                    _ => None,
                }
            }
            Expr::Binary(binary) if is_arithmetic(&binary.op) => self
                .tensor_device_within(&binary.left, depth)
                .or_else(|| self.tensor_device_within(&binary.right, depth)),
            _ => None,
        }
    }
}
