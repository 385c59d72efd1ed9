//! [`Placed`]: anything that holds tensors on devices, visited with the path of each tensor
//! (`model.encoder.layers[3].weight`) and moved as a whole.
//!
//! Implemented for [`Tensor`], references, `Box`, `Arc` and `Rc` (of `Clone` values, so that
//! moving can copy what other owners share), `Option`, `Result` (its `Ok` value), slices,
//! arrays, `Vec`, `HashMap` and `BTreeMap` (their values, by key), tuples and `PhantomData` (which
//! holds nothing), and through `#[derive(Placed)]` for structs and enums.

use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::Arc;

use crate::{Device, Error, Result, Tensor};

/// One step of a path to a tensor.
#[derive(Clone, Copy, Debug)]
pub enum Segment<'a> {
    /// An argument or variable name, where a path starts.
    Root(&'a str),
    /// A named field: `.weight`.
    Field(&'a str),
    /// A tuple field: `.0`.
    TupleField(usize),
    /// A sequence element: `[3]`.
    Index(usize),
    /// A map's key, shown as Rust writes it: `["fc1"]`, `[3]`.
    Key(&'a dyn fmt::Debug),
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
            Segment::Key(key) => write!(f, "[{key:?}]"),
            // `Some` and friends add nothing a reader needs.
            Segment::Variant(_) => Ok(()),
        }
    }
}

/// A value that holds tensors on devices.
///
/// Implement it with `#[derive(Placed)]`; by hand, a container calls the same methods of what
/// it holds, joining a [`Segment`] to the path for each, and a tensor type of another library
/// calls `visit` with itself (see [`Movable`]).
pub trait Placed {
    /// Calls `visit` with the path and device of every tensor inside, in field order.
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device));

    /// Calls `visit` with the path of every tensor inside and the tensor itself, in the order of
    /// [`Placed::visit_devices`], stopping at the first error. A value must hand out the same
    /// tensors in the same order on every call: [`Placed::move_tensors`] walks it twice.
    ///
    /// # Errors
    /// The first error of `visit`, or [`Error::NotMovable`] for a tensor that cannot be replaced
    /// (one behind a shared reference).
    fn visit_tensors_mut(
        &mut self,
        path: &TensorPath<'_>,
        visit: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> Result<()>,
    ) -> Result<()>;

    /// Moves every tensor inside to `device`, in place: all of them, or on error none. Every
    /// tensor is copied first, and only when all copies exist do they replace the originals.
    ///
    /// # Errors
    /// [`Error::Move`] naming the first tensor that could not be copied (out of memory, a
    /// missing GPU) and why, or [`Error::NotMovable`] for a tensor behind a shared reference.
    fn move_tensors(&mut self, path: &TensorPath<'_>, device: &Device) -> Result<()> {
        let mut copies = Vec::new();
        self.visit_tensors_mut(path, &mut |at, tensor| {
            let copy = tensor.copy_to(device).map_err(|source| Error::Move {
                path: at.to_string(),
                device: *device,
                source: Box::new(source),
            })?;
            copies.push(copy);
            Ok(())
        })?;
        let mut copies = copies.into_iter();
        self.visit_tensors_mut(path, &mut |at, tensor| {
            let unpaired = || Error::NotMovable {
                path: at.to_string(),
                reason: "its `Placed` impl hands out different tensors on each call".to_owned(),
            };
            let copy = copies.next().ok_or_else(unpaired)?;
            tensor.replace(copy).map_err(|_| unpaired())
        })
    }

    /// A copy of this value with every tensor on `device` (the recursive `move_to_device` the
    /// PyTorch literature writes by hand over lists and dicts); `self` is left as it was.
    ///
    /// # Errors
    /// As [`Placed::move_tensors`], with paths starting at `self`.
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
    /// [`Error::ScatteredTensors`] naming the tensors off the common device (and how many are
    /// on it) when they disagree, so a model can be checked for parameters spread over several
    /// devices.
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

