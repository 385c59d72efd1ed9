//! The run-time side of `#[device_check]`: the mismatch report, the mode, and the support code
//! the macros expand to (`placement::__private`, not a public API).

use std::collections::HashSet;
use std::fmt;
use std::panic::Location;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::Device;
use crate::placed::{Placed, TensorPath};

/// Why a `#[device_check]` function refused its arguments (or its result).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceMismatch {
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

impl DeviceMismatch {
    /// The device things should be on: the expected one, else the most common one (the first
    /// seen among equals).
    pub fn target(&self) -> Option<Device> {
        self.expected.or_else(|| {
            let mut counts: Vec<(Device, usize)> = Vec::new();
            for (_, device) in &self.placements {
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
        })
    }
}

impl fmt::Display for DeviceMismatch {
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
        let each: Vec<String> = self
            .placements
            .iter()
            .map(|(path, device)| format!("{path} is on {device}"))
            .collect();
        f.write_str(&each.join(", "))?;
        let Some(target) = self.target() else {
            return Ok(());
        };
        let misplaced: Vec<&str> = self
            .placements
            .iter()
            .filter(|(_, device)| *device != target)
            .map(|(path, _)| path.as_str())
            .collect();
        match misplaced.as_slice() {
            [] => Ok(()),
            [one] => write!(
                f,
                "; move {one} with {one}.to_device(&{})",
                target.to_rust()
            ),
            many => write!(
                f,
                "; move {} to {target} with `.to_device(&{})`",
                many.join(", "),
                target.to_rust()
            ),
        }
    }
}

impl std::error::Error for DeviceMismatch {}

/// What `PLACEMENT_DEVICE_CHECK` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// No checks run.
    Off,
    /// A mismatch is reported on stderr, once per call site, and the call goes on.
    Warn,
    /// A mismatch is an error or a panic (the default).
    Error,
}

const UNSET: u8 = 0;
static MODE: AtomicU8 = AtomicU8::new(UNSET);

fn encode(mode: Mode) -> u8 {
    match mode {
        Mode::Off => 1,
        Mode::Warn => 2,
        Mode::Error => 3,
    }
}

/// The mode, read from `PLACEMENT_DEVICE_CHECK` once per process (`off`, `warn` or `error`).
#[inline]
pub fn mode() -> Mode {
    match MODE.load(Ordering::Relaxed) {
        1 => Mode::Off,
        2 => Mode::Warn,
        3 => Mode::Error,
        _ => init_mode(),
    }
}

#[cold]
fn init_mode() -> Mode {
    let value = std::env::var("PLACEMENT_DEVICE_CHECK").unwrap_or_default();
    let mode = match value.trim() {
        "off" => Mode::Off,
        "warn" => Mode::Warn,
        "" | "error" => Mode::Error,
        other => {
            eprintln!(
                "placement: PLACEMENT_DEVICE_CHECK={other:?} is not `off`, `warn` or `error`; using `error`"
            );
            Mode::Error
        }
    };
    set_mode(mode);
    mode
}

/// Sets the mode for the rest of the process, overriding `PLACEMENT_DEVICE_CHECK`.
pub fn set_mode(mode: Mode) {
    MODE.store(encode(mode), Ordering::Relaxed);
}

/// Support code for the macros' expansions. Not a public API: names and signatures may change.
#[doc(hidden)]
pub mod __private {
    use super::*;

    pub use crate::placed::Segment;

    /// Whether the `device-check` feature is on; the expansions test it so that the compiler
    /// drops the checks when it is off.
    pub const ENABLED: bool = cfg!(feature = "device-check");

