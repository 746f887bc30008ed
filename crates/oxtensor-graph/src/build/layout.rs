//! Shape and layout builders: dimension shuffles, reshapes, allocation, joins, products.

use super::{Built, cast, elemwise, norm_axis, pad_rank};
use crate::{GraphError, Op, ScalarOp, Var};
use oxtensor_data::{DType, Tensor, result_type};
use smallvec::SmallVec;

/// Reorders/inserts/drops dimensions (PyTensor's `dimshuffle`): `None` inserts a new axis.
#[track_caller]
pub fn dimshuffle(x: &Var, order: &[Option<usize>]) -> Built {
    let identity = order.len() == x.ndim() && order.iter().enumerate().all(|(i, o)| *o == Some(i));
    if identity {
        return Ok(x.clone());
    }
    Var::apply1(
        Op::DimShuffle {
            order: order.into(),
        },
        std::slice::from_ref(x),
    )
}

/// Permutes axes; `None` reverses them (`np.transpose`).
#[track_caller]
pub fn transpose(x: &Var, axes: Option<&[i64]>) -> Built {
    let n = x.ndim();
    let order: Vec<Option<usize>> = match axes {
        None => (0..n).rev().map(Some).collect(),
        Some(a) => {
            if a.len() != n {
                return Err(GraphError::Invalid {
                    op: "transpose".into(),
                    message: format!("axes {a:?} don't match {}", x.describe()),
                });
            }
            a.iter()
                .map(|&v| norm_axis(x, v, n, "transpose").map(Some))
                .collect::<Result<_, _>>()?
        }
    };
    dimshuffle(x, &order)
}

/// Inserts a new axis of extent 1 at `axis` (`np.expand_dims`).
#[track_caller]
pub fn expand_dims(x: &Var, axis: i64) -> Built {
    let n = x.ndim() + 1;
    let at = norm_axis(x, axis, n, "expand_dims")?;
    let order: Vec<Option<usize>> = (0..n)
        .map(|d| {
            if d == at {
                None
            } else if d < at {
                Some(d)
            } else {
                Some(d - 1)
            }
        })
        .collect();
    dimshuffle(x, &order)
}

/// Removes axes of static extent 1 (`None`: all of them), as `np.squeeze`.
#[track_caller]
pub fn squeeze(x: &Var, axis: Option<&[i64]>) -> Built {
    let drop: Vec<usize> = match axis {
        None => (0..x.ndim())
            .filter(|&d| x.ty().shape[d] == Some(1))
            .collect(),
        Some(a) => a
            .iter()
            .map(|&v| norm_axis(x, v, x.ndim(), "squeeze"))
            .collect::<Result<_, _>>()?,
    };
    let order: Vec<Option<usize>> = (0..x.ndim())
        .filter(|d| !drop.contains(d))
        .map(Some)
        .collect();
    dimshuffle(x, &order)
}

/// The extents as an `int64` vector.
#[track_caller]
pub fn shape(x: &Var) -> Built {
    Var::apply1(Op::Shape, std::slice::from_ref(x))
}

/// One extent as an `int64` scalar (a constant when static).
#[track_caller]
pub fn shape_i(x: &Var, i: usize) -> Built {
    match x.ty().shape.get(i).copied().flatten() {
        Some(n) => Ok(Var::int_constant(n as i64)),
        None => Var::apply1(Op::ShapeI(i), std::slice::from_ref(x)),
    }
}

/// A vector of the given scalars (symbolic shapes), cast to `dtype`.
#[track_caller]
pub fn make_vector(items: &[Var], dtype: DType) -> Built {
    if items.iter().all(|v| v.constant_value().is_some()) {
        let vals: Vec<f64> = items
            .iter()
            .filter_map(|v| v.constant_value().and_then(|t| t.item::<f64>()))
            .collect();
        let ints: Vec<i64> = items
            .iter()
            .filter_map(|v| v.constant_value().and_then(|t| t.item::<i64>()))
            .collect();
        if dtype.is_int() && ints.len() == items.len() {
            return Ok(Var::constant(
                Tensor::from_slice(&ints, &[ints.len()])
                    .map_err(data_err)?
                    .cast(dtype),
            ));
        }
        if vals.len() == items.len() {
            return Ok(Var::constant(
                Tensor::from_slice(&vals, &[vals.len()])
                    .map_err(data_err)?
                    .cast(dtype),
            ));
        }
    }
    Var::apply1(Op::MakeVector(dtype), items)
}

