//! Reductions with NumPy's `axis`/`keepdims` conventions, and the statistics built from them.

use super::{Built, cast, elemwise, norm_axis, shape_i};
use crate::{ArgReduceOp, Axes, GraphError, Op, ReduceOp, ScalarOp, Var};
use oxtensor_data::{DType, upgrade_to_float};

/// Normalizes `axis` (`None` = all axes; negatives count from the end) to sorted unique axes.
pub fn norm_axes(x: &Var, axis: Option<&[i64]>, what: &str) -> Result<Axes, GraphError> {
    let mut axes: Axes = match axis {
        None => (0..x.ndim()).collect(),
        Some(list) => list
            .iter()
            .map(|&a| norm_axis(x, a, x.ndim(), what))
            .collect::<Result<_, _>>()?,
    };
    axes.sort_unstable();
    if axes.windows(2).any(|w| w[0] == w[1]) {
        return Err(GraphError::Invalid {
            op: what.into(),
            message: format!("duplicate value in axis {axis:?}"),
        });
    }
    Ok(axes)
}

/// The `DimShuffle` order re-inserting the reduced `axes` of a rank-`ndim` tensor as new axes
/// of extent 1 (NumPy's `keepdims`).
pub fn keepdims_order(ndim: usize, axes: &[usize]) -> Vec<Option<usize>> {
    let mut next = 0;
    (0..ndim)
        .map(|d| {
            if axes.contains(&d) {
                None
            } else {
                next += 1;
                Some(next - 1)
            }
        })
        .collect()
}

/// Re-inserts reduced axes as extent-1 dimensions (`keepdims=True`).
#[track_caller]
fn keep_dims(r: Var, axes: &[usize], ndim: usize) -> Built {
    Var::apply1(
        Op::DimShuffle {
            order: keepdims_order(ndim, axes).into(),
        },
        &[r],
    )
}

/// A reduction `op` of `x` over `axis` (`None`: all), optionally keeping reduced dimensions.
#[track_caller]
pub fn reduce(op: ReduceOp, x: &Var, axis: Option<&[i64]>, keepdims: bool) -> Built {
    let axes = norm_axes(x, axis, op.name())?;
    let r = if axes.is_empty() && op.output_dtype(x.dtype()) == x.dtype() {
        x.clone()
    } else {
        Var::apply1(
            Op::Reduce {
                op,
                axes: axes.clone(),
            },
            std::slice::from_ref(x),
        )?
    };
    if keepdims {
        keep_dims(r, &axes, x.ndim())
    } else {
        Ok(r)
    }
}

macro_rules! reductions {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        $(
            $(#[$doc])*
            #[track_caller]
            pub fn $name(x: &Var, axis: Option<&[i64]>, keepdims: bool) -> Built {
                reduce(ReduceOp::$op, x, axis, keepdims)
            }
        )*
    };
}

reductions! {
    /// Sum over `axis` (integers accumulate in 64 bits).
    sum => Sum;
    /// Product over `axis`.
    prod => Prod;
    /// Largest element over `axis` (NaN propagates).
    max => Max;
    /// Smallest element over `axis` (NaN propagates).
    min => Min;
    /// True where every element over `axis` is true.
    all => All;
    /// True where any element over `axis` is true.
    any => Any;
}

/// Index of the largest element along `axis` (`None`: in the flattened array).
#[track_caller]
pub fn argmax(x: &Var, axis: Option<i64>, keepdims: bool) -> Built {
    arg_reduce(ArgReduceOp::ArgMax, x, axis, keepdims)
}

/// Index of the smallest element along `axis` (`None`: in the flattened array).
#[track_caller]
pub fn argmin(x: &Var, axis: Option<i64>, keepdims: bool) -> Built {
    arg_reduce(ArgReduceOp::ArgMin, x, axis, keepdims)
}

#[track_caller]
fn arg_reduce(op: ArgReduceOp, x: &Var, axis: Option<i64>, keepdims: bool) -> Built {
    let name = match op {
        ArgReduceOp::ArgMax => "argmax",
        ArgReduceOp::ArgMin => "argmin",
    };
    let axis = axis.map(|a| norm_axis(x, a, x.ndim(), name)).transpose()?;
    let r = Var::apply1(Op::ArgReduce { op, axis }, std::slice::from_ref(x))?;
    if !keepdims {
        return Ok(r);
    }
    match axis {
        Some(a) => keep_dims(r, &[a], x.ndim()),
        None => keep_dims(r, &(0..x.ndim()).collect::<Vec<_>>(), x.ndim()),
    }
}

/// Number of elements over `axes` as a scalar of `dtype` (a constant when the extents are static).
#[track_caller]
fn count(x: &Var, axes: &[usize], dtype: DType) -> Built {
    let known: Option<usize> = axes.iter().map(|&a| x.ty().shape[a]).product();
    if let Some(n) = known {
        return Ok(Var::scalar_constant(n as f64, dtype));
    }
    let mut n = Var::int_constant(1);
    for &a in axes {
        n = elemwise(ScalarOp::Mul, &[n, shape_i(x, a)?])?;
    }
    cast(&n, dtype)
}

/// Arithmetic mean over `axis`; integer inputs give `float64`, float and complex inputs keep
/// their type.
#[track_caller]
pub fn mean(x: &Var, axis: Option<&[i64]>, keepdims: bool) -> Built {
    let axes = norm_axes(x, axis, "mean")?;
    let out_dtype = if x.dtype().is_inexact() {
        x.dtype()
    } else {
        DType::F64
    };
    let s = reduce(ReduceOp::Sum, x, axis, keepdims)?;
    let s = cast(&s, out_dtype)?;
    elemwise(ScalarOp::TrueDiv, &[s, count(x, &axes, out_dtype)?])
}

/// Variance over `axis` with `ddof` delta degrees of freedom (`np.var`).
#[track_caller]
pub fn var(x: &Var, axis: Option<&[i64]>, ddof: i64, keepdims: bool) -> Built {
    let axes = norm_axes(x, axis, "var")?;
    let float = upgrade_to_float(x.dtype());
    let xf = cast(x, float)?;
    let m = mean(&xf, axis, true)?;
    let d = elemwise(ScalarOp::Sub, &[xf.clone(), m])?;
    let sq = elemwise(ScalarOp::Sqr, &[d])?;
    let s = reduce(ReduceOp::Sum, &sq, axis, keepdims)?;
    let n = count(x, &axes, float)?;
    let denom = if ddof == 0 {
        n
    } else {
        elemwise(
            ScalarOp::Sub,
            &[n, Var::scalar_constant(ddof as f64, float)],
        )?
    };
    elemwise(ScalarOp::TrueDiv, &[s, denom])
}

/// Standard deviation over `axis` (`np.std`).
#[track_caller]
pub fn std(x: &Var, axis: Option<&[i64]>, ddof: i64, keepdims: bool) -> Built {
    elemwise(ScalarOp::Sqrt, &[var(x, axis, ddof, keepdims)?])
}
