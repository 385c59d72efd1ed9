use candle::{DType, Device, Tensor};

pub struct Encoder {
    weight: Tensor,
}

impl Encoder {
    /// Loads onto GPU 1, whatever machine or job this runs in.
    pub fn load() -> candle::Result<Encoder> {
        let device = Device::new_cuda(1)?;
        let weight = Tensor::zeros((512, 512), DType::F32, &device)?;
        Ok(Encoder { weight })
    }

    /// Fine: the caller chooses.
    pub fn load_on(device: &Device) -> candle::Result<Encoder> {
        let weight = Tensor::zeros((512, 512), DType::F32, device)?;
        Ok(Encoder { weight })
    }

    pub fn weight(&self) -> &Tensor {
        &self.weight
    }
}

/// The tch way to let the library decide.
pub fn tch_store() -> tch::nn::VarStore {
    tch::nn::VarStore::new(tch::Device::cuda_if_available())
}

/// `VarStore::set_device` moves variables; it does not change the current device.
pub fn migrate(store: &mut tch::nn::VarStore, device: tch::Device) {
    store.set_device(device);
}
