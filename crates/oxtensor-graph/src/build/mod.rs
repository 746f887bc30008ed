//! The graph-building API: functions that construct well-typed nodes with NumPy/PyTensor
//! conventions on top of the raw [`Op`]s (rank padding for broadcasting, weak scalar constants,
//! negative axes, `keepdims`, compositions such as `mean` and `var`).
//!
//! Every function is fallible and returns a [`GraphError`] naming the offending variable; the
//! operator overloads and methods on [`Var`] (in `methods.rs`) are thin panicking wrappers for
//! ergonomic Rust use. Front ends (the Python package) call these functions.

pub mod check;
pub mod einsum;
mod elemwise;
pub mod extra;
mod index;
mod layout;
pub mod linalg;
mod literal;
mod methods;
pub mod random;
mod reduce;
mod special;

pub use einsum::{einsum, einsum_with};
pub use elemwise::*;
pub use index::{Idx, inc_subtensor, set_subtensor, subtensor, take};
pub use layout::*;
pub use literal::{Operand, literal, resolve, scalar_like, smallest_int};
pub use reduce::*;
pub use special::*;

use crate::{GraphError, Var};

/// Result of building a node.
pub type Built = Result<Var, GraphError>;

/// A Python/Rust number used where a tensor is expected. Its dtype is decided by the tensor it
/// meets (NumPy 2's weak scalars): an int adopts an integer tensor's dtype, a float adopts a
/// float tensor's dtype and turns integer tensors into `float64`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Scalar {
    /// A boolean literal.
    Bool(bool),
    /// An integer literal.
    Int(i64),
    /// A floating-point literal.
    Float(f64),
}

impl From<f64> for Scalar {
    fn from(v: f64) -> Scalar {
        Scalar::Float(v)
    }
}

impl From<i64> for Scalar {
    fn from(v: i64) -> Scalar {
        Scalar::Int(v)
    }
}

impl From<i32> for Scalar {
    fn from(v: i32) -> Scalar {
        Scalar::Int(v as i64)
    }
}

impl From<bool> for Scalar {
    fn from(v: bool) -> Scalar {
        Scalar::Bool(v)
    }
}

/// The constant for a weak scalar meeting a tensor of dtype `like` (NumPy 2 promotion).
#[track_caller]
pub fn weak_constant(value: Scalar, like: oxtensor_data::DType) -> Var {
    use oxtensor_data::{DType, Tensor};
    match value {
        Scalar::Bool(b) => {
            Var::constant(Tensor::scalar(b).cast(if like.is_bool() { DType::Bool } else { like }))
        }
        Scalar::Int(i) => {
            let dt = if like.is_bool() { DType::I64 } else { like };
            Var::constant(Tensor::scalar(i).cast(dt))
        }
        Scalar::Float(f) => {
            let dt = if like.is_inexact() { like } else { DType::F64 };
            Var::constant(Tensor::scalar(f).cast(dt))
        }
    }
}

/// The constant for a scalar with no tensor to adapt to (`int64`, `float64` or `bool`).
#[track_caller]
pub fn scalar_constant(value: Scalar) -> Var {
    use oxtensor_data::Tensor;
    match value {
        Scalar::Bool(b) => Var::constant(Tensor::scalar(b)),
        Scalar::Int(i) => Var::constant(Tensor::scalar(i)),
        Scalar::Float(f) => Var::constant(Tensor::scalar(f)),
    }
}

/// Normalizes a possibly negative axis against a rank, naming `x` in the error.
pub(crate) fn norm_axis(x: &Var, axis: i64, ndim: usize, what: &str) -> Result<usize, GraphError> {
    let a = if axis < 0 { axis + ndim as i64 } else { axis };
    if a < 0 || a >= ndim as i64 {
        Err(GraphError::Invalid {
            op: what.to_string(),
            message: format!(
                "axis {axis} is out of bounds for {} of rank {ndim}",
                x.describe()
            ),
        })
    } else {
        Ok(a as usize)
    }
}
