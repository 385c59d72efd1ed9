//! `#[device_check]` and `#[derive(Placed)]` on real functions and models, with tensors on the
//! CPU and on simulated GPUs (`cuda:0` and `cuda:1`).

use std::cell::RefCell;
use std::sync::{Arc, Once};

use placement::{Device, Error, Placed, Tensor, device_check};

/// `cuda:2` is used only by the trace test, so its memory counters are exact; `cuda:3` only by
/// `a_failed_move_names_the_field_and_moves_nothing`.
const SPEC: &str = "1GiB,1GiB,64MiB,48MiB";

fn gpus() {
    placement::simulated::configure(SPEC).expect("simulated GPUs");
}

fn ones(device: Device) -> Tensor {
    Tensor::ones(&[2, 2], &device).expect("tensor")
}

thread_local! {
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f`, expecting a panic; returns its message and `file:line`.
fn panic_of<R>(f: impl FnOnce() -> R + std::panic::UnwindSafe) -> (String, String) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()));
            PANIC_AT.with(|cell| *cell.borrow_mut() = at);
        }))
    });
    let payload = std::panic::catch_unwind(f).err().expect("a panic");
    let message = match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload
            .downcast::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    };
    (
        message,
        PANIC_AT
            .with(|cell| cell.borrow_mut().take())
            .unwrap_or_default(),
    )
}

// ---- free functions ------------------------------------------------------------------------

#[device_check]
fn linear(x: &Tensor, weight: &Tensor) -> placement::Result<Tensor> {
    x.matmul(weight)
}

#[device_check]
fn add_three(a: &Tensor, b: &Tensor, c: &Tensor) -> Tensor {
    (&(a + b).unwrap() + c).unwrap()
}

#[test]
fn agreeing_arguments_pass() {
    gpus();
    let out = linear(&ones(Device::Cuda(0)), &ones(Device::Cuda(0))).unwrap();
    assert_eq!(out.device(), Device::Cuda(0));
    let sum = add_three(&ones(Device::Cpu), &ones(Device::Cpu), &ones(Device::Cpu));
    assert_eq!(sum.to_vec().unwrap(), vec![3.0; 4]);
}

#[test]
fn result_functions_return_the_mismatch() {
    gpus();
    let err = linear(&ones(Device::Cpu), &ones(Device::Cuda(0))).unwrap_err();
    let Error::DeviceCheck(mismatch) = &err else {
        panic!("not a device check: {err}")
    };
    assert_eq!(mismatch.function, "linear");
    assert_eq!(mismatch.arguments, ["x", "weight"]);
    assert_eq!(
        err.to_string(),
        "device mismatch in linear(x, weight): x is on cpu, weight is on cuda:0; \
         move weight with weight.to_device(&Device::Cpu)"
    );
    let err = linear(&ones(Device::Cuda(0)), &ones(Device::Cuda(1))).unwrap_err();
    assert!(
        err.to_string()
            .contains("x is on cuda:0, weight is on cuda:1"),
        "{err}"
    );
}

#[test]
fn other_functions_panic_at_the_caller() {
    gpus();
    let (a, b, c) = (
        ones(Device::Cuda(1)),
        ones(Device::Cuda(1)),
        ones(Device::Cuda(0)),
    );
    let line = line!() + 1;
    let (message, at) = panic_of(|| add_three(&a, &b, &c));
    assert_eq!(
        message,
        "device mismatch in add_three(a, b, c): a is on cuda:1, b is on cuda:1, c is on cuda:0; \
         move c with c.to_device(&Device::Cuda(1))"
    );
    assert_eq!(
        at,
        format!("{}:{line}", file!()),
        "the panic points at the caller"
    );
}

// ---- options -------------------------------------------------------------------------------

#[device_check(expect = "cuda:1", skip(scratch))]
fn on_second_gpu(
    x: &Tensor,
    scratch: &Tensor,
    steps: usize,
    label: &str,
) -> placement::Result<usize> {
    let _ = (x, scratch, label);
    Ok(steps)
}

struct Layer {
    device: Device,
}

impl Layer {
    #[device_check(expect = self.device)]
    fn forward(&self, x: &Tensor) -> placement::Result<Tensor> {
        x.relu()
    }
}

#[device_check(output)]
fn leaks_to_cpu(x: &Tensor) -> placement::Result<Tensor> {
    x.to_device(&Device::Cpu)
}

#[device_check(output)]
fn stays(x: &Tensor) -> placement::Result<Tensor> {
    x.relu()
}

#[test]
fn expect_skip_and_output() {
    gpus();
    let cpu = ones(Device::Cpu);
    // Non-tensor arguments are skipped without any annotation, and `scratch` by request.
    assert_eq!(
        on_second_gpu(&ones(Device::Cuda(1)), &cpu, 3, "step").unwrap(),
        3
    );
    let err = on_second_gpu(&ones(Device::Cuda(0)), &cpu, 3, "step").unwrap_err();
    assert_eq!(
        err.to_string(),
        "device mismatch in on_second_gpu(x, steps, label): expected cuda:1 (as asked), but x is on cuda:0; \
         move x with x.to_device(&Device::Cuda(1))"
    );

    let layer = Layer {
        device: Device::Cuda(0),
    };
    assert!(layer.forward(&ones(Device::Cuda(0))).is_ok());
    let err = layer.forward(&cpu).unwrap_err();
    assert!(err.to_string().starts_with("device mismatch in Layer::forward(self, x): expected cuda:0 (as asked), but x is on cpu"), "{err}");

    assert!(stays(&ones(Device::Cuda(1))).is_ok());
    let err = leaks_to_cpu(&ones(Device::Cuda(1))).unwrap_err();
    assert_eq!(
        err.to_string(),
        "device mismatch in the result of leaks_to_cpu(x): expected cuda:1 (the arguments' device), but result is on cpu; \
         move result with result.to_device(&Device::Cuda(1))"
    );
}

// ---- models --------------------------------------------------------------------------------

#[derive(Clone, Debug, Placed)]
struct Linear {
    weight: Tensor,
    bias: Option<Tensor>,
    #[placed(skip)]
    frozen: Tensor,
    name: String,
}

#[derive(Clone, Debug, Placed)]
struct Encoder {
    layers: Vec<Linear>,
    norm: (Tensor, Tensor),
}

#[derive(Clone, Debug, Placed)]
enum Head {
    Dense(Linear),
    Tied { weight: Arc<Tensor>, scale: f32 },
    Identity,
}

#[derive(Clone, Debug, Placed)]
struct Model {
    encoder: Encoder,
    head: Head,
}

impl Model {
    fn on(device: Device) -> Model {
        let linear = |device| Linear {
            weight: ones(device),
            bias: Some(ones(device)),
            frozen: ones(Device::Cpu),
            name: "l".into(),
        };
        Model {
            encoder: Encoder {
                layers: vec![linear(device), linear(device), linear(device)],
                norm: (ones(device), ones(device)),
            },
            head: Head::Dense(linear(device)),
        }
    }

    #[device_check]
    fn forward(&self, x: &Tensor) -> placement::Result<Tensor> {
        self.encoder
            .layers
            .iter()
            .try_fold(x.clone(), |x, layer| x.matmul(&layer.weight))
    }
}

#[test]
fn models_are_visited_with_field_paths() {
    gpus();
    let model = Model::on(Device::Cuda(0));
    assert_eq!(
        model.device("model"),
        Ok(Some(Device::Cuda(0))),
        "`frozen` is skipped"
    );
    let paths: Vec<String> = model
        .placements("model")
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    assert_eq!(paths.len(), 3 * 2 + 2 + 2);
    assert_eq!(paths[0], "model.encoder.layers[0].weight");
    assert_eq!(paths[1], "model.encoder.layers[0].bias");
    assert_eq!(paths[6], "model.encoder.norm.0");
    assert_eq!(paths[8], "model.head.weight");
    assert!(model.forward(&ones(Device::Cuda(0))).is_ok());
}

#[test]
fn a_misplaced_field_is_named() {
    gpus();
    let mut model = Model::on(Device::Cuda(0));
    model.encoder.layers[1].bias = Some(ones(Device::Cpu));
    let err = model.device("model").unwrap_err();
    assert!(
        err.to_string()
            .contains("model.encoder.layers[1].bias is on cpu"),
        "{err}"
    );
    // Eleven placements: the stray one first, the rest counted.
    let err = model.forward(&ones(Device::Cuda(0))).unwrap_err();
    assert_eq!(
        err.to_string(),
        "device mismatch in Model::forward(self, x): self.encoder.layers[1].bias is on cpu; \
         10 more on cuda:0; move self.encoder.layers[1].bias with \
         self.encoder.layers[1].bias.to_device(&Device::Cuda(0))"
    );
}

/// A model of 400 tensors with one stray bias: the message stays short.
#[test]
fn a_large_model_gets_a_short_message() {
    gpus();
    let mut encoder = Encoder {
        layers: (0..199)
            .map(|_| Linear {
                weight: ones(Device::Cuda(0)),
                bias: Some(ones(Device::Cuda(0))),
                frozen: ones(Device::Cuda(0)),
                name: "l".into(),
            })
            .collect(),
        norm: (ones(Device::Cuda(0)), ones(Device::Cuda(0))),
    };
    encoder.layers[117].bias = Some(ones(Device::Cpu));
    let model = Model {
        encoder,
        head: Head::Identity,
    };
    let err = model.forward(&ones(Device::Cuda(0))).unwrap_err();
    assert_eq!(
        err.to_string(),
        "device mismatch in Model::forward(self, x): self.encoder.layers[117].bias is on cpu; \
         400 more on cuda:0; move self.encoder.layers[117].bias with \
         self.encoder.layers[117].bias.to_device(&Device::Cuda(0))"
    );
    let err = model.device("model").unwrap_err();
    assert_eq!(
        err.to_string(),
        "tensors are on more than one device: model.encoder.layers[117].bias is on cpu; 399 more \
         on cuda:0"
    );
}

/// Three 16 MiB layers do not fit a 48 MiB GPU beside 1 MiB: the error names the layer that
/// did not fit, and the model stays where it was.
#[test]
fn a_failed_move_names_the_field_and_moves_nothing() {
    gpus();
    let gpu = Device::Cuda(3);
    let _resident = Tensor::zeros(&[256 * 1024], &gpu).unwrap();
    let before = placement::memory_allocated(&gpu).unwrap();
    let big = || Tensor::zeros(&[4 * 1024 * 1024], &Device::Cpu).unwrap();
    let layer = |weight| Linear {
        weight,
        bias: None,
        frozen: ones(Device::Cpu),
        name: "l".into(),
    };
    let mut encoder = Encoder {
        layers: vec![layer(big()), layer(big()), layer(big())],
        norm: (ones(Device::Cpu), ones(Device::Cpu)),
    };
    let err = encoder.to_device(&gpu).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "cannot move `self.layers[2].weight` to cuda:3, so nothing was moved: out of memory on cuda:3"
        ),
        "{err}"
    );
    assert_eq!(placement::memory_allocated(&gpu).unwrap(), before);
    let err = encoder
        .move_tensors(&placement::TensorPath::root("encoder"), &gpu)
        .unwrap_err();
    assert!(
        matches!(&err, Error::Move { path, .. } if path == "encoder.layers[2].weight"),
        "{err}"
    );
    assert_eq!(
        encoder.device("encoder"),
        Ok(Some(Device::Cpu)),
        "nothing moved"
    );
    assert_eq!(placement::memory_allocated(&gpu).unwrap(), before);
}

#[test]
fn models_move_as_a_whole() {
    gpus();
    let mut model = Model::on(Device::Cuda(0));
    model.encoder.layers[2].weight = ones(Device::Cpu);
    let moved = model.to_device(&Device::Cuda(1)).unwrap();
    assert_eq!(moved.device("model"), Ok(Some(Device::Cuda(1))));
    assert_eq!(
        moved.encoder.layers[0].frozen.device(),
        Device::Cpu,
        "skipped fields stay"
    );
    assert_eq!(moved.encoder.layers[0].name, "l");

    let tied = Head::Tied {
        weight: Arc::new(ones(Device::Cpu)),
        scale: 1.0,
    };
    let moved = tied.to_device(&Device::Cuda(0)).unwrap();
    assert_eq!(moved.device("head"), Ok(Some(Device::Cuda(0))));
    assert_eq!(Head::Identity.device("head"), Ok(None));

    // A tensor behind a shared reference cannot be replaced: an error, not a silent skip.
    let weight = ones(Device::Cpu);
    let view = View { weight: &weight };
    let err = view.to_device(&Device::Cuda(0)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot move `self.weight` in place: it is behind a shared reference; clone the value it points to first"
    );
}

#[derive(Clone, Debug, Placed)]
struct View<'a> {
    weight: &'a Tensor,
}

// ---- generic, trait and async functions ------------------------------------------------------

#[device_check]
fn generic<T: Placed>(input: &T, weight: &Tensor) -> placement::Result<()> {
    let _ = (input, weight);
    Ok(())
}

/// Without a `Placed` bound, the argument cannot be inspected: it is skipped by request (without
/// `skip`, a compile error, pinned in `macros/tests/ui/generic_without_placed.rs`).
#[device_check(skip(input))]
fn unbounded<T>(input: T, weight: &Tensor) -> placement::Result<()> {
    let _ = (input, weight);
    Ok(())
}

trait Forward {
    fn forward(&self, x: &Tensor) -> placement::Result<Tensor>;
}

struct Scale(Tensor);

impl Placed for Scale {
    fn visit_devices(
        &self,
        path: &placement::TensorPath<'_>,
        visit: &mut dyn FnMut(&placement::TensorPath<'_>, Device),
    ) {
        self.0
            .visit_devices(&path.join(placement::Segment::TupleField(0)), visit);
    }

    fn visit_tensors_mut(
        &mut self,
        path: &placement::TensorPath<'_>,
        visit: &mut dyn FnMut(
            &placement::TensorPath<'_>,
            &mut dyn placement::Movable,
        ) -> placement::Result<()>,
    ) -> placement::Result<()> {
        self.0
            .visit_tensors_mut(&path.join(placement::Segment::TupleField(0)), visit)
    }
}

impl Forward for Scale {
    #[device_check]
    fn forward(&self, x: &Tensor) -> placement::Result<Tensor> {
        x.mul(&self.0)
    }
}

#[device_check]
async fn async_linear(x: &Tensor, weight: &Tensor) -> placement::Result<Tensor> {
    x.matmul(weight)
}

/// Polls a future that never waits to completion.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
    }
}

#[test]
fn generic_trait_and_async_functions() {
    gpus();
    let (gpu, cpu) = (ones(Device::Cuda(0)), ones(Device::Cpu));
    assert!(generic(&vec![gpu.clone()], &gpu).is_ok());
    let err = generic(&(gpu.clone(), cpu.clone()), &gpu).unwrap_err();
    assert!(
        err.to_string()
            .contains("input.0 is on cuda:0, input.1 is on cpu, weight is on cuda:0"),
        "{err}"
    );
    assert!(unbounded(cpu.clone(), &gpu).is_ok());

    let scale = Scale(cpu.clone());
    let err = scale.forward(&gpu).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "device mismatch in Scale::forward(self, x): self is on cpu, x is on cuda:0"
        ),
        "{err}"
    );

    assert!(block_on(async_linear(&gpu, &gpu)).is_ok());
    let err = block_on(async_linear(&gpu, &cpu)).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("device mismatch in async_linear(x, weight)"),
        "{err}"
    );
}

// ---- trace ---------------------------------------------------------------------------------

/// `like` is checked, and another of its shape allocated where it is.
#[device_check(trace)]
fn allocate(like: &Tensor) -> placement::Result<Tensor> {
    Tensor::zeros(like.shape(), &like.device())
}

/// Collects what `tracing` writes.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn trace_reports_time_and_memory_per_device() {
    gpus();
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let like = Tensor::zeros(&[256], &Device::Cuda(2)).unwrap();
    let kept = tracing::subscriber::with_default(subscriber, || allocate(&like).unwrap());
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(
        text.contains("placement::trace") && text.contains("allocate took"),
        "{text}"
    );
    assert!(
        text.contains("cuda:2: +1024 B"),
        "the result is still held:\n{text}"
    );
    drop(kept);
}
