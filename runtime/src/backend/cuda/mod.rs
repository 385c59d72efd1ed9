//! Real GPUs through cudarc: the driver API loaded at run time, elementwise kernels compiled once
//! per device with NVRTC, matmul through cuBLAS, and pinned staging buffers for transfers.
//!
//! Nothing here calls into the driver before [`cudarc::driver::sys::is_culib_present`] says that
//! libcuda can be loaded: without it cudarc panics, and we report [`Error::NoGpu`] instead.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use cudarc::driver::sys::{CUevent_flags, CUresult};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig,
    PinnedHostSlice, PushKernelArg,
};

use super::{BinaryOp, Gpus, Matmul};
use crate::memory::{Allocation, Tracker};
use crate::{Device, Error, Result, TransferMode};

const KERNELS: &str = include_str!("kernels.cu");
/// Must match `PLACEMENT_BLOCK` in `kernels.cu`.
const BLOCK: u32 = 256;
/// Enough blocks to fill any current GPU; the kernels' grid-stride loops cover the rest.
const MAX_GRID: usize = 8192;

/// Finds the real GPUs, or says why there are none.
pub(super) fn detect() -> Gpus {
    // SAFETY: only probes whether the shared library can be loaded.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Gpus::Absent {
            reason: "the CUDA driver library (libcuda.so) was not found".to_owned(),
        };
    }
    match CudaContext::device_count() {
        Ok(count) if count > 0 => {
            let count = count as usize;
            Gpus::Cuda(CudaGpus {
                slots: (0..count).map(|_| OnceLock::new()).collect(),
            })
        }
        Ok(_) => Gpus::Absent {
            reason: "the CUDA driver sees no device".to_owned(),
        },
        Err(err) if err.0 == CUresult::CUDA_ERROR_NO_DEVICE => Gpus::Absent {
            reason: "the CUDA driver sees no device (CUDA_VISIBLE_DEVICES may hide them all)"
                .to_owned(),
        },
        Err(err) => Gpus::Absent {
            reason: format!("the CUDA driver failed to start: {err}"),
        },
    }
}

/// The visible GPUs, each set up on first use.
#[derive(Debug)]
pub(crate) struct CudaGpus {
    slots: Vec<OnceLock<Result<CudaGpu>>>,
}

impl CudaGpus {
    pub(super) fn count(&self) -> usize {
        self.slots.len()
    }

