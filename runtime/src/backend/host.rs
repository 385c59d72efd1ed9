//! Kernels computed on the host: the CPU backend, and each simulated GPU (the same kernels over
//! its own storage and memory limit).

use std::time::Instant;

use crate::memory::{Allocation, Tracker};
use crate::shape::{Len, host_buffer};
use crate::{Device, Result, TransferMode};

use super::{BackendDevice, BackendStorage, BinaryOp, Matmul};

/// A device whose storage is host memory.
#[derive(Debug)]
pub(crate) struct HostBackend {
    tracker: Tracker,
    /// Shown by `devices()` for a simulated GPU.
    name: String,
}

/// Tensor data held by a [`HostBackend`].
#[derive(Debug)]
pub(crate) struct HostStorage {
    data: Vec<f32>,
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
}

impl BackendDevice for HostBackend {
    type Storage = HostStorage;
    type Event = Instant;

    fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    fn mem_get_info(&self) -> Result<(u64, u64)> {
        let total = self.tracker.limit().unwrap_or(u64::MAX);
        Ok((total.saturating_sub(self.tracker.allocated()), total))
    }

    fn name(&self) -> Result<String> {
        Ok(self.name.clone())
    }

    fn compute_capability(&self) -> Result<Option<(u32, u32)>> {
        Ok(None)
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    fn zeros(&'static self, len: Len) -> Result<HostStorage> {
        self.generate(len, |out| out.resize(len.get(), 0.0))
    }

    fn upload(&'static self, data: &[f32], _: TransferMode) -> Result<HostStorage> {
        self.generate(Len::of_slice(data), |out| out.extend_from_slice(data))
    }

    /// Reserves the bytes against the device's limit first, so that an out-of-memory device
    /// fails before the host allocates anything.
    fn generate(&'static self, len: Len, fill: impl FnOnce(&mut Vec<f32>)) -> Result<HostStorage> {
        let allocation = self.tracker.allocate(len.bytes())?;
        let mut data = host_buffer(len, self.tracker.device())?;
        fill(&mut data);
        debug_assert_eq!(data.len(), len.get());
        Ok(HostStorage {
            data,
            backend: self,
            _allocation: allocation,
        })
    }

    fn upload_owned(&'static self, data: Vec<f32>) -> Result<HostStorage> {
        let allocation = self.tracker.allocate(Len::of_slice(&data).bytes())?;
        Ok(HostStorage {
            data,
            backend: self,
            _allocation: allocation,
        })
    }

    fn record_event(&self) -> Result<Instant> {
        Ok(Instant::now())
    }

    fn elapsed_ms(&self, start: &Instant, end: &Instant) -> Result<f32> {
        Ok(end.duration_since(*start).as_secs_f32() * 1e3)
    }
}

impl HostStorage {
    fn len(&self) -> Len {
        Len::of_slice(&self.data)
    }
}

impl BackendStorage for HostStorage {
    fn device(&self) -> Device {
        self.backend.tracker.device()
    }

    fn host_data(&self) -> Option<&[f32]> {
        Some(&self.data)
    }

    fn download(&self, _: TransferMode) -> Result<Vec<f32>> {
        let mut out = host_buffer(self.len(), Device::Cpu)?;
        out.extend_from_slice(&self.data);
        Ok(out)
    }

    fn binary(&self, op: BinaryOp, rhs: &HostStorage) -> Result<HostStorage> {
        let f = match op {
            BinaryOp::Add => |a: f32, b: f32| a + b,
            BinaryOp::Sub => |a, b| a - b,
            BinaryOp::Mul => |a, b| a * b,
            BinaryOp::Div => |a, b| a / b,
        };
        let (lhs, rhs) = (&self.data, &rhs.data);
        self.backend.generate(self.len(), |out| {
            out.extend(lhs.iter().zip(rhs).map(|(&a, &b)| f(a, b)))
        })
    }

    fn relu(&self) -> Result<HostStorage> {
        let data = &self.data;
        // Not `f32::max`, which turns NaN into 0.0.
        self.backend.generate(self.len(), |out| {
            out.extend(data.iter().map(|&x| if x < 0.0 { 0.0 } else { x }))
        })
    }

    /// Accumulates in f64 so that large sums keep f32 precision, from `+0.0` (Rust's `Sum`
    /// starts from `-0.0`).
    fn sum(&self) -> Result<HostStorage> {
        let total = self
            .data
            .iter()
            .fold(0.0f64, |total, &x| total + f64::from(x)) as f32;
        self.backend
            .generate(Len::of_slice(&[total]), |out| out.push(total))
    }

    fn matmul(&self, rhs: &HostStorage, dims: Matmul) -> Result<HostStorage> {
        let Matmul { m, k, n, len } = dims;
        let mut out = self.backend.zeros(len)?;
        if len.get() == 0 || k == 0 {
            return Ok(out);
        }
        // Row-major strides: A is m×k, B is k×n, C is m×n; each fits an allocation, so its
        // dimensions fit `isize`.
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
