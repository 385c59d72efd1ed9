//! Model code that callers place on devices of their choosing — or should.

pub mod encoder;
pub mod kernels;
pub mod runtime;
