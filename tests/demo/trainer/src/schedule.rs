use placement::{Device, Tensor};

pub fn run(device: &Device) -> placement::Result<()> {
    let steps = Tensor::ones(&[8], device)?;
    // A module of the trainer, not its start-up code: the ordinal is still hard-coded.
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
