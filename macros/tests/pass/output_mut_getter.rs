//! `output` on a getter that hands out a mutable borrow of `self`.
#![deny(warnings)]

use placement::{Device, Placed, Tensor, device_check};

#[derive(Placed)]
struct Linear {
    weight: Tensor,
}

impl Linear {
    #[device_check(output)]
    fn weight_mut(&mut self) -> &mut Tensor {
        &mut self.weight
    }

    #[device_check(output)]
    fn weight_or_err(&mut self) -> placement::Result<&mut Tensor> {
        Ok(&mut self.weight)
    }
}

fn main() {
    let mut layer = Linear {
        weight: Tensor::ones(&[2], &Device::Cpu).unwrap(),
    };
    *layer.weight_mut() = Tensor::zeros(&[3], &Device::Cpu).unwrap();
    assert_eq!(layer.weight_or_err().unwrap().shape(), &[3]);
}
