//! The run-time side of `#[device_check]`: the mismatch report, the mode, and the support code
//! the macros expand to (`placement::__private`, not a public API).

use std::collections::HashSet;
use std::fmt;
use std::panic::Location;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::Device;
use crate::placed::{Placed, TensorPath};

/// Why a `#[device_check]` function refused its arguments (or its result); inside
/// [`crate::Error`] it is [`crate::Error::DeviceCheck`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceCheckError {
    /// The function, as written (`linear`, `Model::forward`).
    pub function: String,
    /// Its checked arguments, in order.
    pub arguments: Vec<&'static str>,
    /// Each argument (or, where its tensors disagree, each tensor path) with its device.
    pub placements: Vec<(String, Device)>,
    /// The device asked for with `expect`, or for a result, the arguments' device.
    pub expected: Option<Device>,
    /// Whether the result, rather than the arguments, is misplaced.
    pub in_result: bool,
}

impl DeviceCheckError {
    /// The device things should be on: the expected one, else the most common one (the first
    /// seen among equals).
    pub fn target(&self) -> Option<Device> {
        self.expected.or_else(|| most_common(&self.placements))
    }
}

impl fmt::Display for DeviceCheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let call = format!("{}({})", self.function, self.arguments.join(", "));
        if self.in_result {
            write!(f, "device mismatch in the result of {call}: ")?;
        } else {
            write!(f, "device mismatch in {call}: ")?;
        }
        if let Some(expected) = self.expected {
            let what = if self.in_result {
                "the arguments' device"
            } else {
                "as asked"
            };
            write!(f, "expected {expected} ({what}), but ")?;
        }
        let target = self.target();
        f.write_str(&summarize(&self.placements, target))?;
        let Some(target) = target else {
            return Ok(());
        };
        let misplaced: Vec<&str> = self
            .placements
            .iter()
            .filter(|(_, device)| *device != target)
            .map(|(path, _)| path.as_str())
            .collect();
        let fix = target.to_rust();
        match misplaced.as_slice() {
            [] => Ok(()),
            [one] => write!(f, "; move {one} with {one}.to_device(&{fix})"),
            few if few.len() <= LISTED => write!(
                f,
                "; move {} to {target} with `.to_device(&{fix})`",
                few.join(", ")
            ),
            many => write!(
                f,
                "; move those {} to {target} with `.to_device(&{fix})`, or the whole value with \
                 `Placed::to_device`",
                many.len()
            ),
        }
    }
}

impl std::error::Error for DeviceCheckError {}

/// How many placements a message lists one by one, in their order; past that, it names the
/// tensors off the common device first and counts the rest.
const LISTED: usize = 6;

/// `x is on cpu, weight is on cuda:0`; for many tensors, the ones off `target` (or off the most
/// common device) by name and the others counted: `layers[1].bias is on cpu; 398 more on
/// cuda:0`.
pub(crate) fn summarize(placements: &[(String, Device)], target: Option<Device>) -> String {
    let each = |(path, device): &(String, Device)| format!("{path} is on {device}");
    if placements.len() <= LISTED {
        return placements.iter().map(each).collect::<Vec<_>>().join(", ");
    }
    let target = target.or_else(|| most_common(placements));
    let (on_target, off_target): (Vec<_>, Vec<_>) = placements
        .iter()
        .partition(|(_, device)| Some(*device) == target);
    let mut parts: Vec<String> = off_target.iter().take(LISTED).map(|p| each(p)).collect();
    let mut rest: Vec<(Device, usize)> = Vec::new();
    for (_, device) in off_target.iter().skip(LISTED) {
        match rest.iter_mut().find(|(seen, _)| seen == device) {
            Some((_, count)) => *count += 1,
            None => rest.push((*device, 1)),
        }
    }
    parts.extend(
        rest.iter()
            .map(|(device, count)| format!("{count} more on {device}")),
    );
    let mut text = parts.join(", ");
    if let (Some(target), false) = (target, on_target.is_empty()) {
        text.push_str(&format!("; {} more on {target}", on_target.len()));
    }
    text
}