    pub(super) fn get(&'static self, ordinal: usize) -> Result<&'static CudaGpu> {
        let device = Device::Cuda(ordinal);
        let slot = self.slots.get(ordinal).ok_or(Error::DeviceOutOfRange {
            device,
            count: self.count(),
        })?;
        slot.get_or_init(|| CudaGpu::new(ordinal))
            .as_ref()
            .map_err(Clone::clone)
    }
}

struct Kernels {
    add: CudaFunction,
    sub: CudaFunction,
    mul: CudaFunction,
    div: CudaFunction,
    relu: CudaFunction,
    sum: CudaFunction,
}

/// One GPU: its context, the stream all tensor work is queued on, kernels, cuBLAS and the
/// pinned staging buffer.
pub(crate) struct CudaGpu {
    device: Device,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    blas: CudaBlas,
    kernels: Kernels,
    /// Reused for pinned transfers; replaced when a transfer needs more room.
    staging: Mutex<Option<PinnedHostSlice<f32>>>,
    tracker: Tracker,
}

impl std::fmt::Debug for CudaGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaGpu")
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

fn library_missing(device: Device, library: &str) -> Error {
    Error::Cuda {
        device,
        op: "setup",
        message: format!("{library} was not found; install the CUDA toolkit's libraries"),
    }
}

impl CudaGpu {
    fn new(ordinal: usize) -> Result<CudaGpu> {
        let device = Device::Cuda(ordinal);
        let driver = |op| move |err: DriverError| driver_error(device, op, err);
        // SAFETY: only probe whether the shared libraries can be loaded.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(library_missing(device, "NVRTC (libnvrtc.so)"));
        }
        // SAFETY: as above.
        if !unsafe { cudarc::cublas::sys::is_culib_present() } {
            return Err(library_missing(device, "cuBLAS (libcublas.so)"));
        }
        let ctx = CudaContext::new(ordinal).map_err(driver("creating the context"))?;
        // All work of a device goes through one stream, so cudarc's cross-stream event tracking
        // would only add overhead.
        // SAFETY: no CudaSlice exists on this context yet.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let blas = CudaBlas::new(stream.clone()).map_err(|err| Error::Cuda {
            device,
            op: "creating the cuBLAS handle",
            message: err.to_string(),
        })?;
        let ptx = cudarc::nvrtc::compile_ptx(KERNELS).map_err(|err| Error::Cuda {
            device,
            op: "compiling kernels with NVRTC",
            message: err.to_string(),
        })?;
        let module = ctx.load_module(ptx).map_err(driver("loading kernels"))?;
        let load = |name: &str| {
            module
                .load_function(name)
                .map_err(driver("loading a kernel"))
        };
        let kernels = Kernels {
            add: load("placement_add")?,
            sub: load("placement_sub")?,
            mul: load("placement_mul")?,
            div: load("placement_div")?,
            relu: load("placement_relu")?,
            sum: load("placement_sum")?,
        };
        Ok(CudaGpu {
            device,
            ctx,
            stream,
            blas,
            kernels,
            staging: Mutex::new(None),
            tracker: Tracker::new(device, None),
        })
    }

    pub(crate) fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    pub(crate) fn name(&self) -> Result<String> {
        self.ctx
            .name()
            .map_err(|err| driver_error(self.device, "reading the name", err))
    }

    pub(crate) fn compute_capability(&self) -> Result<(u32, u32)> {
        let (major, minor) = self
            .ctx
            .compute_capability()
            .map_err(|err| driver_error(self.device, "reading the compute capability", err))?;
        Ok((major as u32, minor as u32))
    }

    /// Free and total bytes, as the driver reports them.
    pub(crate) fn mem_get_info(&self) -> Result<(u64, u64)> {
        let (free, total) = self
            .ctx
            .mem_get_info()
            .map_err(|err| driver_error(self.device, "reading free memory", err))?;
        Ok((free as u64, total as u64))
    }

    pub(crate) fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|err| driver_error(self.device, "synchronize", err))
    }

    /// Records a timing event after the work queued so far.
    pub(crate) fn record_event(&self) -> Result<CudaEvent> {
        self.stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|err| driver_error(self.device, "recording an event", err))
    }

    pub(crate) fn elapsed_ms(&self, start: &CudaEvent, end: &CudaEvent) -> Result<f32> {
        let timing = |err| driver_error(self.device, "timing events", err);
        end.synchronize().map_err(timing)?;
        start.elapsed_ms(end).map_err(timing)
    }

    /// Reserves the bytes in the statistics and allocates `len` uninitialised floats.
    fn alloc(&'static self, len: usize) -> Result<(CudaSlice<f32>, Allocation)> {
        let bytes = (len * size_of::<f32>()) as u64;
        let allocation = self.tracker.allocate(bytes)?;
        let slice = if len == 0 {
            self.stream.null()
        } else {
            // SAFETY: every caller writes all `len` elements before the slice is read.
            unsafe { self.stream.alloc::<f32>(len) }
        };
        let slice = slice.map_err(|err| self.alloc_error(err, bytes))?;
        Ok((slice, allocation))
    }

    fn alloc_error(&self, err: DriverError, requested: u64) -> Error {
        if err.0 != CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            return driver_error(self.device, "allocating", err);
        }
        let (free, total) = self.mem_get_info().unwrap_or((0, 0));
        Error::OutOfMemory {
            device: self.device,
            requested,
            free,
            total,
        }
    }

    fn storage(&'static self, slice: CudaSlice<f32>, allocation: Allocation) -> CudaStorage {
        CudaStorage {
            slice,
            gpu: self,
            _allocation: allocation,
        }
    }

    pub(crate) fn upload(&'static self, data: &[f32], mode: TransferMode) -> Result<CudaStorage> {
        let (mut slice, allocation) = self.alloc(data.len())?;
        let copy = |err| driver_error(self.device, "copying host to device", err);
        match mode {
            TransferMode::Pageable => self.stream.memcpy_htod(data, &mut slice).map_err(copy)?,
            TransferMode::Pinned => self.with_staging(data.len(), |staging| {
                staging.copy_from_slice(data);
                // Passed as a plain slice, page-locked memory is copied by DMA asynchronously;
                // wait for it before the staging buffer can be reused.
                self.stream
                    .memcpy_htod(&*staging, &mut slice)
                    .map_err(copy)?;
                self.synchronize()
            })?,
        }
        Ok(self.storage(slice, allocation))
    }

    pub(crate) fn zeros(&'static self, len: usize) -> Result<CudaStorage> {
        let (mut slice, allocation) = self.alloc(len)?;
        self.stream
            .memset_zeros(&mut slice)
            .map_err(|err| driver_error(self.device, "zeroing", err))?;
        Ok(self.storage(slice, allocation))
    }

    /// Runs `f` on the first `len` elements of the pinned staging buffer, growing it if needed.
    fn with_staging<T>(&self, len: usize, f: impl FnOnce(&mut [f32]) -> Result<T>) -> Result<T> {
        let pinned = |err| driver_error(self.device, "allocating pinned host memory", err);
        let mut staging = self.staging.lock().unwrap_or_else(PoisonError::into_inner);
        if staging.as_ref().is_none_or(|buffer| buffer.len() < len) {
            *staging = None;
            // SAFETY: flags 0 asks for plain page-locked memory; its contents are written
            // before they are read.
            *staging = Some(
                unsafe { self.ctx.alloc_pinned_with_flags::<f32>(len.max(1), 0) }
                    .map_err(pinned)?,
            );
        }
        let buffer = staging.as_mut().expect("staging buffer allocated above");
        let host = buffer.as_mut_slice().map_err(pinned)?;
        f(&mut host[..len])
    }

    fn launch(&self, func: &CudaFunction, args: LaunchArgsFor<'_>, len: usize) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let cfg = LaunchConfig {
            grid_dim: (len.div_ceil(BLOCK as usize).min(MAX_GRID) as u32, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut builder = self.stream.launch_builder(func);
        match args {
            LaunchArgsFor::Binary(a, b, out) => builder.arg(a).arg(b).arg(out),
            LaunchArgsFor::Unary(x, out) => builder.arg(x).arg(out),
        };
        builder.arg(&len);
        // SAFETY: the kernels take (inputs..., out, n) with n elements in every buffer, as
        // `kernels.cu` declares them; the buffers outlive the launch on this stream.
        unsafe { builder.launch(cfg) }
            .map(drop)
            .map_err(|err| driver_error(self.device, "launching a kernel", err))
    }
}

