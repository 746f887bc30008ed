//! Symbolic input constructors, named as in PyTensor.

use oxtensor_data::DType;
use oxtensor_graph::{TensorType, Var};

/// An input of any rank with the given static extents (`None`: unknown).
#[track_caller]
pub fn tensor(name: &str, dtype: DType, shape: &[Option<usize>]) -> Var {
    Var::input(Some(name), TensorType::new(dtype, shape))
}

/// A 0-d input.
#[track_caller]
pub fn scalar(name: &str, dtype: DType) -> Var {
    tensor(name, dtype, &[])
}

/// A 1-d input of unknown length.
#[track_caller]
pub fn vector(name: &str, dtype: DType) -> Var {
    tensor(name, dtype, &[None])
}

/// A 2-d input of unknown extents.
#[track_caller]
pub fn matrix(name: &str, dtype: DType) -> Var {
    tensor(name, dtype, &[None, None])
}

/// A 3-d input of unknown extents.
#[track_caller]
pub fn tensor3(name: &str, dtype: DType) -> Var {
    tensor(name, dtype, &[None, None, None])
}

/// A 4-d input of unknown extents.
#[track_caller]
pub fn tensor4(name: &str, dtype: DType) -> Var {
    tensor(name, dtype, &[None, None, None, None])
}