/// The device most placements are on, the first seen among equals.
fn most_common(placements: &[(String, Device)]) -> Option<Device> {
    let mut counts: Vec<(Device, usize)> = Vec::new();
    for (_, device) in placements {
        match counts.iter_mut().find(|(seen, _)| seen == device) {
            Some((_, count)) => *count += 1,
            None => counts.push((*device, 1)),
        }
    }
    // `max_by_key` keeps the last of equals; the first seen should win.
    counts
        .iter()
        .rev()
        .max_by_key(|(_, count)| *count)
        .map(|(device, _)| *device)
}

/// What `#[device_check]` does on a mismatch: `PLACEMENT_DEVICE_CHECK=off|warn|error`, or
/// [`set_check_mode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckMode {
    /// No checks run.
    Off,
    /// A mismatch is reported on stderr, once per call site, and the call goes on.
    Warn,
    /// A mismatch is an error or a panic (the default).
    Error,
}

const UNSET: u8 = 0;
static MODE: AtomicU8 = AtomicU8::new(UNSET);

fn encode(mode: CheckMode) -> u8 {
    match mode {
        CheckMode::Off => 1,
        CheckMode::Warn => 2,
        CheckMode::Error => 3,
    }
}

/// The mode, read from `PLACEMENT_DEVICE_CHECK` once per process (`off`, `warn` or `error`).
#[inline]
pub fn mode() -> CheckMode {
    match MODE.load(Ordering::Relaxed) {
        1 => CheckMode::Off,
        2 => CheckMode::Warn,
        3 => CheckMode::Error,
        _ => init_mode(),
    }
}

#[cold]
fn init_mode() -> CheckMode {
    let value = std::env::var("PLACEMENT_DEVICE_CHECK").unwrap_or_default();
    let mode = match value.trim() {
        "off" => CheckMode::Off,
        "warn" => CheckMode::Warn,
        "" | "error" => CheckMode::Error,
        other => {
            eprintln!(
                "placement: PLACEMENT_DEVICE_CHECK={other:?} is not `off`, `warn` or `error`; using `error`"
            );
            CheckMode::Error
        }
    };
    set_check_mode(mode);
    mode
}

/// Sets what `#[device_check]` does for the rest of the process, overriding
/// `PLACEMENT_DEVICE_CHECK`.
pub fn set_check_mode(mode: CheckMode) {
    MODE.store(encode(mode), Ordering::Relaxed);
}

/// Support code for the macros' expansions. Not a public API: names and signatures may change.
#[doc(hidden)]
pub mod __private {
    use std::collections::BTreeMap;
    use std::marker::PhantomData;
    use std::ops::BitOr;
    use std::rc::Rc;
    use std::sync::{Arc, Mutex, RwLock};

    use super::*;
    use crate::placed::Movable;

    /// Whether the `device-check` feature is on; the expansions test it so that the compiler
    /// drops the checks when it is off.
    pub const ENABLED: bool = cfg!(feature = "device-check");

    pub use super::mode;

    /// The fast path: the first device seen (or the expected one), and whether all agree.
    #[derive(Debug)]
    pub struct Checker {
        target: Option<Device>,
        ok: bool,
    }

    impl Checker {
        #[inline]
        pub fn new(expected: Option<Device>) -> Self {
            Checker {
                target: expected,
                ok: true,
            }
        }

        #[inline]
        pub fn observe(&mut self, device: Device) {
            match self.target {
                None => self.target = Some(device),
                Some(target) => self.ok &= target == device,
            }
        }

        #[inline]
        pub fn ok(&self) -> bool {
            self.ok
        }

        /// The device the checked values agree on, if any.
        #[inline]
        pub fn device(&self) -> Option<Device> {
            if self.ok { self.target } else { None }
        }
    }

    /// The slow path, after a failed check: every argument's placements, for the message.
    #[derive(Debug)]
    pub struct Report {
        error: DeviceCheckError,
    }