enum LaunchArgsFor<'a> {
    Binary(
        &'a CudaSlice<f32>,
        &'a CudaSlice<f32>,
        &'a mut CudaSlice<f32>,
    ),
    Unary(&'a CudaSlice<f32>, &'a mut CudaSlice<f32>),
}

fn driver_error(device: Device, op: &'static str, err: DriverError) -> Error {
    Error::Cuda {
        device,
        op,
        message: err.to_string(),
    }
}

/// Tensor data in GPU memory.
#[derive(Debug)]
pub(crate) struct CudaStorage {
    slice: CudaSlice<f32>,
    gpu: &'static CudaGpu,
    _allocation: Allocation,
}

impl CudaStorage {
    pub(crate) fn download(&self, mode: TransferMode) -> Result<Vec<f32>> {
        let gpu = self.gpu;
        let copy = |err| driver_error(gpu.device, "copying device to host", err);
        match mode {
            TransferMode::Pageable => gpu.stream.clone_dtoh(&self.slice).map_err(copy),
            TransferMode::Pinned => gpu.with_staging(self.slice.len(), |staging| {
                // Asynchronous into page-locked memory: wait before reading it.
                gpu.stream.memcpy_dtoh(&self.slice, staging).map_err(copy)?;
                gpu.synchronize()?;
                Ok(staging.to_vec())
            }),
        }
    }

