//! Pullbacks of reductions. The cotangent of a reduction lacks the reduced axes; each rule
//! re-inserts them with extent 1 (`keepdims`) and spreads it over the reduced elements.

use crate::rules::{Term, grads, uniform};
use crate::util::{dims, fconst, keep_where};
use oxtensor_graph::build::keepdims_order;
use oxtensor_graph::build::{self as b, Built};
use oxtensor_graph::{GraphError, ReduceOp, Var};

/// `v` (a reduction over `axes` of a rank-`ndim` tensor) with the reduced axes re-inserted.
fn keep(v: &Var, axes: &[usize], ndim: usize) -> Built {
    b::dimshuffle(v, &keepdims_order(ndim, axes))
}

/// The pullback of `Reduce{op, axes}` of `x` (output `z`, cotangent `g`).
pub(crate) fn pullback(
    op: ReduceOp,
    axes: &[usize],
    x: &Var,
    z: &Var,
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    let n = x.ndim();
    match op {
        // Every element contributes with weight 1: broadcast the cotangent back to x's shape
        // (materialized, so the gradient has x's shape even where x is not broadcastable).
        ReduceOp::Sum => grads(wanted, |_| {
            let gk = keep(g, axes, n)?;
            if axes.iter().all(|&a| x.ty().shape[a] == Some(1)) {
                Ok(gk)
            } else {
                b::alloc(&gk, &dims(x)?)
            }
        }),
        ReduceOp::Prod => grads(wanted, |_| prod_grad(axes, x, &keep(g, axes, n)?)),
        // Every element equal to the extreme gets the gradient: all tied maxima (PyTensor's
        // `eq(x, max) * gz`). NaN extremes compare unequal and get none.
        ReduceOp::Max | ReduceOp::Min => grads(wanted, |_| {
            keep_where(&b::eq(x, &keep(z, axes, n)?)?, &keep(g, axes, n)?)
        }),
        // Boolean outputs: locally constant.
        ReduceOp::All | ReduceOp::Any => Ok(uniform(wanted, Term::Zero)),
    }
}

/// ∂ prod(x) / ∂xᵢ = the product of the other elements, exact with zeros, and written so that
/// its own derivative is exact too (so Hessians of products are right at zeros).
///
/// With `p` the product of the non-zero elements of the group and `c` the number of zeros
/// other than xᵢ: if `c = 0` it is `p / xᵢ` (`p` itself when xᵢ is the zero); if `c = 1` it is
/// `p / xᵢ · x₀` where x₀ is that other zero (value 0, but derivative `p / xᵢ` along x₀); if
/// `c ≥ 2` it is 0 with zero derivative. PyTensor's rule has the same values but a zero
/// derivative in the `c = 1` case.
fn prod_grad(axes: &[usize], x: &Var, gk: &Var) -> Built {
    let n = x.ndim();
    let iaxes: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
    let group = |v: &Var, op: fn(&Var, Option<&[i64]>, bool) -> Built| -> Built {
        keep(&op(v, Some(&iaxes), false)?, axes, n)
    };
    let is_zero = b::eq(x, &fconst(0.0, x))?;
    let nonzero = b::switch(&is_zero, &fconst(1.0, x), x)?;
    let prod_nonzero = group(&nonzero, b::prod)?;
    let own_zero = keep_where(&is_zero, x)?;
    let other_zeros = b::sub(&group(&is_zero, b::sum)?, &is_zero)?;
    let other_zero_value = b::sub(&group(&own_zero, b::sum)?, &own_zero)?;
    let count = |k: i64| {
        b::eq(
            &other_zeros,
            &b::weak_constant(k.into(), other_zeros.dtype()),
        )
    };
    let lone = keep_where(&count(1)?, &other_zero_value)?;
    let fix = b::switch(&count(0)?, &fconst(1.0, x), &lone)?;
    let factor = b::mul(&b::true_div(&prod_nonzero, &nonzero)?, &fix)?;
    b::mul(gk, &factor)
}
