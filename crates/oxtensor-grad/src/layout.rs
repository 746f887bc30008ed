//! Pullbacks of the shape and layout ops: each moves the cotangent back through the inverse
//! rearrangement (a transpose, a reshape, a split of a join, …).

use crate::rules::{Term, grads, per_input};
use crate::util::{dims, zeros_like};
use oxtensor_data::DType;
use oxtensor_graph::build::{self as b, Idx};
use oxtensor_graph::{GraphError, Var};

/// `DimShuffle{order}`: the inverse shuffle. Input dimensions the shuffle dropped (static
/// extent 1) come back as new axes; dimensions it inserted (extent 1) are dropped.
pub(crate) fn dimshuffle(
    order: &[Option<usize>],
    x: &Var,
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    let inverse: Vec<Option<usize>> = (0..x.ndim())
        .map(|d| order.iter().position(|o| *o == Some(d)))
        .collect();
    grads(wanted, |_| b::dimshuffle(g, &inverse))
}

/// `Reshape`: the cotangent reshaped to the input's (symbolic) shape; the shape input is
/// disconnected.
pub(crate) fn reshape(x: &Var, g: &Var, wanted: &[bool]) -> Result<Vec<Term>, GraphError> {
    per_input(wanted, |k| {
        Ok(if k == 0 {
            Term::Grad(b::reshape_sym(g, &dims(x)?)?)
        } else {
            Term::Disconnected
        })
    })
}

/// `ARange(start, stop, step)` = `start + step·[0, 1, …, n−1]`: the gradient of `start` is the
/// sum of the cotangent, that of `step` its dot product with `[0, …, n−1]`; `stop` only decides
/// the length (disconnected). Integer ranges are step functions (zero).
pub(crate) fn arange(
    dtype: DType,
    z: &Var,
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    per_input(wanted, |k| {
        if !dtype.is_float() {
            return Ok(if k == 1 {
                Term::Disconnected
            } else {
                Term::Zero
            });
        }
        Ok(match k {
            0 => Term::Grad(b::sum(g, None, false)?),
            1 => Term::Disconnected,
            _ => {
                let steps = b::arange(
                    &Var::int_constant(0),
                    &b::shape_i(z, 0)?,
                    &Var::int_constant(1),
                    dtype,
                )?;
                Term::Grad(b::sum(&b::mul(g, &steps)?, None, false)?)
            }
        })
    })
}

/// `MakeVector`: element `k` of the cotangent for input `k`.
pub(crate) fn make_vector(g: &Var, wanted: &[bool]) -> Result<Vec<Term>, GraphError> {
    grads(wanted, |k| b::subtensor(g, &[Idx::int(k as i64)]))
}

/// `Join{axis}`: the cotangent split back into pieces of the inputs' extents along `axis`.
pub(crate) fn join(
    axis: usize,
    inputs: &[Var],
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    if inputs.len() == 1 {
        return grads(wanted, |_| Ok(g.clone()));
    }
    let sizes: Vec<Var> = inputs
        .iter()
        .map(|v| b::shape_i(v, axis))
        .collect::<Result<_, _>>()?;
    let pieces = b::split(g, &sizes, axis as i64)?;
    grads(wanted, |k| Ok(pieces[k].clone()))
}

/// `Split{axis}`: the outputs' cotangents joined back along `axis`, zeros for outputs that
/// received none; the sizes input is disconnected.
pub(crate) fn split(
    axis: usize,
    outputs: &[Var],
    cotangents: &[Option<Var>],
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    per_input(wanted, |k| {
        if k != 0 {
            return Ok(Term::Disconnected);
        }
        let dtype = cotangents
            .iter()
            .flatten()
            .map(Var::dtype)
            .next()
            .unwrap_or(crate::util::grad_dtype(outputs[0].dtype()));
        let pieces: Vec<Var> = outputs
            .iter()
            .zip(cotangents)
            .map(|(o, c)| match c {
                Some(c) => b::cast(c, dtype),
                None => zeros_like(o, dtype),
            })
            .collect::<Result<_, _>>()?;
        Ok(Term::Grad(b::concatenate(&pieces, axis as i64)?))
    })
}