/// One tensor of some library, as [`Placed::visit_tensors_mut`] hands it out: first copied to a
/// device, then, once every tensor of the value has its copy, replaced by it.
pub trait Movable {
    /// A copy on `device` (the tensor itself, where it is there already).
    ///
    /// # Errors
    /// Why the copy cannot be made: out of memory, a device that does not exist.
    fn copy_to(&self, device: &Device) -> Result<Moved>;

    /// Replaces this tensor by `copy`, made by [`Movable::copy_to`] of this tensor.
    ///
    /// # Errors
    /// `copy` itself, unchanged, when it is not of this tensor's type.
    fn replace(&mut self, copy: Moved) -> std::result::Result<(), Moved>;
}

/// A tensor copied by [`Movable::copy_to`], on its way to replace the original.
pub struct Moved(Box<dyn Any>);

impl Moved {
    /// Wraps a copied tensor.
    pub fn new<T: Any>(tensor: T) -> Moved {
        Moved(Box::new(tensor))
    }

    /// The copied tensor, when it is a `T`; else `self` back.
    ///
    /// # Errors
    /// `self`, unchanged, when the copy is not a `T`.
    pub fn downcast<T: Any>(self) -> std::result::Result<T, Moved> {
        self.0.downcast().map(|tensor| *tensor).map_err(Moved)
    }
}

impl fmt::Debug for Moved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Moved(..)")
    }
}

impl Placed for Tensor {
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
        visit(path, Tensor::device(self));
    }

    fn visit_tensors_mut(
        &mut self,
        path: &TensorPath<'_>,
        visit: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> Result<()>,
    ) -> Result<()> {
        visit(path, self)
    }
}

impl Movable for Tensor {
    fn copy_to(&self, device: &Device) -> Result<Moved> {
        Ok(Moved::new(Tensor::to_device(self, device)?))
    }

    fn replace(&mut self, copy: Moved) -> std::result::Result<(), Moved> {
        *self = copy.downcast()?;
        Ok(())
    }
}

/// The `visit_devices` and `visit_tensors_mut` of a type that holds one value, reached by
/// `$get` and `$get_mut` from `$value`, with the same path.
macro_rules! delegate {
    (|$value:ident| $get:expr, $get_mut:expr) => {
        fn visit_devices(
            &self,
            path: &TensorPath<'_>,
            visit: &mut dyn FnMut(&TensorPath<'_>, Device),
        ) {
            let $value = self;
            $get.visit_devices(path, visit);
        }

        fn visit_tensors_mut(
            &mut self,
            path: &TensorPath<'_>,
            visit: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> Result<()>,
        ) -> Result<()> {
            let $value = self;
            $get_mut.visit_tensors_mut(path, visit)
        }
    };
}

impl<T: Placed + ?Sized> Placed for &T {
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
        (**self).visit_devices(path, visit);
    }

    fn visit_tensors_mut(
        &mut self,
        path: &TensorPath<'_>,
        _: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> Result<()>,
    ) -> Result<()> {
        Err(Error::NotMovable {
            path: path.to_string(),
            reason: "it is behind a shared reference".to_owned(),
        })
    }
}

impl<T: Placed + ?Sized> Placed for &mut T {
    delegate!(|value| &**value, &mut **value);
}

impl<T: Placed + ?Sized> Placed for Box<T> {
    delegate!(|value| &**value, &mut **value);
}

/// Moving clones the value pointed to when it has other owners, as `make_mut` does, so those
/// owners keep theirs.
impl<T: Placed + Clone> Placed for Arc<T> {
    delegate!(|value| &**value, Arc::make_mut(value));
}

/// As for `Arc`.
impl<T: Placed + Clone> Placed for Rc<T> {
    delegate!(|value| &**value, Rc::make_mut(value));
}

/// Holds no value, and so no tensor.
impl<T: ?Sized> Placed for PhantomData<T> {
    fn visit_devices(&self, _: &TensorPath<'_>, _: &mut dyn FnMut(&TensorPath<'_>, Device)) {}

    fn visit_tensors_mut(
        &mut self,
        _: &TensorPath<'_>,
        _: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> Result<()>,
    ) -> Result<()> {
        Ok(())
    }
}

