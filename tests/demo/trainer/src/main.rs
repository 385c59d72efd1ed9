//! The program: `main` is where devices are chosen.

mod schedule;

use placement::{Device, Selection, Tensor};

fn main() -> placement::Result<()> {
    // Choosing here is right; a hard-coded ordinal in `main` is the program's own choice.
    let first = Tensor::zeros(&[16], &Device::Cuda(0))?;
    let device = placement::select_device(&Selection::MostFreeMemory)?;
    // Too late: the tensor above has started the driver, which read the variable already.
    unsafe { std::env::set_var("CUDA_VISIBLE_DEVICES", "1") };
    let encoder = demo_models::encoder::Encoder::load_on(&candle::Device::Cpu).expect("encoder");
    let _ = (first, encoder.weight().dims());
    // `scores` is on the CPU, `weights` on GPU 1: this matmul fails at run time.
    let weights = Tensor::randn(&[16, 4], 7, &Device::Cuda(1))?;
    let scores = Tensor::ones(&[2, 16], &Device::Cpu)?;
    let _ = scores.matmul(&weights);
    schedule::run(&device)
}