    pub use super::Mode;
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
        mismatch: DeviceMismatch,
    }

    impl Report {
        #[cold]
        pub fn new(
            function: String,
            arguments: &[&'static str],
            expected: Option<Device>,
            in_result: bool,
        ) -> Self {
            let mismatch = DeviceMismatch {
                function,
                arguments: arguments.to_vec(),
                placements: Vec::new(),
                expected,
                in_result,
            };
            Report { mismatch }
        }

        /// Records one argument: as a whole when its tensors agree, tensor by tensor otherwise.
        #[cold]
        pub fn argument(
            &mut self,
            name: &str,
            visit: impl FnOnce(&mut dyn FnMut(&TensorPath<'_>, Device)),
        ) {
            let start = self.mismatch.placements.len();
            let placements = &mut self.mismatch.placements;
            visit(&mut |path, device| placements.push((path.to_string(), device)));
            let own = &self.mismatch.placements[start..];
            let agreed = own
                .first()
                .map(|(_, device)| *device)
                .filter(|first| own.iter().all(|(_, d)| d == first));
            if let Some(device) = agreed {
                self.mismatch.placements.truncate(start);
                self.mismatch.placements.push((name.to_owned(), device));
            }
        }

        #[cold]
        pub fn finish(self) -> DeviceMismatch {
            self.mismatch
        }
    }

    /// Wraps a value for autoref specialization: [`ViaPlaced`] applies when `T: Placed`,
    /// [`ViaOther`] (which does nothing) otherwise.
    #[allow(missing_debug_implementations)] // wraps any `T`, `Debug` or not
    pub struct Arg<'a, T: ?Sized>(pub &'a T);

    pub trait ViaPlaced {
        fn placement_visit(
            self,
            path: &TensorPath<'_>,
            visit: &mut dyn FnMut(&TensorPath<'_>, Device),
        );
    }

    impl<T: Placed + ?Sized> ViaPlaced for Arg<'_, T> {
        #[inline]
        fn placement_visit(
            self,
            path: &TensorPath<'_>,
            visit: &mut dyn FnMut(&TensorPath<'_>, Device),
        ) {
            self.0.visit_devices(path, visit);
        }
    }

    pub trait ViaOther {
        fn placement_visit(
            self,
            path: &TensorPath<'_>,
            visit: &mut dyn FnMut(&TensorPath<'_>, Device),
        );
    }

    impl<T: ?Sized> ViaOther for &Arg<'_, T> {
        #[inline]
        fn placement_visit(self, _: &TensorPath<'_>, _: &mut dyn FnMut(&TensorPath<'_>, Device)) {}
    }

    /// As [`Arg`], for moving a field's tensors.
    #[allow(missing_debug_implementations)] // wraps any `T`, `Debug` or not
    pub struct ArgMut<'a, T: ?Sized>(pub &'a mut T);

    pub trait ViaPlacedMut {
        fn placement_move(self, path: &TensorPath<'_>, device: &Device) -> crate::Result<()>;
    }

    impl<T: Placed + ?Sized> ViaPlacedMut for ArgMut<'_, T> {
        #[inline]
        fn placement_move(self, path: &TensorPath<'_>, device: &Device) -> crate::Result<()> {
            self.0.move_tensors(path, device)
        }
    }

    pub trait ViaOtherMut {
        fn placement_move(self, path: &TensorPath<'_>, device: &Device) -> crate::Result<()>;
    }

    impl<T: ?Sized> ViaOtherMut for &ArgMut<'_, T> {
        #[inline]
        fn placement_move(self, _: &TensorPath<'_>, _: &Device) -> crate::Result<()> {
            Ok(())
        }
    }

    /// Turns a mismatch into the function's return value: `Err` when it returns
    /// `Result<_, E>` with `E: From<DeviceMismatch>` ([`ReturnsError`]), a panic at the
    /// caller's location otherwise ([`Panics`]).
    #[allow(missing_debug_implementations)] // wraps any `T`, `Debug` or not
    pub struct Ret<R>(std::marker::PhantomData<R>);

    impl<R> Ret<R> {
        #[inline]
        pub fn new() -> Self {
            Ret(std::marker::PhantomData)
        }
    }

    impl<R> Default for Ret<R> {
        fn default() -> Self {
            Self::new()
        }
    }

    pub trait ReturnsError<R> {
        fn fail(self, mismatch: DeviceMismatch) -> R;
    }

    impl<T, E: From<DeviceMismatch>> ReturnsError<std::result::Result<T, E>>
        for Ret<std::result::Result<T, E>>
    {
        #[cold]
        fn fail(self, mismatch: DeviceMismatch) -> std::result::Result<T, E> {
            Err(E::from(mismatch))
        }
    }

    pub trait Panics<R> {
        fn fail(self, mismatch: DeviceMismatch) -> R;
    }

    impl<R> Panics<R> for &Ret<R> {
        #[cold]
        #[track_caller]
        fn fail(self, mismatch: DeviceMismatch) -> R {
            panic_mismatch(mismatch)
        }
    }

    /// Panics with the mismatch, at the caller's location.
    #[cold]
    #[track_caller]
    pub fn panic_mismatch(mismatch: DeviceMismatch) -> ! {
        panic!("{mismatch}")
    }

    /// In `warn` mode: reports a mismatch on stderr, once per call site.
    #[cold]
    #[track_caller]
    pub fn warn_once(mismatch: DeviceMismatch) {
        type CallSite = (&'static str, u32, u32);
        static SEEN: Mutex<Option<HashSet<CallSite>>> = Mutex::new(None);
        let location = Location::caller();
        let key = (location.file(), location.line(), location.column());
        let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.get_or_insert_with(HashSet::new).insert(key) {
            eprintln!(
                "placement: warning: {mismatch} (at {location}; reported once per call site)"
            );
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

    /// `#[device_check(trace)]`: the call's wall time and the change in memory allocated on
    /// each device, reported through `tracing` when the call returns (or unwinds).
    #[derive(Debug)]
    pub struct Trace {
        function: &'static str,
        start: std::time::Instant,
        before: Vec<(Device, u64)>,
    }

    fn allocated() -> Vec<(Device, u64)> {
        let gpus = crate::device_count().unwrap_or(0);
        std::iter::once(Device::Cpu)
            .chain((0..gpus).map(Device::Cuda))
            .filter_map(|device| Some((device, crate::memory_allocated(&device).ok()?)))
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
            let deltas: Vec<String> = allocated()
                .into_iter()
                .map(|(device, after)| {
                    let before = self
                        .before
                        .iter()
                        .find(|(d, _)| *d == device)
                        .map_or(0, |(_, b)| *b);
                    format!("{device}: {:+} B", after as i128 - before as i128)
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

    fn mismatch(placements: &[(&str, Device)], expected: Option<Device>) -> DeviceMismatch {
        DeviceMismatch {
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
    fn reports_collapse_arguments_whose_tensors_agree() {
        let mut report = __private::Report::new("f".to_owned(), &["a", "model"], None, false);
        report.argument("a", |visit| visit(&TensorPath::root("a"), Device::Cpu));
        report.argument("model", |visit| {
            let root = TensorPath::root("model");
            visit(
                &root.join(crate::placed::Segment::Field("w")),
                Device::Cuda(0),
            );
            visit(&root.join(crate::placed::Segment::Field("b")), Device::Cpu);
        });
        let m = report.finish();
        let paths: Vec<_> = m.placements.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["a", "model.w", "model.b"]);
    }
}