fn data_err(e: oxtensor_data::DataError) -> GraphError {
    GraphError::Invalid {
        op: "constant".into(),
        message: e.to_string(),
    }
}

/// Asserts static extents (`None`: unknown) and records them in the type.
#[track_caller]
pub fn specify_shape(x: &Var, shape: &[Option<usize>]) -> Built {
    Var::apply1(Op::SpecifyShape(shape.into()), std::slice::from_ref(x))
}

/// Reshapes to constant extents (one may be −1).
#[track_caller]
pub fn reshape(x: &Var, shape: &[i64]) -> Built {
    let s = Var::constant(Tensor::from_slice(shape, &[shape.len()]).map_err(data_err)?);
    Var::apply1(Op::Reshape { ndim: shape.len() }, &[x.clone(), s])
}

/// Reshapes to symbolic extents (integer scalars; one may be −1).
#[track_caller]
pub fn reshape_sym(x: &Var, shape: &[Var]) -> Built {
    let s = make_vector(shape, DType::I64)?;
    Var::apply1(Op::Reshape { ndim: shape.len() }, &[x.clone(), s])
}

/// Collapses all dimensions from `ndim − 1` on into one (`ndim = 1`: a vector).
#[track_caller]
pub fn flatten(x: &Var, ndim: usize) -> Built {
    if ndim == 0 || ndim > x.ndim().max(1) {
        return Err(GraphError::Invalid {
            op: "flatten".into(),
            message: format!("ndim {ndim} is invalid for {}", x.describe()),
        });
    }
    let mut dims: Vec<Var> = (0..ndim - 1)
        .map(|d| shape_i(x, d))
        .collect::<Result<_, _>>()?;
    dims.push(Var::int_constant(-1));
    reshape_sym(x, &dims)
}

/// `value` broadcast to the shape given by integer scalars.
#[track_caller]
pub fn alloc(value: &Var, dims: &[Var]) -> Built {
    let mut inputs: Vec<Var> = vec![value.clone()];
    for d in dims {
        inputs.push(cast(d, DType::I64)?);
    }
    Var::apply1(Op::Alloc { ndim: dims.len() }, &inputs)
}

fn const_dims(shape: &[usize]) -> Vec<Var> {
    shape.iter().map(|&d| Var::int_constant(d as i64)).collect()
}

/// A tensor of `shape` filled with `value` of `dtype`.
#[track_caller]
pub fn full(shape: &[usize], value: f64, dtype: DType) -> Built {
    alloc(&Var::scalar_constant(value, dtype), &const_dims(shape))
}

/// Zeros of `shape`.
#[track_caller]
pub fn zeros(shape: &[usize], dtype: DType) -> Built {
    full(shape, 0.0, dtype)
}

/// Ones of `shape`.
#[track_caller]
pub fn ones(shape: &[usize], dtype: DType) -> Built {
    full(shape, 1.0, dtype)
}

/// A tensor shaped like `x` filled with `value` (`dtype` defaults to `x`'s).
#[track_caller]
pub fn full_like(x: &Var, value: f64, dtype: Option<DType>) -> Built {
    let dims: Vec<Var> = (0..x.ndim())
        .map(|d| super::shape_i(x, d))
        .collect::<Result<_, _>>()?;
    alloc(
        &Var::scalar_constant(value, dtype.unwrap_or(x.dtype())),
        &dims,
    )
}

