//! [`Placed`]: anything that holds tensors on devices, visited with the path of each tensor
//! (`model.encoder.layers[3].weight`) and moved as a whole.
//!
//! Implemented for [`Tensor`], references, `Box`, `Arc` and `Rc` (of `Clone` values, so that
//! moving can copy what other owners share), `Option`, `Result` (its `Ok` value), slices,
//! arrays, `Vec`, tuples, and through `#[derive(Placed)]` for structs and enums.

use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

use crate::{Device, Error, Result, Tensor};

/// One step of a path to a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segment<'a> {
    /// An argument or variable name, where a path starts.
    Root(&'a str),
    /// A named field: `.weight`.
    Field(&'a str),
    /// A tuple field or element index: `.0` for tuples, `[3]` for sequences.
    TupleField(usize),
    Index(usize),
    /// An enum variant whose fields follow: `Some`, `Linear`.
    Variant(&'a str),
}

/// Where a tensor sits inside an argument, as a chain of segments on the stack: building one
/// costs nothing, and it is only rendered to text when a check fails.
#[derive(Clone, Copy, Debug)]
pub struct TensorPath<'a> {
    parent: Option<&'a TensorPath<'a>>,
    segment: Segment<'a>,
}

impl<'a> TensorPath<'a> {
    /// A path starting at an argument or variable named `name`.
    pub const fn root(name: &'a str) -> TensorPath<'a> {
        TensorPath {
            parent: None,
            segment: Segment::Root(name),
        }
    }

    /// This path followed by `segment`.
    pub const fn join(&'a self, segment: Segment<'a>) -> TensorPath<'a> {
        TensorPath {
            parent: Some(self),
            segment,
        }
    }

    /// The argument or variable the path starts at.
    pub fn root_name(&self) -> &'a str {
        match (self.parent, self.segment) {
            (Some(parent), _) => parent.root_name(),
            (None, Segment::Root(name)) => name,
            (None, _) => "",
        }
    }
}

impl fmt::Display for TensorPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(parent) = self.parent {
            write!(f, "{parent}")?;
        }
        match self.segment {
            Segment::Root(name) => f.write_str(name),
            Segment::Field(name) => write!(f, ".{name}"),
            Segment::TupleField(index) => write!(f, ".{index}"),
            Segment::Index(index) => write!(f, "[{index}]"),
            // `Some` and friends add nothing a reader needs.
            Segment::Variant(_) => Ok(()),
        }
    }
}

/// A value that holds tensors on devices.
pub trait Placed {
    /// Calls `visit` with the path and device of every tensor inside, in field order.
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device));

    /// Moves every tensor inside to `device`, in place.
    ///
    /// # Errors
    /// The first failed move (out of memory, a missing GPU), or a tensor behind a shared
    /// reference, which cannot be replaced.
    fn move_tensors(&mut self, path: &TensorPath<'_>, device: &Device) -> Result<()>;

    /// A copy of this value with every tensor on `device` (the recursive `move_to_device` the
    /// PyTorch literature writes by hand over lists and dicts).
    ///
    /// # Errors
    /// As [`Placed::move_tensors`].
    fn to_device(&self, device: &Device) -> Result<Self>
    where
        Self: Sized + Clone,
    {
        let mut moved = self.clone();
        moved.move_tensors(&TensorPath::root("self"), device)?;
        Ok(moved)
    }

    /// Every tensor's path (rooted at `name`) and device; allocates, for reports and tests.
    fn placements(&self, name: &str) -> Vec<(String, Device)> {
        let mut out = Vec::new();
        self.visit_devices(&TensorPath::root(name), &mut |path, device| {
            out.push((path.to_string(), device))
        });
        out
    }

    /// The one device every tensor is on: `Ok(None)` without tensors.
    ///
    /// # Errors
    /// [`Error::ScatteredTensors`] naming every tensor and its device when they disagree, so a
    /// model can be checked for parameters spread over several devices.
    fn device(&self, name: &str) -> Result<Option<Device>> {
        let mut first = None;
        let mut scattered = false;
        self.visit_devices(&TensorPath::root(name), &mut |_, device| match first {
            None => first = Some(device),
            Some(seen) => scattered |= seen != device,
        });
        if scattered {
            return Err(Error::ScatteredTensors {
                placements: self.placements(name),
            });
        }
        Ok(first)
    }
}

impl Placed for Tensor {
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
        visit(path, Tensor::device(self));
    }

    fn move_tensors(&mut self, _: &TensorPath<'_>, device: &Device) -> Result<()> {
        *self = Tensor::to_device(self, device)?;
        Ok(())
    }
}

fn shared(path: &TensorPath<'_>, holder: &str) -> Error {
    Error::NotMovable {
        path: path.to_string(),
        reason: format!("it is behind {holder}"),
    }
}

impl<T: Placed + ?Sized> Placed for &T {
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
        (**self).visit_devices(path, visit);
    }

    fn move_tensors(&mut self, path: &TensorPath<'_>, _: &Device) -> Result<()> {
        Err(shared(path, "a shared reference"))
    }
}

impl<T: Placed + ?Sized> Placed for &mut T {
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
        (**self).visit_devices(path, visit);
    }

    fn move_tensors(&mut self, path: &TensorPath<'_>, device: &Device) -> Result<()> {
        (**self).move_tensors(path, device)
    }
}

impl<T: Placed + ?Sized> Placed for Box<T> {
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
        (**self).visit_devices(path, visit);
    }

    fn move_tensors(&mut self, path: &TensorPath<'_>, device: &Device) -> Result<()> {
        (**self).move_tensors(path, device)
    }
}