    impl Report {
        #[cold]
        pub fn new(
            function: String,
            arguments: &[&'static str],
            expected: Option<Device>,
            in_result: bool,
        ) -> Self {
            let error = DeviceCheckError {
                function,
                arguments: arguments.to_vec(),
                placements: Vec::new(),
                expected,
                in_result,
            };
            Report { error }
        }

        /// Records one argument: as a whole when its tensors agree, tensor by tensor otherwise.
        #[cold]
        pub fn argument(&mut self, name: &str, view: &impl View) {
            let start = self.error.placements.len();
            let placements = &mut self.error.placements;
            view.visit(&TensorPath::root(name), &mut |path, device| {
                placements.push((path.to_string(), device))
            });
            let own = &self.error.placements[start..];
            let agreed = own
                .first()
                .map(|(_, device)| *device)
                .filter(|first| own.iter().all(|(_, d)| d == first));
            if let Some(device) = agreed {
                self.error.placements.truncate(start);
                self.error.placements.push((name.to_owned(), device));
            }
        }

        #[cold]
        pub fn finish(self) -> DeviceCheckError {
            self.error
        }
    }

    /// Whether a value's type lets `#[device_check]` see tensors: [`Checks`] or [`ChecksNothing`].
    /// The kinds of all checked values are or-ed together at compile time.
    #[derive(Clone, Copy, Debug)]
    pub struct Checks;

    /// See [`Checks`].
    #[derive(Clone, Copy, Debug)]
    pub struct ChecksNothing;

    impl<K> BitOr<K> for Checks {
        type Output = Checks;
        #[inline]
        fn bitor(self, _: K) -> Checks {
            Checks
        }
    }

    impl BitOr<Checks> for ChecksNothing {
        type Output = Checks;
        #[inline]
        fn bitor(self, _: Checks) -> Checks {
            Checks
        }
    }

    impl BitOr<ChecksNothing> for ChecksNothing {
        type Output = ChecksNothing;
        #[inline]
        fn bitor(self, _: ChecksNothing) -> ChecksNothing {
            ChecksNothing
        }
    }