/// Zeros shaped like `x`.
#[track_caller]
pub fn zeros_like(x: &Var, dtype: Option<DType>) -> Built {
    full_like(x, 0.0, dtype)
}

/// Ones shaped like `x`.
#[track_caller]
pub fn ones_like(x: &Var, dtype: Option<DType>) -> Built {
    full_like(x, 1.0, dtype)
}

/// `np.arange(start, stop, step)` as `dtype`.
#[track_caller]
pub fn arange(start: &Var, stop: &Var, step: &Var, dtype: DType) -> Built {
    Var::apply1(
        Op::Arange(dtype),
        &[start.clone(), stop.clone(), step.clone()],
    )
}

/// `np.eye(n, m, k)` as `dtype`.
#[track_caller]
pub fn eye(n: &Var, m: &Var, k: &Var, dtype: DType) -> Built {
    Var::apply1(
        Op::Eye(dtype),
        &[
            cast(n, DType::I64)?,
            cast(m, DType::I64)?,
            cast(k, DType::I64)?,
        ],
    )
}

/// Joins tensors of equal rank along an existing axis (`np.concatenate`).
#[track_caller]
pub fn concatenate(xs: &[Var], axis: i64) -> Built {
    let first = xs.first().ok_or_else(|| GraphError::Invalid {
        op: "concatenate".into(),
        message: "needs at least one tensor".into(),
    })?;
    let a = norm_axis(first, axis, first.ndim(), "concatenate")?;
    if xs.len() == 1 {
        return Ok(first.clone());
    }
    Var::apply1(Op::Join { axis: a }, xs)
}

/// Joins tensors of equal shape along a new axis (`np.stack`).
#[track_caller]
pub fn stack(xs: &[Var], axis: i64) -> Built {
    let first = xs.first().ok_or_else(|| GraphError::Invalid {
        op: "stack".into(),
        message: "needs at least one tensor".into(),
    })?;
    let a = norm_axis(first, axis, first.ndim() + 1, "stack")?;
    let expanded: Vec<Var> = xs
        .iter()
        .map(|x| expand_dims(x, a as i64))
        .collect::<Result<_, _>>()?;
    Var::apply1(Op::Join { axis: a }, &expanded)
}

/// Splits along `axis` into pieces of the given (symbolic) sizes.
#[track_caller]
pub fn split(x: &Var, sizes: &[Var], axis: i64) -> Result<SmallVec<[Var; 1]>, GraphError> {
    let a = norm_axis(x, axis, x.ndim(), "split")?;
    let s = make_vector(sizes, DType::I64)?;
    Var::apply(
        Op::Split {
            axis: a,
            n: sizes.len(),
        },
        &[x.clone(), s],
    )
}

/// `np.matmul`.
#[track_caller]
pub fn matmul(a: &Var, b: &Var) -> Built {
    Var::apply1(Op::MatMul, &[a.clone(), b.clone()])
}

/// `np.dot` for tensors of rank ≤ 2 (a scalar operand multiplies; otherwise `matmul`).
#[track_caller]
pub fn dot(a: &Var, b: &Var) -> Built {
    if a.ndim() == 0 || b.ndim() == 0 {
        return elemwise(ScalarOp::Mul, &[a.clone(), b.clone()]);
    }
    if a.ndim() > 2 || b.ndim() > 2 {
        return Err(GraphError::Invalid {
            op: "dot".into(),
            message: format!(
                "dot of tensors of rank > 2 ({} and {}) is not supported; use matmul or tensordot-style reshapes",
                a.describe(),
                b.describe()
            ),
        });
    }
    matmul(a, b)
}

/// Outer product of two vectors.
#[track_caller]
pub fn outer(a: &Var, b: &Var) -> Built {
    let col = dimshuffle(&flatten(a, 1)?, &[Some(0), None])?;
    let row = pad_rank(&flatten(b, 1)?, 2)?;
    let dt = result_type(a.dtype(), b.dtype());
    elemwise(ScalarOp::Mul, &[cast(&col, dt)?, cast(&row, dt)?])
}
