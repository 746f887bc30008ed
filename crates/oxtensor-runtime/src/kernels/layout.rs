use crate::KernelError;
use oxtensor_data::{DType, Tensor};

fn todo(name: &str) -> KernelError {
    KernelError::Value(format!("{name}: not yet implemented"))
}

/// See `Op::DimShuffle`.
pub fn dimshuffle(x: &Tensor, order: &[Option<usize>]) -> Result<Tensor, KernelError> {
    let _ = (x, order);
    Err(todo("dimshuffle"))
}
/// See `Op::Reshape`.
pub fn reshape(x: &Tensor, shape: &Tensor) -> Result<Tensor, KernelError> {
    let _ = (x, shape);
    Err(todo("reshape"))
}
/// See `Op::Shape`.
pub fn shape(x: &Tensor) -> Tensor {
    let dims: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
    Tensor::from_slice(&dims, &[dims.len()]).expect("a vector of the rank's length")
}
/// See `Op::ShapeI`.
pub fn shape_i(x: &Tensor, i: usize) -> Tensor {
    Tensor::scalar(x.shape()[i] as i64)
}
/// See `Op::SpecifyShape`.
pub fn specify_shape(x: &Tensor, spec: &[Option<usize>]) -> Result<Tensor, KernelError> {
    let _ = (x, spec);
    Err(todo("specify_shape"))
}
/// See `Op::Alloc`.
pub fn alloc(value: &Tensor, dims: &[&Tensor]) -> Result<Tensor, KernelError> {
    let _ = (value, dims);
    Err(todo("alloc"))
}
/// See `Op::Arange`.
pub fn arange(
    dtype: DType,
    start: &Tensor,
    stop: &Tensor,
    step: &Tensor,
) -> Result<Tensor, KernelError> {
    let _ = (dtype, start, stop, step);
    Err(todo("arange"))
}
/// See `Op::Eye`.
pub fn eye(dtype: DType, n: &Tensor, m: &Tensor, k: &Tensor) -> Result<Tensor, KernelError> {
    let _ = (dtype, n, m, k);
    Err(todo("eye"))
}
/// See `Op::MakeVector`.
pub fn make_vector(dtype: DType, items: &[&Tensor]) -> Result<Tensor, KernelError> {
    let _ = (dtype, items);
    Err(todo("make_vector"))
}
/// See `Op::Join`.
pub fn join(axis: usize, xs: &[&Tensor], dtype: DType) -> Result<Tensor, KernelError> {
    let _ = (axis, xs, dtype);
    Err(todo("join"))
}
/// See `Op::Split`.
pub fn split(axis: usize, x: &Tensor, sizes: &Tensor) -> Result<Vec<Tensor>, KernelError> {
    let _ = (axis, x, sizes);
    Err(todo("split"))
}
