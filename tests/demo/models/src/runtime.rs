use gpu::implicit::{self, DeviceGuard};
use gpu::{Device, Tensor};

/// Switches the calling thread to another GPU and leaves it there.
pub fn warm_up(ordinal: usize) -> gpu::Result<Tensor> {
    implicit::set_device(Device::Cuda(ordinal))?;
    Tensor::zeros(&[1024], &implicit::current_device())
}

/// `.cuda()` goes wherever the thread's current device points.
pub fn to_gpu(x: &Tensor) -> gpu::Result<Tensor> {
    x.cuda()
}

/// Fine: scoped, and restored when the guard drops.
pub fn on(device: Device, x: &Tensor) -> gpu::Result<Tensor> {
    let _guard = DeviceGuard::new(device)?;
    x.to_device(&device)
}

/// Fine: the caller chooses.
pub fn relu_on(x: &Tensor, device: &Device) -> gpu::Result<Tensor> {
    x.to_device(device)?.relu()
}
