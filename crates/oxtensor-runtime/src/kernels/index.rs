use crate::KernelError;
use oxtensor_data::Tensor;
use oxtensor_graph::IndexEntry;

fn todo(name: &str) -> KernelError {
    KernelError::Value(format!("{name}: not yet implemented"))
}

/// See `Op::Subtensor`.
pub fn subtensor(
    x: &Tensor,
    spec: &[IndexEntry],
    scalars: &[&Tensor],
) -> Result<Tensor, KernelError> {
    let _ = (x, spec, scalars);
    Err(todo("subtensor"))
}
/// See `Op::IncSubtensor`.
pub fn inc_subtensor(
    x: &Tensor,
    y: &Tensor,
    spec: &[IndexEntry],
    scalars: &[&Tensor],
    set: bool,
) -> Result<Tensor, KernelError> {
    let _ = (x, y, spec, scalars, set);
    Err(todo("inc_subtensor"))
}
/// See `Op::Take`.
pub fn take(x: &Tensor, idx: &Tensor, axis: usize) -> Result<Tensor, KernelError> {
    let _ = (x, idx, axis);
    Err(todo("take"))
}
/// See `Op::IncTake`.
pub fn inc_take(
    x: &Tensor,
    y: &Tensor,
    idx: &Tensor,
    axis: usize,
    set: bool,
) -> Result<Tensor, KernelError> {
    let _ = (x, y, idx, axis, set);
    Err(todo("inc_take"))
}
