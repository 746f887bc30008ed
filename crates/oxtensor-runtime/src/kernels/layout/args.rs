//! Integer arguments (extents, indices, split sizes) read from runtime tensors of any integer
//! dtype, and shapes formatted the way NumPy's error messages print them.

use crate::KernelError;
use oxtensor_data::Tensor;
use std::fmt::Display;

/// Formats items as a Python tuple — `()`, `(5,)`, `(2, 3)` — as NumPy prints shapes.
pub(in crate::kernels) fn tuple<T: Display>(items: &[T]) -> String {
    match items {
        [one] => format!("({one},)"),
        _ => {
            let parts: Vec<String> = items.iter().map(ToString::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// The elements of an integer tensor of any integer dtype and rank, in C order, as `i64`.
/// `uint64` values above `i64::MAX` saturate: they are out of range as indices, extents and
/// sizes, and clamp as slice bounds, just as their exact values would. `what` names the input
/// in the error when the dtype is not an integer type.
pub(in crate::kernels) fn int_values(
    t: &Tensor,
    what: &dyn Display,
) -> Result<Vec<i64>, KernelError> {
    let dtype = t.dtype();
    if !dtype.is_int() {
        return Err(KernelError::Value(format!(
            "{what} must have an integer dtype, got {dtype}"
        )));
    }
    Ok(if dtype.is_unsigned_int() {
        t.to_vec_as::<u64>()
            .into_iter()
            .map(|v| i64::try_from(v).unwrap_or(i64::MAX))
            .collect()
    } else {
        t.to_vec_as::<i64>()
    })
}

/// The value of a 0-d integer tensor of any integer dtype (see [`int_values`]).
pub(in crate::kernels) fn int_scalar(t: &Tensor, what: &dyn Display) -> Result<i64, KernelError> {
    if t.ndim() != 0 {
        return Err(KernelError::Shape(format!(
            "{what} must be a scalar, got an array of shape {}",
            tuple(t.shape())
        )));
    }
    int_values(t, what)?
        .first()
        .copied()
        .ok_or_else(|| KernelError::Shape(format!("{what} is an empty scalar")))
}
