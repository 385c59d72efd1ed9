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

    pub fn free_bytes(&self) -> usize {
        let (free, _) = cudarc::driver::result::mem_get_info().expect("memory info");
        free
    }
}

/// Too late: whoever calls this has probably started the driver already.
pub fn only_use(gpus: &str) {
    unsafe { std::env::set_var("CUDA_VISIBLE_DEVICES", gpus) };
}
