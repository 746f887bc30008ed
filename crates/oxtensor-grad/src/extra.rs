//! Pullbacks of [`Op::Extra`](oxtensor_graph::Op::Extra), built from graph ops that have
//! rules themselves (so second derivatives work):
//!
//! * `cumsum`: the reverse cumulative sum of the cotangent, `sum(g) - cumsum(g) + g`.
//! * `cumprod`: PyTensor's rule, the reverse cumulative sum of `g * cumprod(x)` divided by `x`
//!   (so, as in PyTensor, not finite where `x` has zeros).
//! * `sort`: the cotangent put back where each value came from: `g` taken at the inverse
//!   permutation `argsort(argsort(x))`.
//! * `repeat`: the cotangent of every copy summed into its source (`IncTake` at
//!   `repeat(arange(n), repeats)`).
//! * `bincount` with weights: the cotangent of each bin read back at every entry (`take`).
//!
//! Integer outputs (`argsort`, `searchsorted`, counts, indices) are locally constant: zero.
//! `unique`'s values have no gradient in PyTensor either: undefined.

use crate::error::GradError;
use crate::rules::{Term, per_input};
use crate::util::zeros_like;
use oxtensor_graph::build::{self as b, extra as e};
use oxtensor_graph::{ExtraOp, GraphError, Op, Var};

fn cotangent(op: &ExtraOp, outputs: &[Var], cotangents: &[Option<Var>]) -> Result<Var, GradError> {
    cotangents[0].clone().ok_or_else(|| {
        GradError::Invalid(format!(
            "pullback of {op}: the cotangent of {} is missing",
            outputs[0].describe()
        ))
    })
}

/// `sum_{j >= i} g_j` along `axis`.
fn reverse_cumsum(g: &Var, axis: usize) -> Result<Var, GraphError> {
    let a = [axis as i64];
    let total = b::sum(g, Some(&a[..]), true)?;
    let total = b::cast(&total, g.dtype())?;
    b::add(&b::sub(&total, &e::cumsum(g, Some(axis as i64))?)?, g)
}

/// The terms of an extra-op node for each wanted input.
pub(crate) fn pullback(
    op: &ExtraOp,
    inputs: &[Var],
    outputs: &[Var],
    cotangents: &[Option<Var>],
    wanted: &[bool],
) -> Result<Vec<Term>, GradError> {
    let x = &inputs[0];
    let float_x = x.dtype().is_float();
    let terms = match op {
        ExtraOp::Cumulate { axis, mul } => {
            let g = cotangent(op, outputs, cotangents)?;
            per_input(wanted, |_| {
                if !float_x {
                    return Ok(Term::Zero);
                }
                let g = b::cast(&g, x.dtype())?;
                Ok(Term::Grad(if *mul {
                    let gz = b::mul(&g, &outputs[0])?;
                    b::true_div(&reverse_cumsum(&gz, *axis)?, x)?
                } else {
                    reverse_cumsum(&g, *axis)?
                }))
            })?
        }
        ExtraOp::Sort { axis } => {
            let g = cotangent(op, outputs, cotangents)?;
            per_input(wanted, |_| {
                if !float_x {
                    return Ok(Term::Zero);
                }
                let a = Some(*axis as i64);
                let inv = e::argsort(&e::argsort(x, a)?, a)?;
                Ok(Term::Grad(e::take_along_axis(&g, &inv, a)?))
            })?
        }
        ExtraOp::Repeat { axis } => {
            let g = cotangent(op, outputs, cotangents)?;
            per_input(wanted, |k| {
                if k != 0 {
                    return Ok(Term::Disconnected);
                }
                if !float_x {
                    return Ok(Term::Zero);
                }
                let n = b::shape_i(x, *axis)?;
                let src = b::arange(
                    &Var::int_constant(0),
                    &n,
                    &Var::int_constant(1),
                    oxtensor_data::DType::I64,
                )?;
                let idx = e::repeat(&src, &inputs[1], Some(0))?;
                let zeros = zeros_like(x, x.dtype())?;
                Ok(Term::Grad(Var::apply1(
                    Op::IncTake {
                        axis: *axis,
                        set: false,
                    },
                    &[zeros, b::cast(&g, x.dtype())?, idx],
                )?))
            })?
        }
        ExtraOp::Bincount { .. } => per_input(wanted, |k| match (k, &cotangents[0]) {
            (0, _) | (_, None) => Ok(Term::Zero),
            (_, Some(g)) => Ok(Term::Grad(b::cast(&b::take(g, x, 0)?, inputs[1].dtype())?)),
        })?,
        ExtraOp::ArgSort { .. } | ExtraOp::SearchSorted { .. } | ExtraOp::Nonzero => {
            per_input(wanted, |_| Ok(Term::Zero))?
        }
        ExtraOp::Unique { .. } => per_input(wanted, |_| {
            Ok(Term::Undefined(format!(
                "{op} has no gradient with respect to {}",
                x.describe()
            )))
        })?,
    };
    Ok(terms)
}