impl<T: Placed> Placed for Option<T> {
    fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
        if let Some(inner) = self {
            inner.visit_devices(&path.join(Segment::Variant("Some")), visit);
        }
    }

    fn visit_tensors_mut(
        &mut self,
        path: &TensorPath<'_>,
        visit: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> Result<()>,
    ) -> Result<()> {
        match self {
            Some(inner) => inner.visit_tensors_mut(&path.join(Segment::Variant("Some")), visit),
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

    fn visit_tensors_mut(
        &mut self,
        path: &TensorPath<'_>,
        visit: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> Result<()>,
    ) -> Result<()> {
        match self {
            Ok(inner) => inner.visit_tensors_mut(&path.join(Segment::Variant("Ok")), visit),
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

    fn visit_tensors_mut(
        &mut self,
        path: &TensorPath<'_>,
        visit: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> Result<()>,
    ) -> Result<()> {
        self.iter_mut().enumerate().try_for_each(|(index, item)| {
            item.visit_tensors_mut(&path.join(Segment::Index(index)), visit)
        })
    }
}

impl<T: Placed, const N: usize> Placed for [T; N] {
    delegate!(|value| value.as_slice(), value.as_mut_slice());
}

impl<T: Placed> Placed for Vec<T> {
    delegate!(|value| value.as_slice(), value.as_mut_slice());
}

/// The values of a map, each at its key; a `HashMap` in its iteration order.
macro_rules! map {
    ($map:ident, $($bound:tt)*) => {
        impl<K: fmt::Debug, V: Placed, $($bound)*> Placed for $map<K, V, $($bound)*> {
            fn visit_devices(
                &self,
                path: &TensorPath<'_>,
                visit: &mut dyn FnMut(&TensorPath<'_>, Device),
            ) {
                for (key, value) in self {
                    value.visit_devices(&path.join(Segment::Key(key)), visit);
                }
            }

            fn visit_tensors_mut(
                &mut self,
                path: &TensorPath<'_>,
                visit: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> Result<()>,
            ) -> Result<()> {
                self.iter_mut().try_for_each(|(key, value)| {
                    value.visit_tensors_mut(&path.join(Segment::Key(key)), visit)
                })
            }
        }
    };
}

map!(HashMap, S);
map!(BTreeMap,);

macro_rules! tuple {
    ($($name:ident $index:tt),+) => {
        impl<$($name: Placed),+> Placed for ($($name,)+) {
            fn visit_devices(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
                $(self.$index.visit_devices(&path.join(Segment::TupleField($index)), visit);)+
            }

            fn visit_tensors_mut(
                &mut self,
                path: &TensorPath<'_>,
                visit: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> Result<()>,
            ) -> Result<()> {
                $(self.$index.visit_tensors_mut(&path.join(Segment::TupleField($index)), visit)?;)+
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

    #[test]
    fn maps_visit_their_values_by_key() {
        let t = Tensor::zeros(&[1], &Device::Cpu).unwrap();
        let by_name = BTreeMap::from([("fc1.weight", t.clone()), ("fc1.bias", t.clone())]);
        let paths: Vec<_> = by_name
            .placements("params")
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        assert_eq!(paths, [r#"params["fc1.bias"]"#, r#"params["fc1.weight"]"#]);
        let by_layer = HashMap::from([(3u32, vec![t.clone()])]);
        assert_eq!(by_layer.placements("layers")[0].0, "layers[3][0]");
        let mut moved = by_layer.clone();
        moved
            .move_tensors(&TensorPath::root("layers"), &Device::Cpu)
            .unwrap();
        assert_eq!(moved.device("layers"), Ok(Some(Device::Cpu)));
    }

    #[test]
    fn phantom_data_holds_no_tensor() {
        let marker: PhantomData<Tensor> = PhantomData;
        assert_eq!(marker.placements("marker"), Vec::new());
        assert_eq!(marker.device("marker"), Ok(None));
    }
}
