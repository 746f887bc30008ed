//! Builders of random variables ([`Op::Random`]): each returns `(next_rng, draw)`, PyTensor's
//! `return_next_rng=True` form, so callers thread the generator explicitly or store the next
//! generator into a shared variable with an update.

use super::Built;
use crate::random::{Distribution, RandomOp};
use crate::{GraphError, Op, Var};
use oxtensor_data::{DType, Tensor};

/// `(next_rng, draw)` of a random node.
pub type Draw = Result<(Var, Var), GraphError>;

/// The `size` input for `size` given as extents (`None`: no size, the parameters' broadcast
/// shape): an `int64` vector, constant when every extent is.
#[track_caller]
pub fn size_vector(size: Option<&[Var]>) -> Built {
    match size {
        None | Some([]) => Ok(Var::constant(
            Tensor::from_slice::<i64>(&[], &[0]).map_err(|e| GraphError::Invalid {
                op: "size".into(),
                message: e.to_string(),
            })?,
        )),
        Some(dims) => super::make_vector(dims, DType::I64),
    }
}

/// A draw from `dist` with generator `rng`, parameters `params` (in [`Distribution::params`]
/// order) and batch shape `size` (an integer vector of static length; `None`: the parameters'
/// broadcast shape). `dtype` defaults to [`Distribution::default_dtype`].
#[track_caller]
pub fn random_variable(
    dist: Distribution,
    rng: &Var,
    size: Option<&Var>,
    params: &[Var],
    dtype: Option<DType>,
) -> Draw {
    let dtype = dtype.unwrap_or_else(|| dist.default_dtype());
    let (size_var, size_ndim) = match size {
        None => (size_vector(None)?, None),
        Some(s) => {
            let op = Op::Random(RandomOp {
                dist,
                dtype,
                size_ndim: None,
            });
            if s.ndim() != 1 || !s.dtype().is_int() {
                return Err(GraphError::dtype(&op, s, "an integer vector (size)"));
            }
            let Some(n) = s.ty().shape[0] else {
                return Err(GraphError::shape(
                    &op,
                    format!(
                        "size {} must have a length known when the graph is built",
                        s.describe()
                    ),
                ));
            };
            (s.clone(), Some(n))
        }
    };
    let op = Op::Random(RandomOp {
        dist,
        dtype,
        size_ndim,
    });
    let mut inputs = Vec::with_capacity(2 + params.len());
    inputs.push(rng.clone());
    inputs.push(size_var);
    inputs.extend(params.iter().cloned());
    let outs = Var::apply(op, &inputs)?;
    Ok((outs[0].clone(), outs[1].clone()))
}

/// `normal(loc, scale, size)`.
#[track_caller]
pub fn normal(rng: &Var, loc: &Var, scale: &Var, size: Option<&Var>) -> Draw {
    random_variable(
        Distribution::Normal,
        rng,
        size,
        &[loc.clone(), scale.clone()],
        None,
    )
}

/// `standard_normal(size)`: `normal(0, 1, size)`.
#[track_caller]
pub fn standard_normal(rng: &Var, size: Option<&Var>) -> Draw {
    let zero = Var::constant(Tensor::scalar(0.0f64));
    let one = Var::constant(Tensor::scalar(1.0f64));
    normal(rng, &zero, &one, size)
}

/// `uniform(low, high, size)` on `[low, high)`.
#[track_caller]
pub fn uniform(rng: &Var, low: &Var, high: &Var, size: Option<&Var>) -> Draw {
    random_variable(
        Distribution::Uniform,
        rng,
        size,
        &[low.clone(), high.clone()],
        None,
    )
}

/// `integers(low, high, size)` on `[low, high)`, `int64`.
#[track_caller]
pub fn integers(rng: &Var, low: &Var, high: &Var, size: Option<&Var>) -> Draw {
    random_variable(
        Distribution::Integers,
        rng,
        size,
        &[low.clone(), high.clone()],
        None,
    )
}
