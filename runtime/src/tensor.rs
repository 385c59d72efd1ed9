//! [`Tensor`]: f32, contiguous, always on an explicit device.

use std::fmt;
use std::sync::Arc;

use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

use crate::backend::{self, BinaryOp, Matmul, Storage};
use crate::shape::Len;
use crate::{Device, Error, Result, TransferMode};

/// An f32 tensor, contiguous in row-major order, on the device it was created on or moved to.
///
/// Cloning is cheap: clones share storage. Ops return new tensors and never move data between
/// devices on their own; operands on different devices are an [`Error::DeviceMismatch`].
#[derive(Clone)]
pub struct Tensor(Arc<Inner>);

struct Inner {
    storage: Storage,
    shape: Vec<usize>,
    len: Len,
    device: Device,
}

impl Tensor {
    fn new(storage: Storage, shape: Vec<usize>, len: Len, device: Device) -> Tensor {
        Tensor(Arc::new(Inner {
            storage,
            shape,
            len,
            device,
        }))
    }

    /// A tensor of zeros.
    ///
    /// # Errors
    /// [`Error::ShapeOverflow`] for a shape too large to address, [`Error::OutOfMemory`], or a
    /// device that does not exist.
    pub fn zeros(shape: &[usize], device: &Device) -> Result<Tensor> {
        let len = Len::of_shape(shape)?;
        let storage = backend::get(device)?.zeros(len)?;
        Ok(Tensor::new(storage, shape.to_vec(), len, *device))
    }

    /// A tensor of ones.
    ///
    /// # Errors
    /// As [`Tensor::zeros`].
    pub fn ones(shape: &[usize], device: &Device) -> Result<Tensor> {
        let len = Len::of_shape(shape)?;
        let storage = backend::get(device)?.generate(len, |out| out.resize(len.get(), 1.0))?;
        Ok(Tensor::new(storage, shape.to_vec(), len, *device))
    }

    /// A tensor holding `data` (row-major) with this shape.
    ///
    /// # Errors
    /// [`Error::ElementCount`] when `data` does not fill the shape, else as [`Tensor::zeros`].
    pub fn from_slice(data: &[f32], shape: &[usize], device: &Device) -> Result<Tensor> {
        let len = Len::of_shape(shape)?;
        if data.len() != len.get() {
            return Err(Error::ElementCount {
                shape: shape.to_vec(),
                expected: len.get(),
                got: data.len(),
            });
        }
        let storage = backend::get(device)?.upload(data, TransferMode::Pageable)?;
        Ok(Tensor::new(storage, shape.to_vec(), len, *device))
    }

    /// Standard normal samples from a seeded generator: the same seed gives the same values on
    /// every device.
    ///
    /// # Errors
    /// As [`Tensor::zeros`].
    pub fn randn(shape: &[usize], seed: u64, device: &Device) -> Result<Tensor> {
        let len = Len::of_shape(shape)?;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let storage = backend::get(device)?.generate(len, |out| {
            let samples = Distribution::<f32>::sample_iter(StandardNormal, &mut rng);
            out.extend(samples.take(len.get()))
        })?;
        Ok(Tensor::new(storage, shape.to_vec(), len, *device))
    }

    /// The device that holds this tensor.
    pub fn device(&self) -> Device {
        self.0.device
    }

    /// The dimensions, outermost first.
    pub fn shape(&self) -> &[usize] {
        &self.0.shape
    }

    /// The number of elements.
    pub fn elem_count(&self) -> usize {
        self.0.len.get()
    }

    /// This tensor on `device`: the same tensor if it is there already, else a copy through
    /// pageable host memory. See [`Tensor::to_device_with`] for pinned transfers.
    pub fn to_device(&self, device: &Device) -> Result<Tensor> {
        self.to_device_with(device, TransferMode::Pageable)
    }

    /// This tensor on `device`, staging host↔GPU copies as `mode` says.
    pub fn to_device_with(&self, device: &Device, mode: TransferMode) -> Result<Tensor> {
        if *device == self.device() {
            return Ok(self.clone());
        }
        let storage = self.0.storage.copy_to(backend::get(device)?, mode)?;
        Ok(Tensor::new(
            storage,
            self.0.shape.clone(),
            self.0.len,
            *device,
        ))
    }

    /// The elements, row-major, copied to the host.
    pub fn to_vec(&self) -> Result<Vec<f32>> {
        self.0.storage.download(TransferMode::Pageable)
    }

