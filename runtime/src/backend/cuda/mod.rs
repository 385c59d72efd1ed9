//! Real GPUs through cudarc: the driver API loaded at run time, elementwise kernels compiled once
//! per device with NVRTC, matmul through cuBLAS, and pinned staging buffers for transfers.
//!
//! Nothing here calls into the driver before [`cudarc::driver::sys::is_culib_present`] says that
//! libcuda can be loaded: without it cudarc panics, and we report [`Error::NoGpu`] instead.

mod libraries;

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use cudarc::driver::sys::{CUevent_flags, CUresult};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig,
    PinnedHostSlice, PushKernelArg,
};

use super::{BackendDevice, BackendStorage, BinaryOp, Gpus, Matmul};
use crate::memory::{Allocation, Tracker};
use crate::shape::{Len, host_buffer};
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

    /// The GPUs set up so far, without setting up the others.
    pub(super) fn set_up(&self) -> impl Iterator<Item = &CudaGpu> {
        self.slots
            .iter()
            .filter_map(|slot| slot.get().and_then(|gpu| gpu.as_ref().ok()))
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

fn library_missing(device: Device, message: String) -> Error {
    Error::Cuda {
        device,
        op: "setup",
        message,
    }
}

impl CudaGpu {
    fn new(ordinal: usize) -> Result<CudaGpu> {
        let device = Device::Cuda(ordinal);
        let driver = |op| move |err: DriverError| driver_error(device, op, err);
        // SAFETY: only probe whether the shared libraries can be loaded.
        libraries::ensure(&libraries::NVRTC, || unsafe {
            cudarc::nvrtc::sys::is_culib_present()
        })
        .map_err(|message| library_missing(device, message))?;
        // SAFETY: as above.
        libraries::ensure(&libraries::CUBLAS, || unsafe {
            cudarc::cublas::sys::is_culib_present()
        })
        .map_err(|message| library_missing(device, message))?;
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

    /// Reserves the bytes in the statistics and allocates storage of `len` uninitialised
    /// floats.
    fn alloc(&'static self, len: Len) -> Result<CudaStorage> {
        let allocation = self.tracker.allocate(len.bytes())?;
        let slice = if len.get() == 0 {
            self.stream.null()
        } else {
            // SAFETY: every caller writes all `len` elements before the slice is read.
            unsafe { self.stream.alloc::<f32>(len.get()) }
        };
        let slice = slice.map_err(|err| self.alloc_error(err, len.bytes()))?;
        Ok(CudaStorage {
            slice,
            len,
            gpu: self,
            _allocation: allocation,
        })
    }

    fn alloc_error(&self, err: DriverError, requested: u64) -> Error {
        if err.0 != CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            return driver_error(self.device, "allocating", err);
        }
        let (free, total) = self.mem_get_info().ok().unzip();
        Error::OutOfMemory {
            device: self.device,
            requested,
            free,
            total,
        }
    }

    fn copy_to_device(
        &self,
        data: &[f32],
        slice: &mut CudaSlice<f32>,
        mode: TransferMode,
    ) -> Result<()> {
        let copy = |err| driver_error(self.device, "copying host to device", err);
        match mode {
            TransferMode::Pageable => self.stream.memcpy_htod(data, slice).map_err(copy),
            TransferMode::Pinned => self.with_staging(data.len(), |staging| {
                staging.copy_from_slice(data);
                // Passed as a plain slice, page-locked memory is copied by DMA asynchronously;
                // wait for it before the staging buffer can be reused.
                self.stream.memcpy_htod(&*staging, slice).map_err(copy)?;
                self.synchronize()
            }),
        }
    }

    /// Runs `f` on the first `len` elements of the pinned staging buffer, growing it if needed.
    fn with_staging<T>(&self, len: usize, f: impl FnOnce(&mut [f32]) -> Result<T>) -> Result<T> {
        let pinned = |err| driver_error(self.device, "allocating pinned host memory", err);
        let mut staging = self.staging.lock().unwrap_or_else(PoisonError::into_inner);
        let buffer = match &mut *staging {
            Some(buffer) if buffer.len() >= len => buffer,
            slot => {
                // The old buffer is freed before a larger one is allocated.
                *slot = None;
                // SAFETY: flags 0 asks for plain page-locked memory; its contents are written
                // before they are read.
                let fresh = unsafe { self.ctx.alloc_pinned_with_flags::<f32>(len.max(1), 0) };
                slot.insert(fresh.map_err(pinned)?)
            }
        };
        let host = buffer.as_mut_slice().map_err(pinned)?;
        f(&mut host[..len])
    }

    fn launch(&self, func: &CudaFunction, args: LaunchArgsFor<'_>, len: Len) -> Result<()> {
        let len = len.get();
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

impl BackendDevice for CudaGpu {
    type Storage = CudaStorage;
    type Event = CudaEvent;

    fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// Free and total bytes, as the driver reports them.
    fn mem_get_info(&self) -> Result<(u64, u64)> {
        let (free, total) = self
            .ctx
            .mem_get_info()
            .map_err(|err| driver_error(self.device, "reading free memory", err))?;
        Ok((free as u64, total as u64))
    }

    fn name(&self) -> Result<String> {
        self.ctx
            .name()
            .map_err(|err| driver_error(self.device, "reading the name", err))
    }

    fn compute_capability(&self) -> Result<Option<(u32, u32)>> {
        let (major, minor) = self
            .ctx
            .compute_capability()
            .map_err(|err| driver_error(self.device, "reading the compute capability", err))?;
        Ok(Some((major as u32, minor as u32)))
    }

    fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|err| driver_error(self.device, "synchronize", err))
    }

    fn zeros(&'static self, len: Len) -> Result<CudaStorage> {
        let mut out = self.alloc(len)?;
        self.stream
            .memset_zeros(&mut out.slice)
            .map_err(|err| driver_error(self.device, "zeroing", err))?;
        Ok(out)
    }

    fn upload(&'static self, data: &[f32], mode: TransferMode) -> Result<CudaStorage> {
        let mut out = self.alloc(Len::of_slice(data))?;
        self.copy_to_device(data, &mut out.slice, mode)?;
        Ok(out)
    }

    /// Allocates on the GPU first, so that a request the GPU cannot hold fails there, naming it,
    /// before the host buffer is built.
    fn generate(&'static self, len: Len, fill: impl FnOnce(&mut Vec<f32>)) -> Result<CudaStorage> {
        let mut out = self.alloc(len)?;
        let mut data = host_buffer(len, Device::Cpu)?;
        fill(&mut data);
        self.copy_to_device(&data, &mut out.slice, TransferMode::Pageable)?;
        Ok(out)
    }

    fn upload_owned(&'static self, data: Vec<f32>) -> Result<CudaStorage> {
        self.upload(&data, TransferMode::Pageable)
    }

    /// Records a timing event after the work queued so far.
    fn record_event(&self) -> Result<CudaEvent> {
        self.stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|err| driver_error(self.device, "recording an event", err))
    }

    fn elapsed_ms(&self, start: &CudaEvent, end: &CudaEvent) -> Result<f32> {
        let timing = |err| driver_error(self.device, "timing events", err);
        end.synchronize().map_err(timing)?;
        start.elapsed_ms(end).map_err(timing)
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
    len: Len,
    gpu: &'static CudaGpu,
    _allocation: Allocation,
}

impl BackendStorage for CudaStorage {
    fn device(&self) -> Device {
        self.gpu.device
    }

    fn host_data(&self) -> Option<&[f32]> {
        None
    }

    fn download(&self, mode: TransferMode) -> Result<Vec<f32>> {
        let gpu = self.gpu;
        let len = self.len.get();
        let copy = |err| driver_error(gpu.device, "copying device to host", err);
        let mut out = host_buffer(self.len, Device::Cpu)?;
        match mode {
            TransferMode::Pageable => {
                out.resize(len, 0.0);
                // To pageable memory the copy has completed when the call returns.
                gpu.stream
                    .memcpy_dtoh(&self.slice, &mut out[..])
                    .map_err(copy)?;
            }
            TransferMode::Pinned => gpu.with_staging(len, |staging| {
                // Asynchronous into page-locked memory: wait before reading it.
                gpu.stream.memcpy_dtoh(&self.slice, staging).map_err(copy)?;
                gpu.synchronize()?;
                out.extend_from_slice(staging);
                Ok(())
            })?,
        }
        Ok(out)
    }

    fn binary(&self, op: BinaryOp, rhs: &CudaStorage) -> Result<CudaStorage> {
        let gpu = self.gpu;
        let func = match op {
            BinaryOp::Add => &gpu.kernels.add,
            BinaryOp::Sub => &gpu.kernels.sub,
            BinaryOp::Mul => &gpu.kernels.mul,
            BinaryOp::Div => &gpu.kernels.div,
        };
        let mut out = gpu.alloc(self.len)?;
        gpu.launch(
            func,
            LaunchArgsFor::Binary(&self.slice, &rhs.slice, &mut out.slice),
            self.len,
        )?;
        Ok(out)
    }

    fn relu(&self) -> Result<CudaStorage> {
        let gpu = self.gpu;
        let mut out = gpu.alloc(self.len)?;
        gpu.launch(
            &gpu.kernels.relu,
            LaunchArgsFor::Unary(&self.slice, &mut out.slice),
            self.len,
        )?;
        Ok(out)
    }

    fn sum(&self) -> Result<CudaStorage> {
        let gpu = self.gpu;
        // Zeroed: `+0.0`, the identity the kernel adds every block's partial sum to.
        let mut out = gpu.zeros(Len::of_slice(&[0.0]))?;
        gpu.launch(
            &gpu.kernels.sum,
            LaunchArgsFor::Unary(&self.slice, &mut out.slice),
            self.len,
        )?;
        Ok(out)
    }

    fn matmul(&self, rhs: &CudaStorage, dims: Matmul) -> Result<CudaStorage> {
        let gpu = self.gpu;
        let Matmul { m, k, n, len } = dims;
        let mut out = gpu.zeros(len)?;
        if len.get() == 0 || k == 0 {
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
