//! Element counts computed once, checked, so that no size computation downstream can overflow.

use crate::{Error, Result};

/// The number of f32 elements of a tensor, known to fit one allocation: its bytes are at most
/// `isize::MAX`, Rust's limit for any allocation, so every byte count derived from it is exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Len(usize);

impl Len {
    const MAX: usize = isize::MAX as usize / size_of::<f32>();

    /// The element count of `shape`. A shape with a zero dimension holds no element, whatever
    /// its other dimensions, so the answer never depends on the order of dimensions.
    ///
    /// # Errors
    /// [`Error::ShapeOverflow`] when the elements' bytes could not be addressed.
    pub(crate) fn of_shape(shape: &[usize]) -> Result<Len> {
        if shape.contains(&0) {
            return Ok(Len(0));
        }
        shape
            .iter()
            .try_fold(1usize, |count, &dim| count.checked_mul(dim))
            .filter(|&count| count <= Len::MAX)
            .map(Len)
            .ok_or_else(|| Error::ShapeOverflow {
                shape: shape.to_vec(),
            })
    }

    /// The length of data that already exists.
    pub(crate) fn of_slice(data: &[f32]) -> Len {
        // A slice never holds more than `isize::MAX` bytes.
        Len(data.len())
    }

    pub(crate) fn get(self) -> usize {
        self.0
    }

    pub(crate) fn bytes(self) -> u64 {
        // Exact: at most `isize::MAX`.
        (self.0 * size_of::<f32>()) as u64
    }
}

/// An empty host buffer with room for `len` elements, or [`Error::OutOfMemory`] when the host's
/// allocator refuses (instead of aborting the process, as `Vec::with_capacity` would).
pub(crate) fn host_buffer(len: Len, device: crate::Device) -> Result<Vec<f32>> {
    let mut buffer = Vec::new();
    buffer
        .try_reserve_exact(len.get())
        .map_err(|_| Error::OutOfMemory {
            device,
            requested: len.bytes(),
            free: None,
            total: None,
        })?;
    Ok(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_dimensions_win_in_any_order() {
        for shape in [
            &[0, usize::MAX, 2][..],
            &[usize::MAX, 2, 0],
            &[2, 0, usize::MAX],
        ] {
            assert_eq!(Len::of_shape(shape), Ok(Len(0)), "{shape:?}");
        }
    }

    #[test]
    fn counts_past_an_allocation_are_overflows_in_any_order() {
        for shape in [
            &[usize::MAX / 2][..],
            &[1 << 62],
            &[usize::MAX, 2],
            &[2, usize::MAX],
            &[1 << 31, 1 << 31],
        ] {
            assert_eq!(
                Len::of_shape(shape),
                Err(Error::ShapeOverflow {
                    shape: shape.to_vec()
                }),
                "{shape:?}"
            );
        }
        assert_eq!(Len::of_shape(&[]), Ok(Len(1)), "a scalar");
        assert_eq!(Len::of_shape(&[1 << 40]).map(Len::bytes), Ok(1 << 42));
        assert_eq!(Len::of_shape(&[Len::MAX]).map(Len::get), Ok(Len::MAX));
        assert!(Len::of_shape(&[Len::MAX + 1]).is_err());
    }
}