    #[diagnostic::on_unimplemented(
        message = "`#[device_check]` would check nothing here: no checked value implements `placement::Placed`",
        label = "none of this function's checked values holds tensors that `#[device_check]` can see",
        note = "`#[device_check]` looks at values whose type implements `placement::Placed`: tensors and the containers and `#[derive(Placed)]` types that hold them",
        note = "take the tensors as arguments, give their holder `#[derive(Placed)]`, or remove `#[device_check]`"
    )]
    pub trait ChecksSomething {}

    impl ChecksSomething for Checks {}

    /// Fails to compile when `kind` is [`ChecksNothing`].
    #[inline]
    pub fn assert_checks<K: ChecksSomething>(kind: K) {
        let _ = kind;
    }

    #[diagnostic::on_unimplemented(
        message = "`#[device_check]` cannot look into `{Self}`: a generic argument is checked through a `placement::Placed` bound",
        label = "the tensors this argument may hold would go unchecked",
        note = "add the bound (`T: placement::Placed`, `impl Trait + placement::Placed`), take a concrete type, or skip an argument that holds no tensors: `#[device_check(skip(...))]`"
    )]
    pub trait GenericArgument {}

    impl<T: Placed + ?Sized> GenericArgument for T {}

    /// Fails to compile for a generic argument without a `Placed` bound, which the check could
    /// never look into.
    #[inline]
    pub fn generic_argument<T: GenericArgument + ?Sized>(value: &T) {
        let _ = value;
    }

    /// What the macros visit a value through: a [`Visit`] of a `Placed` value, or [`Skip`].
    pub trait View {
        /// [`Checks`] or [`ChecksNothing`].
        type Kind: Copy;
        fn kind(&self) -> Self::Kind;
        fn visit(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device));
    }

    /// A value whose type implements `Placed`.
    #[allow(missing_debug_implementations)] // wraps any `T`, `Debug` or not
    pub struct Visit<'a, T: ?Sized>(&'a T);

    impl<T: Placed + ?Sized> View for Visit<'_, T> {
        type Kind = Checks;

        #[inline]
        fn kind(&self) -> Checks {
            Checks
        }

        #[inline]
        fn visit(&self, path: &TensorPath<'_>, visit: &mut dyn FnMut(&TensorPath<'_>, Device)) {
            self.0.visit_devices(path, visit);
        }
    }

    /// A value that holds no tensor `#[device_check]` can see.
    #[derive(Debug)]
    pub struct Skip;

    impl View for Skip {
        type Kind = ChecksNothing;

        #[inline]
        fn kind(&self) -> ChecksNothing {
            ChecksNothing
        }

        #[inline]
        fn visit(&self, _: &TensorPath<'_>, _: &mut dyn FnMut(&TensorPath<'_>, Device)) {}
    }

    /// Wraps a value for autoref specialization, called as `(&&Arg(&value)).placement_view()`:
    /// [`ViaPlaced`] applies when the value is `Placed`, else [`ViaDerived`] or [`ViaLock`] fail
    /// to compile for values that hold tensors out of sight, else [`ViaOther`] skips it.
    #[allow(missing_debug_implementations)] // wraps any `T`, `Debug` or not
    pub struct Arg<'a, T: ?Sized>(pub &'a T);

    impl<T: ?Sized> Clone for Arg<'_, T> {
        fn clone(&self) -> Self {
            *self
        }
    }

    impl<T: ?Sized> Copy for Arg<'_, T> {}

    pub trait ViaPlaced<'a> {
        type View: View;
        fn placement_view(self) -> Self::View;
    }

    impl<'a, T: Placed + ?Sized> ViaPlaced<'a> for &&Arg<'a, T> {
        type View = Visit<'a, T>;

        #[inline]
        fn placement_view(self) -> Visit<'a, T> {
            Visit(self.0)
        }
    }

    pub trait ViaOther {
        fn placement_view(self) -> Skip;
    }

    impl<T: ?Sized> ViaOther for Arg<'_, T> {
        #[inline]
        fn placement_view(self) -> Skip {
            Skip
        }
    }

    /// Implemented by `#[derive(Placed)]` for its type whatever its type arguments, so that an
    /// argument whose derived impl does not apply is a compile error rather than a silent skip.
    pub trait Derived {}

    /// Tensors behind a lock or a `RefCell`: reading them means locking, which the check does not
    /// do, since a caller that holds the lock would deadlock.
    pub trait Lock {}

    impl<T: Placed + ?Sized> Lock for Mutex<T> {}
    impl<T: Placed + ?Sized> Lock for RwLock<T> {}
    impl<T: Placed + ?Sized> Lock for std::cell::RefCell<T> {}

    /// `Derived` and `Lock` through the containers `Placed` looks into.
    macro_rules! through {
        ($marker:ident) => {
            impl<T: $marker + ?Sized> $marker for &T {}
            impl<T: $marker + ?Sized> $marker for &mut T {}
            impl<T: $marker + ?Sized> $marker for Box<T> {}
            impl<T: $marker + ?Sized> $marker for Arc<T> {}
            impl<T: $marker + ?Sized> $marker for Rc<T> {}
            impl<T: $marker> $marker for Option<T> {}
            impl<T: $marker> $marker for Vec<T> {}
            impl<T: $marker> $marker for [T] {}
            impl<T: $marker, const N: usize> $marker for [T; N] {}
            impl<K, T: $marker> $marker for BTreeMap<K, T> {}
            impl<K, T: $marker, S> $marker for std::collections::HashMap<K, T, S> {}
        };
    }

    through!(Derived);
    through!(Lock);

    #[diagnostic::on_unimplemented(
        message = "`#[device_check]` cannot check `{Self}`: it derives `Placed`, but not for these type arguments",
        label = "this holds tensors that would go unchecked",
        note = "`#[derive(Placed)]` implements `Placed` when every field that mentions a type parameter has a type that implements it",
        note = "mark fields that hold no tensors `#[placed(skip)]`, add the missing `Placed` bounds, or skip the value (`#[device_check(skip(...))]` for an argument, `#[placed(skip)]` for a field)"
    )]
    pub trait PlacedForTheseTypes {}

    #[diagnostic::on_unimplemented(
        message = "`#[device_check]` cannot check `{Self}` without locking it",
        label = "this holds tensors behind a lock",
        note = "the check does not lock: a caller holding the lock would deadlock, and another thread could move the tensors before the body runs",
        note = "lock it before the call and pass what it guards (`&*guard`), or skip the value (`#[device_check(skip(...))]` for an argument, `#[placed(skip)]` for a field)"
    )]
    pub trait CheckedWithoutLocking {}

    pub trait ViaDerived {
        type Value: ?Sized;
        fn placement_view(self) -> Skip
        where
            Self::Value: PlacedForTheseTypes;
    }

    impl<T: Derived + ?Sized> ViaDerived for &Arg<'_, T> {
        type Value = T;

        fn placement_view(self) -> Skip
        where
            T: PlacedForTheseTypes,
        {
            Skip
        }
    }

    pub trait ViaLock {
        type Value: ?Sized;
        fn placement_view(self) -> Skip
        where
            Self::Value: CheckedWithoutLocking;
    }

    impl<T: Lock + ?Sized> ViaLock for &Arg<'_, T> {
        type Value = T;

        fn placement_view(self) -> Skip
        where
            T: CheckedWithoutLocking,
        {
            Skip
        }
    }

    /// As [`Arg`], for the fields a derived `visit_tensors_mut` hands out.
    #[allow(missing_debug_implementations)] // wraps any `T`, `Debug` or not
    pub struct ArgMut<'a, T: ?Sized>(pub &'a mut T);

    pub trait ViaPlacedMut {
        fn placement_visit_mut(
            self,
            path: &TensorPath<'_>,
            visit: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> crate::Result<()>,
        ) -> crate::Result<()>;
    }

    impl<T: Placed + ?Sized> ViaPlacedMut for ArgMut<'_, T> {
        #[inline]
        fn placement_visit_mut(
            self,
            path: &TensorPath<'_>,
            visit: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> crate::Result<()>,
        ) -> crate::Result<()> {
            self.0.visit_tensors_mut(path, visit)
        }
    }

    pub trait ViaOtherMut {
        fn placement_visit_mut(
            self,
            path: &TensorPath<'_>,
            visit: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> crate::Result<()>,
        ) -> crate::Result<()>;
    }

    impl<T: ?Sized> ViaOtherMut for &ArgMut<'_, T> {
        #[inline]
        fn placement_visit_mut(
            self,
            _: &TensorPath<'_>,
            _: &mut dyn FnMut(&TensorPath<'_>, &mut dyn Movable) -> crate::Result<()>,
        ) -> crate::Result<()> {
            Ok(())
        }
    }

    /// Turns a mismatch into the function's return value: `Err` when it returns
    /// `Result<_, E>` with `E: From<DeviceCheckError>` ([`ReturnsError`]), a panic at the
    /// caller's location otherwise ([`Panics`]).
    #[allow(missing_debug_implementations)] // wraps any `T`, `Debug` or not
    pub struct Ret<R>(PhantomData<R>);

    impl<R> Ret<R> {
        #[inline]
        pub fn new() -> Self {
            Ret(PhantomData)
        }
    }

    impl<R> Default for Ret<R> {
        fn default() -> Self {
            Self::new()
        }
    }

    pub trait ReturnsError<R> {
        fn fail(self, error: DeviceCheckError) -> R;
    }

    impl<T, E: From<DeviceCheckError>> ReturnsError<std::result::Result<T, E>>
        for Ret<std::result::Result<T, E>>
    {
        #[cold]
        fn fail(self, error: DeviceCheckError) -> std::result::Result<T, E> {
            Err(E::from(error))
        }
    }

    pub trait Panics<R> {
        fn fail(self, error: DeviceCheckError) -> R;
    }

    impl<R> Panics<R> for &Ret<R> {
        #[cold]
        #[track_caller]
        fn fail(self, error: DeviceCheckError) -> R {
            panic_mismatch(error)
        }
    }

    /// Panics with the mismatch, at the caller's location.
    #[cold]
    #[track_caller]
    pub fn panic_mismatch(error: DeviceCheckError) -> ! {
        panic!("{error}")
    }

    /// In `warn` mode: reports a mismatch on stderr, once per call site.
    #[cold]
    #[track_caller]
    pub fn warn_once(error: DeviceCheckError) {
        type CallSite = (&'static str, u32, u32);
        static SEEN: Mutex<Option<HashSet<CallSite>>> = Mutex::new(None);
        let location = Location::caller();
        let key = (location.file(), location.line(), location.column());
        let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.get_or_insert_with(HashSet::new).insert(key) {
            eprintln!("placement: warning: {error} (at {location}; reported once per call site)");
        }
    }

    /// `Type::method`, for messages about methods.
    #[cold]
    pub fn method_name<T: ?Sized>(method: &str) -> String {
        let full = std::any::type_name::<T>();
        let base = full.split('<').next().unwrap_or(full);
        format!("{}::{method}", base.rsplit("::").next().unwrap_or(base))
    }

    /// The `expect` option's value, from a `Device` or a `&Device`.
    #[inline]
    pub fn expected(device: impl std::borrow::Borrow<Device>) -> Option<Device> {
        Some(*device.borrow())
    }

    /// Runs the body of a `#[device_check(output)]` function once, as a closure that may move
    /// what it captures (a `&mut self` it reborrows from, for one).
    #[inline(always)]
    pub fn run_once<R>(body: impl FnOnce() -> R) -> R {
        body()
    }

    /// `#[device_check(trace)]`: the call's wall time and the change in memory allocated on
    /// each device, reported through `tracing` when the call returns (or unwinds). Only devices
    /// already set up are read, so tracing sets up nothing the call does not use.
    #[derive(Debug)]
    pub struct Trace {
        function: &'static str,
        start: std::time::Instant,
        before: Vec<(Device, u64)>,
    }

    fn allocated() -> Vec<(Device, u64)> {
        crate::backend::set_up_trackers()
            .into_iter()
            .map(|tracker| (tracker.device(), tracker.allocated()))
            .collect()
    }

    impl Trace {
        pub fn start(function: &'static str) -> Self {
            Trace {
                function,
                before: allocated(),
                start: std::time::Instant::now(),
            }
        }
    }

    impl Drop for Trace {
        fn drop(&mut self) {
            let elapsed = self.start.elapsed();
            // A device first set up during the call had nothing allocated before it.
            let deltas: Vec<String> = allocated()
                .into_iter()
                .map(|(device, after)| {
                    let before = self
                        .before
                        .iter()
                        .find(|(d, _)| *d == device)
                        .map_or(0, |(_, b)| *b);
                    format!("{device}: {:+} B", i128::from(after) - i128::from(before))
                })
                .collect();
            tracing::info!(
                target: "placement::trace",
                function = self.function,
                elapsed_us = elapsed.as_secs_f64() * 1e6,
                allocated = %deltas.join(", "),
                "{} took {:.1} µs",
                self.function,
                elapsed.as_secs_f64() * 1e6
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placed::Segment;

    fn mismatch(placements: &[(&str, Device)], expected: Option<Device>) -> DeviceCheckError {
        DeviceCheckError {
            function: "linear".to_owned(),
            arguments: vec!["x", "weight"],
            placements: placements
                .iter()
                .map(|(p, d)| (p.to_string(), *d))
                .collect(),
            expected,
            in_result: false,
        }
    }

    #[test]
    fn messages_name_the_function_each_argument_and_the_fix() {
        let m = mismatch(&[("x", Device::Cpu), ("weight", Device::Cuda(0))], None);
        assert_eq!(
            m.to_string(),
            "device mismatch in linear(x, weight): x is on cpu, weight is on cuda:0; move weight with weight.to_device(&Device::Cpu)"
        );
        let m = mismatch(
            &[
                ("x", Device::Cpu),
                ("weight", Device::Cuda(0)),
                ("bias", Device::Cuda(0)),
            ],
            None,
        );
        assert!(
            m.to_string()
                .ends_with("; move x with x.to_device(&Device::Cuda(0))"),
            "{m}"
        );
        let m = mismatch(
            &[("x", Device::Cpu), ("weight", Device::Cpu)],
            Some(Device::Cuda(1)),
        );
        assert_eq!(
            m.to_string(),
            "device mismatch in linear(x, weight): expected cuda:1 (as asked), but x is on cpu, weight is on cpu; \
             move x, weight to cuda:1 with `.to_device(&Device::Cuda(1))`"
        );
    }

    #[test]
    fn many_placements_name_the_minority_first_and_count_the_rest() {
        let mut placements: Vec<(String, Device)> = (0..400)
            .map(|i| (format!("model.layers[{i}].weight"), Device::Cuda(0)))
            .collect();
        placements[250].1 = Device::Cpu;
        placements[399].1 = Device::Cuda(1);
        let m = DeviceCheckError {
            function: "forward".to_owned(),
            arguments: vec!["model"],
            placements,
            expected: None,
            in_result: false,
        };
        assert_eq!(
            m.to_string(),
            "device mismatch in forward(model): model.layers[250].weight is on cpu, \
             model.layers[399].weight is on cuda:1; 398 more on cuda:0; \
             move model.layers[250].weight, model.layers[399].weight to cuda:0 with \
             `.to_device(&Device::Cuda(0))`"
        );

        let everywhere: Vec<(String, Device)> = (0..20)
            .map(|i| (format!("w[{i}]"), Device::Cuda(i % 3)))
            .collect();
        let text = summarize(&everywhere, Some(Device::Cuda(5)));
        assert_eq!(
            text,
            "w[0] is on cuda:0, w[1] is on cuda:1, w[2] is on cuda:2, w[3] is on cuda:0, \
             w[4] is on cuda:1, w[5] is on cuda:2, 5 more on cuda:0, 5 more on cuda:1, \
             4 more on cuda:2"
        );
        let m = DeviceCheckError {
            function: "f".to_owned(),
            arguments: vec!["w"],
            placements: everywhere,
            expected: Some(Device::Cuda(5)),
            in_result: false,
        };
        assert!(
            m.to_string().ends_with(
                "; move those 20 to cuda:5 with `.to_device(&Device::Cuda(5))`, or the whole \
                 value with `Placed::to_device`"
            ),
            "{m}"
        );
    }

    /// A value with two tensors on different devices, without the runtime's allocations.
    struct Pair;

    impl Placed for Pair {
        fn visit_devices(
            &self,
            path: &TensorPath<'_>,
            visit: &mut dyn FnMut(&TensorPath<'_>, Device),
        ) {
            visit(&path.join(Segment::Field("w")), Device::Cuda(0));
            visit(&path.join(Segment::Field("b")), Device::Cpu);
        }

        fn visit_tensors_mut(
            &mut self,
            _: &TensorPath<'_>,
            _: &mut dyn FnMut(
                &TensorPath<'_>,
                &mut dyn crate::placed::Movable,
            ) -> crate::Result<()>,
        ) -> crate::Result<()> {
            Ok(())
        }
    }

    #[test]
    #[allow(clippy::needless_borrow)] // the borrows choose the view, as in the expansions
    fn reports_collapse_arguments_whose_tensors_agree() {
        use __private::{ViaOther as _, ViaPlaced as _};
        let (a, model, label) = (crate::Tensor::zeros(&[1], &Device::Cpu).unwrap(), Pair, "x");
        let mut report = __private::Report::new("f".to_owned(), &["a", "model"], None, false);
        report.argument("a", &(&&__private::Arg(&a)).placement_view());
        report.argument("model", &(&&__private::Arg(&model)).placement_view());
        report.argument("label", &(&&__private::Arg(&label)).placement_view());
        let m = report.finish();
        let paths: Vec<_> = m.placements.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["a", "model.w", "model.b"]);
    }
}