    pub(crate) fn binary(&self, op: BinaryOp, rhs: &CudaStorage) -> Result<CudaStorage> {
        let gpu = self.gpu;
        let func = match op {
            BinaryOp::Add => &gpu.kernels.add,
            BinaryOp::Sub => &gpu.kernels.sub,
            BinaryOp::Mul => &gpu.kernels.mul,
            BinaryOp::Div => &gpu.kernels.div,
        };
        let len = self.slice.len();
        let (mut out, allocation) = gpu.alloc(len)?;
        gpu.launch(
            func,
            LaunchArgsFor::Binary(&self.slice, &rhs.slice, &mut out),
            len,
        )?;
        Ok(gpu.storage(out, allocation))
    }

    pub(crate) fn relu(&self) -> Result<CudaStorage> {
        let gpu = self.gpu;
        let len = self.slice.len();
        let (mut out, allocation) = gpu.alloc(len)?;
        gpu.launch(
            &gpu.kernels.relu,
            LaunchArgsFor::Unary(&self.slice, &mut out),
            len,
        )?;
        Ok(gpu.storage(out, allocation))
    }

    pub(crate) fn sum(&self) -> Result<CudaStorage> {
        let gpu = self.gpu;
        let mut out = gpu.zeros(1)?;
        let len = self.slice.len();
        gpu.launch(
            &gpu.kernels.sum,
            LaunchArgsFor::Unary(&self.slice, &mut out.slice),
            len,
        )?;
        Ok(out)
    }

    pub(crate) fn matmul(&self, rhs: &CudaStorage, dims: Matmul) -> Result<CudaStorage> {
        let gpu = self.gpu;
        let Matmul { m, k, n } = dims;
        let mut out = gpu.zeros(m * n)?;
        if m * n == 0 || k == 0 {
            return Ok(out);
        }
        let int = |x: usize| {
            i32::try_from(x).map_err(|_| Error::Cuda {
                device: gpu.device,
                op: "matmul",
                message: format!("dimension {x} exceeds cuBLAS's 32-bit limit"),
            })
        };
        // cuBLAS is column-major: a row-major C = A·B is the column-major Cᵀ = Bᵀ·Aᵀ, and a
        // row-major matrix read column-major is its transpose, so pass B first.
        let cfg = GemmConfig {
            transa: cublasOperation_t::CUBLAS_OP_N,
            transb: cublasOperation_t::CUBLAS_OP_N,
            m: int(n)?,
            n: int(m)?,
            k: int(k)?,
            alpha: 1.0f32,
            lda: int(n)?,
            ldb: int(k)?,
            beta: 0.0f32,
            ldc: int(n)?,
        };
        // SAFETY: rhs is k×n, self is m×k and out is m×n, row-major, as the shape check of the
        // caller guarantees; the leading dimensions above describe exactly those buffers.
        unsafe { gpu.blas.gemm(cfg, &rhs.slice, &self.slice, &mut out.slice) }.map_err(|err| {
            Error::Cuda {
                device: gpu.device,
                op: "matmul (cuBLAS sgemm)",
                message: err.to_string(),
            }
        })?;
        Ok(out)
    }
}
