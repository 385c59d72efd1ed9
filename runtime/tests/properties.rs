//! Random shapes, zero and huge dimensions among them, through random constructors and ops on
//! the CPU and a 1 MiB simulated GPU: nothing panics or aborts, every failure is one of the
//! documented errors, and every byte is given back. One test: the memory counters are the
//! process's.
//!
//! Huge dimensions are at least 2^60, so that any shape holding one either overflows or asks for
//! more than any allocator grants; nothing here allocates gigabytes that a machine could give.

use placement::{Device, Error, Tensor};
use proptest::prelude::*;

const DEVICES: [Device; 2] = [Device::Cpu, Device::Cuda(0)];

fn dimension() -> impl Strategy<Value = usize> {
    prop_oneof![
        4 => 0usize..4,
        1 => prop::sample::select(vec![1 << 60, 1 << 62, usize::MAX / 2, usize::MAX]),
    ]
}

fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(dimension(), 0..4)
}

/// A tensor to build, from a shape.
#[derive(Clone, Debug)]
enum Constructor {
    Zeros,
    Ones,
    Randn(u64),
    /// With as many elements as given here, which may not fill the shape.
    FromSlice(usize),
}

#[derive(Clone, Debug)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Matmul,
    Relu,
    Sum,
    ToDevice(usize),
    ToVec,
}

fn constructor() -> impl Strategy<Value = Constructor> {
    prop_oneof![
        Just(Constructor::Zeros),
        Just(Constructor::Ones),
        any::<u64>().prop_map(Constructor::Randn),
        (0usize..10).prop_map(Constructor::FromSlice),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Add),
        Just(Op::Sub),
        Just(Op::Mul),
        Just(Op::Div),
        Just(Op::Matmul),
        Just(Op::Relu),
        Just(Op::Sum),
        (0..DEVICES.len()).prop_map(Op::ToDevice),
        Just(Op::ToVec),
    ]
}

fn build(constructor: &Constructor, shape: &[usize], device: &Device) -> placement::Result<Tensor> {
    match constructor {
        Constructor::Zeros => Tensor::zeros(shape, device),
        Constructor::Ones => Tensor::ones(shape, device),
        Constructor::Randn(seed) => Tensor::randn(shape, *seed, device),
        Constructor::FromSlice(len) => Tensor::from_slice(&vec![0.5; *len], shape, device),
    }
}

fn apply(op: &Op, lhs: &Tensor, rhs: &Tensor) -> placement::Result<Tensor> {
    match op {
        Op::Add => lhs + rhs,
        Op::Sub => lhs - rhs,
        Op::Mul => lhs * rhs,
        Op::Div => lhs / rhs,
        Op::Matmul => lhs.matmul(rhs),
        Op::Relu => lhs.relu(),
        Op::Sum => lhs.sum(),
        Op::ToDevice(index) => lhs.to_device(&DEVICES[*index]),
        Op::ToVec => {
            let data = lhs.to_vec()?;
            Tensor::from_slice(&data, lhs.shape(), &lhs.device())
        }
    }
}

/// The errors these calls document; anything else fails the property.
fn documented(err: &Error) -> bool {
    matches!(
        err,
        Error::ShapeOverflow { .. }
            | Error::OutOfMemory { .. }
            | Error::ElementCount { .. }
            | Error::ShapeMismatch { .. }
            | Error::MatmulShape { .. }
            | Error::DeviceMismatch { .. }
    )
}

fn allocated() -> Vec<u64> {
    DEVICES
        .iter()
        .map(|device| placement::memory_allocated(device).unwrap())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_shapes_and_ops_fail_only_with_documented_errors(
        tensors in prop::collection::vec((constructor(), shape(), 0..DEVICES.len()), 1..4),
        ops in prop::collection::vec((op(), any::<prop::sample::Index>(), any::<prop::sample::Index>()), 0..8),
    ) {
        placement::simulated::configure("1MiB").unwrap();
        let start = allocated();
        {
            let mut live: Vec<Tensor> = Vec::new();
            for (constructor, shape, device) in &tensors {
                match build(constructor, shape, &DEVICES[*device]) {
                    Ok(tensor) => {
                        prop_assert_eq!(tensor.shape(), &shape[..]);
                        live.push(tensor);
                    }
                    Err(err) => prop_assert!(documented(&err), "{:?} {:?}: {}", constructor, shape, err),
                }
            }
            for (op, lhs, rhs) in &ops {
                if live.is_empty() {
                    break;
                }
                let (lhs, rhs) = (lhs.get(&live).clone(), rhs.get(&live).clone());
                match apply(op, &lhs, &rhs) {
                    Ok(tensor) => live.push(tensor),
                    Err(err) => prop_assert!(documented(&err), "{:?} {:?} {:?}: {}", op, lhs, rhs, err),
                }
            }
        }
        prop_assert_eq!(allocated(), start, "memory counters back at their start");
    }
}
