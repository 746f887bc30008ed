use crate::KernelError;
use oxtensor_data::Tensor;
use oxtensor_graph::{ArgReduceOp, ReduceOp};

/// Reduces `x` over `axes` (sorted, unique), dropping them.
pub fn reduce(op: ReduceOp, axes: &[usize], x: &Tensor) -> Result<Tensor, KernelError> {
    let _ = (op, axes, x);
    Err(KernelError::Value("reduce: not yet implemented".into()))
}

/// Index of the extreme along `axis`, or of the flattened array.
pub fn arg_reduce(op: ArgReduceOp, axis: Option<usize>, x: &Tensor) -> Result<Tensor, KernelError> {
    let _ = (op, axis, x);
    Err(KernelError::Value("arg_reduce: not yet implemented".into()))
}