    /// The one place where every op with two operands checks their devices.
    fn same_device(&self, op: &'static str, rhs: &Tensor) -> Result<()> {
        let (lhs, rhs) = (self.device(), rhs.device());
        if lhs == rhs {
            Ok(())
        } else {
            Err(Error::DeviceMismatch { op, lhs, rhs })
        }
    }

    fn binary(&self, op: BinaryOp, rhs: &Tensor) -> Result<Tensor> {
        self.same_device(op.name(), rhs)?;
        if self.shape() != rhs.shape() {
            return Err(Error::ShapeMismatch {
                op: op.name(),
                lhs: self.shape().to_vec(),
                rhs: rhs.shape().to_vec(),
            });
        }
        let storage = self.0.storage.binary(op, &rhs.0.storage)?;
        Ok(Tensor::new(
            storage,
            self.0.shape.clone(),
            self.0.len,
            self.device(),
        ))
    }

    /// Elementwise `self + rhs`; shapes must be equal.
    pub fn add(&self, rhs: &Tensor) -> Result<Tensor> {
        self.binary(BinaryOp::Add, rhs)
    }

    /// Elementwise `self - rhs`; shapes must be equal.
    pub fn sub(&self, rhs: &Tensor) -> Result<Tensor> {
        self.binary(BinaryOp::Sub, rhs)
    }

    /// Elementwise `self * rhs`; shapes must be equal.
    pub fn mul(&self, rhs: &Tensor) -> Result<Tensor> {
        self.binary(BinaryOp::Mul, rhs)
    }

    /// Elementwise `self / rhs`; shapes must be equal.
    pub fn div(&self, rhs: &Tensor) -> Result<Tensor> {
        self.binary(BinaryOp::Div, rhs)
    }

    /// The matrix product of `self` (`[m, k]`) and `rhs` (`[k, n]`), of shape `[m, n]`.
    pub fn matmul(&self, rhs: &Tensor) -> Result<Tensor> {
        self.same_device("matmul", rhs)?;
        let (&[m, k], &[k2, n]) = (self.shape(), rhs.shape()) else {
            return Err(self.matmul_shape_error(rhs));
        };
        if k != k2 {
            return Err(self.matmul_shape_error(rhs));
        }
        let shape = vec![m, n];
        let len = Len::of_shape(&shape)?;
        let storage = self
            .0
            .storage
            .matmul(&rhs.0.storage, Matmul { m, k, n, len })?;
        Ok(Tensor::new(storage, shape, len, self.device()))
    }

    fn matmul_shape_error(&self, rhs: &Tensor) -> Error {
        Error::MatmulShape {
            lhs: self.shape().to_vec(),
            rhs: rhs.shape().to_vec(),
        }
    }

    /// Elementwise `max(x, 0)`, as PyTorch's `relu`: NaN stays NaN and `-0.0` stays `-0.0`.
    pub fn relu(&self) -> Result<Tensor> {
        Ok(Tensor::new(
            self.0.storage.relu()?,
            self.0.shape.clone(),
            self.0.len,
            self.device(),
        ))
    }

    /// The sum of all elements, as a tensor of shape `[]` on the same device. As PyTorch's, it
    /// starts from `+0.0`: the sum of an empty tensor is `+0.0`, and so is a sum of `-0.0`s.
    pub fn sum(&self) -> Result<Tensor> {
        let shape = Vec::new();
        let len = Len::of_shape(&shape)?;
        Ok(Tensor::new(
            self.0.storage.sum()?,
            shape,
            len,
            self.device(),
        ))
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tensor{:?} on {}", self.shape(), self.device())
    }
}

/// `&a + &b` and friends, as candle has them: the result is a `Result<Tensor>`.
macro_rules! binary_operator {
    ($trait:ident, $method:ident) => {
        impl std::ops::$trait<&Tensor> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$method(self, rhs)
            }
        }
        impl std::ops::$trait<Tensor> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$method(self, &rhs)
            }
        }
        impl std::ops::$trait<&Tensor> for Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$method(&self, rhs)
            }
        }
        impl std::ops::$trait<Tensor> for Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$method(&self, &rhs)
            }
        }
    };
}

binary_operator!(Add, add);
binary_operator!(Sub, sub);
binary_operator!(Mul, mul);
binary_operator!(Div, div);
