//! How host↔GPU copies are staged.

/// The host memory a host↔GPU copy goes through.
///
/// Host devices (the CPU and simulated GPUs) copy the same way in both modes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TransferMode {
    /// Straight from ordinary (pageable) memory; the driver stages it internally. PyTorch's
    /// default.
    #[default]
    Pageable,
    /// Through a reusable page-locked staging buffer of the device, which the GPU reads by DMA
    /// (PyTorch's `pin_memory()`); one extra host copy for a faster bus transfer.
    Pinned,
}
