use std::sync::Arc;

use cudarc::driver::CudaContext;

/// Raw kernels that need a current context.
pub struct Kernels {
    ctx: Arc<CudaContext>,
}

impl Kernels {
    pub fn new(ctx: Arc<CudaContext>) -> Kernels {
        Kernels { ctx }
    }

    pub fn prepare(&self) {
        // Leaves this GPU current on the caller's thread after we return.
        self.ctx.bind_to_thread().expect("bind the context");
    }

    pub fn scratch(&self, bytes: usize) -> cudarc::driver::sys::CUdeviceptr {
        // Allocates in whatever context is current, not necessarily `self.ctx`'s.
        unsafe { cudarc::driver::result::malloc_sync(bytes) }.expect("scratch memory")
    }
}

/// Too late: whoever calls this has probably started the driver already.
pub fn only_use(gpus: &str) {
    unsafe { std::env::set_var("CUDA_VISIBLE_DEVICES", gpus) };
}
