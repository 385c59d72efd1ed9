//! Kernels computed on the host: the CPU backend, and each simulated GPU (the same kernels over
//! its own storage and memory limit).

use crate::memory::{Allocation, Tracker};
use crate::{Device, Result};

use super::{BinaryOp, Matmul};

/// A device whose storage is host memory.
#[derive(Debug)]
pub(crate) struct HostBackend {
    tracker: Tracker,
    /// Shown by `devices()` for a simulated GPU.
    pub(crate) name: String,
}

/// Tensor data held by a [`HostBackend`].
#[derive(Debug)]
pub(crate) struct HostStorage {
    pub(crate) data: Vec<f32>,
    backend: &'static HostBackend,
    _allocation: Allocation,
}

impl HostBackend {
    pub(crate) fn new(device: Device, limit: Option<u64>, name: String) -> Self {
        HostBackend {
            tracker: Tracker::new(device, limit),
            name,
        }
    }

    pub(crate) fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// Takes ownership of `data` as storage on this device, after reserving its bytes.
    pub(crate) fn upload_owned(&'static self, data: Vec<f32>) -> Result<HostStorage> {
        let bytes = (data.len() * size_of::<f32>()) as u64;
        let allocation = self.tracker.allocate(bytes)?;
        Ok(HostStorage {
            data,
            backend: self,
            _allocation: allocation,
        })
    }

    /// Reserves the bytes first, so that an out-of-memory device fails before the host allocates.
    fn build(&'static self, len: usize, fill: impl FnOnce(&mut Vec<f32>)) -> Result<HostStorage> {
        let allocation = self.tracker.allocate((len * size_of::<f32>()) as u64)?;
        let mut data = Vec::with_capacity(len);
        fill(&mut data);
        debug_assert_eq!(data.len(), len);
        Ok(HostStorage {
            data,
            backend: self,
            _allocation: allocation,
        })
    }

    pub(crate) fn upload(&'static self, data: &[f32]) -> Result<HostStorage> {
        self.build(data.len(), |out| out.extend_from_slice(data))
    }

    pub(crate) fn zeros(&'static self, len: usize) -> Result<HostStorage> {
        self.build(len, |out| out.resize(len, 0.0))
    }
}

impl HostStorage {
    pub(crate) fn binary(&self, op: BinaryOp, rhs: &HostStorage) -> Result<HostStorage> {
        let f = match op {
            BinaryOp::Add => |a: f32, b: f32| a + b,
            BinaryOp::Sub => |a, b| a - b,
            BinaryOp::Mul => |a, b| a * b,
            BinaryOp::Div => |a, b| a / b,
        };
        let (lhs, rhs) = (&self.data, &rhs.data);
        self.backend.build(lhs.len(), |out| {
            out.extend(lhs.iter().zip(rhs).map(|(&a, &b)| f(a, b)))
        })
    }

    pub(crate) fn relu(&self) -> Result<HostStorage> {
        let data = &self.data;
        self.backend.build(data.len(), |out| {
            out.extend(data.iter().map(|&x| x.max(0.0)))
        })
    }

    /// Accumulates in f64 so that large sums keep f32 precision.
    pub(crate) fn sum(&self) -> Result<HostStorage> {
        let total = self.data.iter().map(|&x| f64::from(x)).sum::<f64>() as f32;
        self.backend.build(1, |out| out.push(total))
    }

    pub(crate) fn matmul(&self, rhs: &HostStorage, dims: Matmul) -> Result<HostStorage> {
        let Matmul { m, k, n } = dims;
        let mut out = self.backend.zeros(m * n)?;
        // Row-major strides: A is m×k, B is k×n, C is m×n.
        // SAFETY: the three buffers hold m*k, k*n and m*n elements (checked by the caller's
        // shape check and by `zeros`), and the strides describe contiguous row-major matrices.
        unsafe {
            matrixmultiply::sgemm(
                m,
                k,
                n,
                1.0,
                self.data.as_ptr(),
                k as isize,
                1,
                rhs.data.as_ptr(),
                n as isize,
                1,
                0.0,
                out.data.as_mut_ptr(),
                n as isize,
                1,
            );
        }
        Ok(out)
    }
}
