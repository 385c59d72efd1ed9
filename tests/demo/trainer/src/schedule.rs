use placement::{Device, Tensor};

pub fn run(device: &Device) -> placement::Result<()> {
    let steps = Tensor::ones(&[8], device)?;
    // A module only the trainer declares is part of the program, like `main`: the program
    // chooses GPU 1 here, which is its own business.
    let mirror = steps.to_device(&Device::Cuda(1))?;
    println!("{:?} mirrored on {:?}", steps, mirror.device());
    Ok(())
}

/// The weights cross the bus again on every step.
pub fn train(weights: &Tensor, batches: &[Tensor], device: &Device) -> placement::Result<()> {
    for batch in batches {
        let w = weights.to_device(device)?;
        batch.to_device(device)?.matmul(&w)?;
    }
    Ok(())
}
