//! What `#[device_check]` looks into: derived types whatever their type parameters, maps,
//! pattern arguments by their bindings, generic arguments through their `Placed` bounds, and a
//! renamed runtime. Each case here was once skipped without a word; those that cannot be checked
//! are compile errors, pinned in `macros/tests/ui/`.

// The runtime under a second name, as a renamed dependency (`pl = { package = "placement" }`)
// gives it.
extern crate placement as pl;

use std::collections::{BTreeMap, HashMap};
use std::marker::PhantomData;

use placement::{Device, Error, Placed, Tensor, device_check};

fn gpus() {
    placement::simulated::configure("1GiB").expect("simulated GPU");
}

fn on(device: Device) -> Tensor {
    Tensor::ones(&[2], &device).expect("tensor")
}

/// The message of a mismatch, which must be one.
fn mismatch(result: placement::Result<()>) -> String {
    match result {
        Err(err @ Error::DeviceCheck(_)) => err.to_string(),
        other => panic!("expected a device mismatch, got {other:?}"),
    }
}

// ---- derived types, whatever their type parameters ---------------------------------------------

#[derive(Placed)]
struct Tagged<T> {
    weight: Tensor,
    _tag: PhantomData<T>,
}

#[derive(Placed)]
struct Activated<F: Fn(f32) -> f32> {
    weight: Tensor,
    activation: F,
}

trait Backend {
    type Weight;
}

struct Ours;

impl Backend for Ours {
    type Weight = Tensor;
}

#[derive(Placed)]
struct OnBackend<B: Backend> {
    weight: B::Weight,
}

#[device_check]
fn tagged(layer: &Tagged<f32>, x: &Tensor) -> placement::Result<()> {
    let _ = (layer, x);
    Ok(())
}

#[device_check]
fn activated<F: Fn(f32) -> f32>(layer: &Activated<F>, x: &Tensor) -> placement::Result<()> {
    let _ = (layer, x);
    Ok(())
}

#[device_check]
fn on_backend(layer: &OnBackend<Ours>, x: &Tensor) -> placement::Result<()> {
    let _ = (layer, x);
    Ok(())
}

#[test]
fn derived_types_are_checked_whatever_their_type_parameters() {
    gpus();
    let x = on(Device::Cuda(0));
    let layer = Tagged::<f32> {
        weight: on(Device::Cpu),
        _tag: PhantomData,
    };
    assert_eq!(
        mismatch(tagged(&layer, &x)),
        "device mismatch in tagged(layer, x): layer is on cpu, x is on cuda:0; \
         move x with x.to_device(&Device::Cpu)"
    );
    let layer = Activated {
        weight: on(Device::Cpu),
        activation: |v: f32| v.max(0.0),
    };
    assert_eq!((layer.activation)(-1.0), 0.0);
    assert!(mismatch(activated(&layer, &x)).contains("layer is on cpu, x is on cuda:0"));
    let layer = OnBackend::<Ours> {
        weight: on(Device::Cpu),
    };
    assert!(mismatch(on_backend(&layer, &x)).contains("layer is on cpu, x is on cuda:0"));
    assert!(on_backend(&OnBackend::<Ours> { weight: x.clone() }, &x).is_ok());
}

// ---- maps ---------------------------------------------------------------------------------------

#[device_check]
fn by_name(params: &HashMap<String, Tensor>, x: &Tensor) -> placement::Result<()> {
    let _ = (params, x);
    Ok(())
}

#[device_check]
fn by_layer(params: &BTreeMap<usize, Vec<Tensor>>, x: &Tensor) -> placement::Result<()> {
    let _ = (params, x);
    Ok(())
}

#[test]
fn maps_are_checked_by_key() {
    gpus();
    let x = on(Device::Cuda(0));
    let params = HashMap::from([("fc1.weight".to_owned(), on(Device::Cpu))]);
    assert_eq!(
        mismatch(by_name(&params, &x)),
        "device mismatch in by_name(params, x): params is on cpu, x is on cuda:0; \
         move x with x.to_device(&Device::Cpu)"
    );
    let layers = BTreeMap::from([(0, vec![x.clone()]), (1, vec![x.clone(), on(Device::Cpu)])]);
    assert!(
        mismatch(by_layer(&layers, &x)).contains(
            "params[0][0] is on cuda:0, params[1][0] is on cuda:0, params[1][1] is on cpu, x is on cuda:0"
        ),
    );
}

// ---- pattern arguments, by their bindings ---------------------------------------------------------

struct Wrapper(Tensor);

#[device_check]
fn pair((a, b): (Tensor, Tensor)) -> placement::Result<()> {
    let _ = (a, b);
    Ok(())
}

