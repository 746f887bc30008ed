//! Builders of `pytensor.tensor.extra_ops` and `pytensor.tensor.sort`, with NumPy's
//! conventions (`axis=None` flattens first, negative axes count from the end).
//!
//! The primitives ([`ExtraOp`]) are `cumsum`/`cumprod`, `sort`/`argsort`, `searchsorted`,
//! `repeat`, `unique`, `bincount` and `nonzero`; `take_along_axis` and `diff` are built here
//! from existing ops (flat `take` and slices), which keeps them differentiable for free.

use super::{
    Built, Idx, arange, cast, dimshuffle, elemwise, flatten, norm_axis, shape_i, subtensor, take,
};
use crate::{ExtraOp, GraphError, Op, ScalarOp, Var};
use oxtensor_data::DType;
use smallvec::SmallVec;

#[track_caller]
fn extra1(op: ExtraOp, inputs: &[Var]) -> Built {
    Var::apply1(Op::Extra(op), inputs)
}

/// `x` and the axis to work on: `None` flattens `x` to a vector (NumPy's `axis=None`).
#[track_caller]
fn along(x: &Var, axis: Option<i64>, what: &str) -> Result<(Var, usize), GraphError> {
    match axis {
        None => Ok((flatten(x, 1)?, 0)),
        Some(a) => Ok((x.clone(), norm_axis(x, a, x.ndim(), what)?)),
    }
}

#[track_caller]
fn cumulate(x: &Var, axis: Option<i64>, mul: bool) -> Built {
    let what = if mul { "cumprod" } else { "cumsum" };
    let x = if x.dtype() == DType::Bool {
        cast(x, DType::I64)?
    } else {
        x.clone()
    };
    let (x, axis) = along(&x, axis, what)?;
    extra1(ExtraOp::Cumulate { axis, mul }, &[x])
}

/// `np.cumsum(x, axis)` (booleans count as `int64`; other dtypes are kept, as PyTensor does).
#[track_caller]
pub fn cumsum(x: &Var, axis: Option<i64>) -> Built {
    cumulate(x, axis, false)
}

/// `np.cumprod(x, axis)` (booleans count as `int64`; other dtypes are kept).
#[track_caller]
pub fn cumprod(x: &Var, axis: Option<i64>) -> Built {
    cumulate(x, axis, true)
}

/// `np.sort(x, axis, kind="stable")`: NaNs sort last.
#[track_caller]
pub fn sort(x: &Var, axis: Option<i64>) -> Built {
    let (x, axis) = along(x, axis, "sort")?;
    extra1(ExtraOp::Sort { axis }, &[x])
}

/// `np.argsort(x, axis, kind="stable")`: `int64` indices; NaNs sort last.
#[track_caller]
pub fn argsort(x: &Var, axis: Option<i64>) -> Built {
    let (x, axis) = along(x, axis, "argsort")?;
    extra1(ExtraOp::ArgSort { axis }, &[x])
}

/// `np.searchsorted(a, v, side, sorter)`: where each value of `v` would be inserted into the
/// sorted vector `a` (or `a[sorter]`) to keep it sorted.
#[track_caller]
pub fn searchsorted(a: &Var, v: &Var, right: bool, sorter: Option<&Var>) -> Built {
    let a = match sorter {
        Some(s) => take(a, s, 0)?,
        None => a.clone(),
    };
    extra1(ExtraOp::SearchSorted { right }, &[a, v.clone()])
}

/// `np.repeat(x, repeats, axis)`: `repeats` an integer scalar or one count per entry along
/// `axis`.
#[track_caller]
pub fn repeat(x: &Var, repeats: &Var, axis: Option<i64>) -> Built {
    let (x, axis) = along(x, axis, "repeat")?;
    extra1(ExtraOp::Repeat { axis }, &[x, repeats.clone()])
}

/// `np.unique(x, return_index, return_inverse, return_counts)` of the flattened `x`: the
/// sorted distinct values, then the requested `int64` vectors in that order.
#[track_caller]
pub fn unique(
    x: &Var,
    index: bool,
    inverse: bool,
    counts: bool,
) -> Result<SmallVec<[Var; 1]>, GraphError> {
    Var::apply(
        Op::Extra(ExtraOp::Unique {
            index,
            inverse,
            counts,
        }),
        std::slice::from_ref(x),
    )
}