macro_rules! shared_pointer {
    ($pointer:ident) => {
        /// Moving clones the value pointed to when it has other owners, as `make_mut` does, so
        /// those owners keep theirs.
        impl<T: Placed + Clone> Placed for $pointer<T> {
            fn visit_devices(
                &self,
                path: &TensorPath<'_>,
                visit: &mut dyn FnMut(&TensorPath<'_>, Device),
            ) {
                (**self).visit_devices(path, visit);
            }

            fn move_tensors(&mut self, path: &TensorPath<'_>, device: &Device) -> Result<()> {
                $pointer::make_mut(self).move_tensors(path, device)
            }
        }
    };
}

shared_pointer!(Arc);
shared_pointer!(Rc);

impl<T: Placed> Placed for Option<T> {
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
        if let Some(inner) = self {
            inner.visit_devices(&path.join(Segment::Variant("Some")), visit);
        }
    }

    fn move_tensors(&mut self, path: &TensorPath<'_>, device: &Device) -> Result<()> {
        match self {
            Some(inner) => inner.move_tensors(&path.join(Segment::Variant("Some")), device),
            None => Ok(()),
        }
    }
}

impl<T: Placed, E> Placed for std::result::Result<T, E> {
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
        if let Ok(inner) = self {
            inner.visit_devices(&path.join(Segment::Variant("Ok")), visit);
        }
    }

    fn move_tensors(&mut self, path: &TensorPath<'_>, device: &Device) -> Result<()> {
        match self {
            Ok(inner) => inner.move_tensors(&path.join(Segment::Variant("Ok")), device),
            Err(_) => Ok(()),
        }
    }
}

impl<T: Placed> Placed for [T] {
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
        for (index, item) in self.iter().enumerate() {
            item.visit_devices(&path.join(Segment::Index(index)), visit);
        }
    }

    fn move_tensors(&mut self, path: &TensorPath<'_>, device: &Device) -> Result<()> {
        self.iter_mut().enumerate().try_for_each(|(index, item)| {
            item.move_tensors(&path.join(Segment::Index(index)), device)
        })
    }
}

impl<T: Placed, const N: usize> Placed for [T; N] {
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
        self.as_slice().visit_devices(path, visit);
    }

    fn move_tensors(&mut self, path: &TensorPath<'_>, device: &Device) -> Result<()> {
        self.as_mut_slice().move_tensors(path, device)
    }
}

impl<T: Placed> Placed for Vec<T> {
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
        self.as_slice().visit_devices(path, visit);
    }

    fn move_tensors(&mut self, path: &TensorPath<'_>, device: &Device) -> Result<()> {
        self.as_mut_slice().move_tensors(path, device)
    }
}

macro_rules! tuple {
    ($($name:ident $index:tt),+) => {
        impl<$($name: Placed),+> Placed for ($($name,)+) {
            fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
                $(self.$index.visit_devices(&path.join(Segment::TupleField($index)), visit);)+
            }

            fn move_tensors(&mut self, path: &TensorPath<'_>, device: &Device) -> Result<()> {
                $(self.$index.move_tensors(&path.join(Segment::TupleField($index)), device)?;)+
                Ok(())
            }
        }
    };
}

tuple!(A 0);
tuple!(A 0, B 1);
tuple!(A 0, B 1, C 2);
tuple!(A 0, B 1, C 2, D 3);
tuple!(A 0, B 1, C 2, D 3, E 4);
tuple!(A 0, B 1, C 2, D 3, E 4, F 5);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_like_rust_expressions() {
        let root = TensorPath::root("model");
        let encoder = root.join(Segment::Field("encoder"));
        let layers = encoder.join(Segment::Field("layers"));
        let third = layers.join(Segment::Index(3));
        let weight = third.join(Segment::Field("weight"));
        assert_eq!(weight.to_string(), "model.encoder.layers[3].weight");
        assert_eq!(weight.root_name(), "model");
        let some = root.join(Segment::Variant("Some"));
        assert_eq!(some.join(Segment::TupleField(1)).to_string(), "model.1");
    }

    #[test]
    fn containers_visit_every_tensor_with_its_path() {
        let cpu = Device::Cpu;
        let t = Tensor::zeros(&[1], &cpu).unwrap();
        let value = (
            vec![t.clone(), t.clone()],
            Some(Box::new(t.clone())),
            [Arc::new(t.clone())],
        );
        let placements = value.placements("x");
        let paths: Vec<_> = placements.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(paths, ["x.0[0]", "x.0[1]", "x.1", "x.2[0]"]);
        assert_eq!(value.device("x"), Ok(Some(cpu)));
        let none: Option<Tensor> = None;
        assert_eq!(none.device("x"), Ok(None));
    }

    #[test]
    fn shared_values_are_copied_and_references_refused() {
        let t = Tensor::zeros(&[1], &Device::Cpu).unwrap();
        let mut shared = (Arc::new(t.clone()), Arc::new(t.clone()));
        let other_owner = shared.1.clone();
        shared
            .move_tensors(&TensorPath::root("pair"), &Device::Cpu)
            .unwrap();
        assert!(
            !Arc::ptr_eq(&shared.1, &other_owner),
            "the shared value was copied"
        );

        let mut borrowed = (&t,);
        let err = borrowed
            .move_tensors(&TensorPath::root("view"), &Device::Cpu)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot move `view.0` in place: it is behind a shared reference; clone the value it points to first"
        );
    }
}