#[device_check]
fn unwrap(Wrapper(inner): Wrapper, x: &Tensor) -> placement::Result<()> {
    let _ = (inner, x);
    Ok(())
}

#[device_check(skip(b))]
fn skip_one_binding((a, b): (&Tensor, &Tensor), c: &Tensor) -> placement::Result<()> {
    let _ = (a, b, c);
    Ok(())
}

#[test]
fn pattern_arguments_are_checked_by_their_bindings() {
    gpus();
    let (cpu, gpu) = (on(Device::Cpu), on(Device::Cuda(0)));
    assert_eq!(
        mismatch(pair((cpu.clone(), gpu.clone()))),
        "device mismatch in pair(a, b): a is on cpu, b is on cuda:0; \
         move b with b.to_device(&Device::Cpu)"
    );
    assert!(pair((gpu.clone(), gpu.clone())).is_ok());
    assert!(
        mismatch(unwrap(Wrapper(cpu.clone()), &gpu)).contains("inner is on cpu, x is on cuda:0")
    );
    assert!(
        skip_one_binding((&cpu, &gpu), &cpu).is_ok(),
        "`b` is skipped"
    );
    assert!(mismatch(skip_one_binding((&cpu, &cpu), &gpu)).contains("a is on cpu, c is on cuda:0"));
}

// ---- `self`, skipped ------------------------------------------------------------------------------

#[derive(Placed)]
struct Cache {
    stale: Tensor,
}

impl Cache {
    /// The cache may be anywhere; the two inputs must agree.
    #[device_check(skip(self))]
    fn blend(&self, x: &Tensor, y: &Tensor) -> placement::Result<()> {
        let _ = (&self.stale, x, y);
        Ok(())
    }
}

#[test]
fn self_can_be_skipped() {
    gpus();
    let cache = Cache {
        stale: on(Device::Cpu),
    };
    let gpu = on(Device::Cuda(0));
    assert!(cache.blend(&gpu, &gpu).is_ok());
    assert_eq!(
        mismatch(cache.blend(&gpu, &on(Device::Cpu))),
        "device mismatch in Cache::blend(x, y): x is on cuda:0, y is on cpu; \
         move y with y.to_device(&Device::Cuda(0))"
    );
}

// ---- generic arguments, through their bounds ------------------------------------------------------

/// A model trait with `Placed` as a supertrait: its implementors are checked.
trait Module: Placed {}

impl Module for Cache {}

#[device_check]
fn through_supertrait<M: Module>(module: &M, x: &Tensor) -> placement::Result<()> {
    let _ = (module, x);
    Ok(())
}

#[device_check]
fn through_impl_trait(input: &(impl Placed + ?Sized), x: &Tensor) -> placement::Result<()> {
    let _ = (input, x);
    Ok(())
}

/// A callable holds nothing `Placed` can see, and needs no `skip`.
#[device_check]
fn with_callback<F: Fn(&Tensor) -> placement::Result<Tensor>>(
    x: &Tensor,
    y: &Tensor,
    callback: F,
) -> placement::Result<()> {
    callback(x)?.add(y).map(drop)
}

#[test]
fn generic_arguments_are_checked_through_their_bounds() {
    gpus();
    let cache = Cache {
        stale: on(Device::Cpu),
    };
    let gpu = on(Device::Cuda(0));
    assert!(
        mismatch(through_supertrait(&cache, &gpu)).contains("module is on cpu, x is on cuda:0")
    );
    assert!(mismatch(through_impl_trait(&[on(Device::Cpu)][..], &gpu)).contains("input is on cpu"));
    assert!(with_callback(&gpu, &gpu, |t| t.relu()).is_ok());
    assert!(mismatch(with_callback(&gpu, &on(Device::Cpu), |t| t.relu())).contains("y is on cpu"));
}

// ---- a renamed runtime ----------------------------------------------------------------------------

/// The expansions name the runtime as `pl`; that no path of theirs is `::placement` is pinned by
/// the macros' unit tests, since here both names work.
#[derive(pl::Placed)]
#[placed(crate = "pl")]
struct Renamed {
    weight: pl::Tensor,
}

#[device_check(crate = "pl")]
fn renamed(layer: &Renamed, x: &pl::Tensor) -> pl::Result<()> {
    let _ = (layer, x);
    Ok(())
}

#[test]
fn a_renamed_runtime_is_named_by_the_crate_option() {
    gpus();
    let layer = Renamed {
        weight: on(Device::Cpu),
    };
    assert!(
        mismatch(renamed(&layer, &on(Device::Cuda(0)))).contains("layer is on cpu, x is on cuda:0")
    );
}
