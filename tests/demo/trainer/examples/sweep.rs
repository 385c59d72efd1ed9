//! An example: its `main` may choose devices, and worker threads may set theirs as they start.

use placement::implicit;
use placement::{Device, Tensor};

fn main() -> placement::Result<()> {
    let workers: Vec<_> = (0..2)
        .map(|rank| {
            std::thread::spawn(move || {
                implicit::set_device(Device::Cuda(rank))?;
                Tensor::ones(&[4], &implicit::current_device())?.sum()
            })
        })
        .collect();
    for worker in workers {
        println!("{:?}", worker.join().expect("worker")?.to_vec()?);
    }
    Ok(())
}