/// `np.bincount(x, weights, minlength)`.
#[track_caller]
pub fn bincount(x: &Var, weights: Option<&Var>, minlength: usize) -> Built {
    let mut inputs = vec![x.clone()];
    if let Some(w) = weights {
        inputs.push(cast(w, DType::F64)?);
    }
    extra1(
        ExtraOp::Bincount {
            weighted: weights.is_some(),
            minlength,
        },
        &inputs,
    )
}

/// The coordinates of the non-zero entries of `x` as one `int64` matrix `(x.ndim, count)`;
/// row `d` is `np.nonzero(x)[d]`.
#[track_caller]
pub fn nonzero(x: &Var) -> Built {
    extra1(ExtraOp::Nonzero, std::slice::from_ref(x))
}

/// `np.take_along_axis(x, indices, axis)` (`axis=None`: on the flattened `x`), as a `take` from
/// the flattened `x` at linear indices: differentiable through `take`'s rule. `indices` must
/// have `x`'s rank; its extents off `axis` must equal `x`'s (checked at run time by the
/// flat index bound only where they exceed them).
#[track_caller]
pub fn take_along_axis(x: &Var, indices: &Var, axis: Option<i64>) -> Built {
    let (x, axis) = along(x, axis, "take_along_axis")?;
    let idx = if axis == 0 && x.ndim() == 1 && indices.ndim() != 1 {
        flatten(indices, 1)?
    } else {
        indices.clone()
    };
    if idx.ndim() != x.ndim() {
        return Err(GraphError::Invalid {
            op: "take_along_axis".into(),
            message: format!(
                "indices {} must have the rank of {} ({})",
                idx.describe(),
                x.describe(),
                x.ndim()
            ),
        });
    }
    if !idx.dtype().is_int() {
        return Err(GraphError::DType {
            op: "take_along_axis".into(),
            input: idx.describe(),
            expected: "an integer type".into(),
            got: idx.dtype().to_string(),
        });
    }
    let ndim = x.ndim();
    let mul = |a: &Var, b: &Var| elemwise(ScalarOp::Mul, &[a.clone(), b.clone()]);
    let add = |a: &Var, b: &Var| elemwise(ScalarOp::Add, &[a.clone(), b.clone()]);
    // Negative indices count from the end, as in NumPy.
    let n_axis = shape_i(&x, axis)?;
    let idx = cast(&idx, DType::I64)?;
    let zero = Var::int_constant(0);
    let neg = elemwise(ScalarOp::Lt, &[idx.clone(), pad(&zero, ndim)?])?;
    let wrapped = add(&idx, &pad(&n_axis, ndim)?)?;
    let idx = elemwise(ScalarOp::Switch, &[neg, wrapped, idx])?;
    // Linear index = sum over d of coordinate_d * stride_d (C order strides of x).
    let mut stride = Var::int_constant(1);
    let mut linear: Option<Var> = None;
    for d in (0..ndim).rev() {
        let coord = if d == axis {
            idx.clone()
        } else {
            let n = shape_i(&idx, d)?;
            let r = arange(&zero, &n, &Var::int_constant(1), DType::I64)?;
            let order: Vec<Option<usize>> = (0..ndim)
                .map(|e| if e == d { Some(0) } else { None })
                .collect();
            dimshuffle(&r, &order)?
        };
        let term = mul(&coord, &pad(&stride, ndim)?)?;
        linear = Some(match linear {
            None => term,
            Some(l) => add(&l, &term)?,
        });
        stride = mul(&stride, &shape_i(&x, d)?)?;
    }
    let linear = linear.unwrap_or(idx);
    take(&flatten(&x, 1)?, &linear, 0)
}

/// A 0-d `v` with `ndim` broadcastable dimensions added.
fn pad(v: &Var, ndim: usize) -> Built {
    dimshuffle(v, &vec![None; ndim])
}

/// `np.diff(x, n, axis)`: the `n`-th forward difference along `axis`, from slices.
#[track_caller]
pub fn diff(x: &Var, n: usize, axis: i64) -> Built {
    let a = norm_axis(x, axis, x.ndim(), "diff")?;
    let mut out = x.clone();
    for _ in 0..n {
        let lead: Vec<Idx> = (0..a).map(|_| Idx::Slice(None, None, None)).collect();
        let mut hi = lead.clone();
        hi.push(Idx::range(Some(1), None, None));
        let mut lo = lead;
        lo.push(Idx::range(None, Some(-1), None));
        out = elemwise(
            ScalarOp::Sub,
            &[subtensor(&out, &hi)?, subtensor(&out, &lo)?],
        )?;
    }
    Ok(out)
}
