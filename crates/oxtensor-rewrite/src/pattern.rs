//! Matching helpers: small destructuring functions the rules' actions are written with, in the
//! style of a pattern language (`let x = unary(v, Exp)?;`), plus the few constructors rules
//! share. Every helper returns `Option`, so a failed match or an impossible build is `None`.

use oxtensor_data::{DType, Tensor};
use oxtensor_graph::build;
use oxtensor_graph::{Axes, Op, ReduceOp, ScalarOp, Var};

/// The inputs of `v` when it is `Elemwise(op)` (a `Cast` pattern matches a cast to any dtype).
pub fn elemwise_args(v: &Var, op: ScalarOp) -> Option<&[Var]> {
    match v.owner()? {
        (Op::Elemwise(s), inputs) if std::mem::discriminant(s) == std::mem::discriminant(&op) => {
            Some(inputs)
        }
        _ => None,
    }
}

/// The input of `v` when it is the unary `Elemwise(op)`.
pub fn unary(v: &Var, op: ScalarOp) -> Option<&Var> {
    match elemwise_args(v, op)? {
        [x] => Some(x),
        _ => None,
    }
}

/// The two inputs of `v` when it is the binary `Elemwise(op)`.
pub fn binary(v: &Var, op: ScalarOp) -> Option<(&Var, &Var)> {
    match elemwise_args(v, op)? {
        [a, b] => Some((a, b)),
        _ => None,
    }
}

/// The order and input of `v` when it is a `DimShuffle`.
pub fn dimshuffle(v: &Var) -> Option<(&[Option<usize>], &Var)> {
    match v.owner()? {
        (Op::DimShuffle { order }, [x]) => Some((order, x)),
        _ => None,
    }
}

/// The combining op, axes and input of `v` when it is a `Reduce`.
pub fn reduce(v: &Var) -> Option<(ReduceOp, &Axes, &Var)> {
    match v.owner()? {
        (Op::Reduce { op, axes }, [x]) => Some((*op, axes, x)),
        _ => None,
    }
}

/// `reduce(v)` restricted to one combining op.
pub fn reduce_of(v: &Var, which: ReduceOp) -> Option<(&Axes, &Var)> {
    match reduce(v)? {
        (op, axes, x) if op == which => Some((axes, x)),
        _ => None,
    }
}

/// The value of a constant that broadcasts like a scalar (every static extent 1) and holds one
/// number, looking through the `DimShuffle`s that pad a scalar's rank (`x + 1.0` builds
/// `x + DimShuffle{x}(1.0)`).
pub fn scalar_const(v: &Var) -> Option<f64> {
    if let Some((_, inner)) = dimshuffle(v) {
        return scalar_const(inner);
    }
    let t = v.constant_value()?;
    if t.shape().iter().any(|&d| d != 1) {
        return None;
    }
    if t.dtype().is_complex() {
        // Only a complex constant on the real axis equals a real number.
        let z = t.item::<oxtensor_data::C128>()?;
        return (z.im == 0.0).then_some(z.re);
    }
    t.item::<f64>()
}

/// True for a scalar-like constant ([`scalar_const`]) equal to `value`.
pub fn is_const(v: &Var, value: f64) -> bool {
    scalar_const(v) == Some(value)
}

/// True for a constant, possibly behind rank-padding `DimShuffle`s.
pub fn is_constant(v: &Var) -> bool {
    match dimshuffle(v) {
        Some((_, inner)) => is_constant(inner),
        None => v.constant_value().is_some(),
    }
}

/// `inputs` without the first one satisfying `drop`, or `None` when none does.
pub fn without_first(inputs: &[Var], drop: impl Fn(&Var) -> bool) -> Option<Vec<Var>> {
    let at = inputs.iter().position(drop)?;
    let mut rest = inputs.to_vec();
    rest.remove(at);
    Some(rest)
}

/// True for dtypes whose arithmetic negation is exact and invertible in the rules' sense:
/// floats, and signed integers (which wrap as in NumPy).
pub fn negatable(dtype: DType) -> bool {
    dtype.is_float() || dtype.is_signed_int()
}

/// The elementwise negation of a constant of a [`negatable`] dtype, computed directly (no
/// kernel needed): exact for floats, wrapping for signed integers.
pub fn neg_const(v: &Var) -> Option<Var> {
    let t = v.constant_value()?;
    let negated = if t.dtype().is_float() {
        let vals: Vec<f64> = t.to_vec_as::<f64>().into_iter().map(|x| -x).collect();
        Tensor::from_slice(&vals, t.shape()).ok()?.cast(t.dtype())
    } else if t.dtype().is_signed_int() {
        let vals: Vec<i64> = t
            .to_vec_as::<i64>()
            .into_iter()
            .map(i64::wrapping_neg)
            .collect();
        Tensor::from_slice(&vals, t.shape()).ok()?.cast(t.dtype())
    } else {
        return None;
    };
    Some(Var::constant(negated))
}

/// A constant of `dtype` holding `value`, with `ndim` dimensions of extent 1 (it broadcasts
/// against anything of that rank).
pub fn scalar_like(value: f64, dtype: DType, ndim: usize) -> Option<Var> {
    let t = Tensor::scalar(value)
        .cast(dtype)
        .reshape(&vec![1; ndim])
        .ok()?;
    Some(Var::constant(t))
}

/// `x` converted to `dtype` (itself when it already has it).
pub fn cast_to(x: &Var, dtype: DType) -> Option<Var> {
    build::cast(x, dtype).ok()
}

/// Applies a scalar op to inputs of equal rank.
pub fn apply(op: ScalarOp, inputs: &[Var]) -> Option<Var> {
    Var::apply1(Op::Elemwise(op), inputs).ok()
}

/// The n-ary `op` of `inputs`, or the single input itself.
pub fn nary(op: ScalarOp, inputs: &[Var]) -> Option<Var> {
    match inputs {
        [] => None,
        [x] => Some(x.clone()),
        _ => apply(op, inputs),
    }
}

/// The reduction of `x` over `axes` (sorted, unique).
pub fn reduce_over(op: ReduceOp, axes: &Axes, x: &Var) -> Option<Var> {
    Var::apply1(
        Op::Reduce {
            op,
            axes: axes.clone(),
        },
        std::slice::from_ref(x),
    )
    .ok()
}

/// `r` (the result of reducing a rank-`ndim` tensor over `axes`) with the reduced axes put back
/// as extent-1 dimensions (`keepdims=True`).
pub fn keep_dims(r: &Var, axes: &[usize], ndim: usize) -> Option<Var> {
    build::dimshuffle(r, &build::keepdims_order(ndim, axes)).ok()
}

/// True when `a` and `b` have the same static shape (so one can stand for the other without
/// changing broadcasting anywhere).
pub fn same_shape(a: &Var, b: &Var) -> bool {
    a.ty().shape == b.ty().shape
}

/// `-t` in the form canonicalization gives it: `-(-x)` is `x`, `-(a - b)` is `b - a`,
/// `-((-a) - b)` is `b + a`, a negated constant is a constant, anything else is `neg(t)`.
/// Rules that build a negated argument (`1 - sigmoid(x) → sigmoid(-x)`) use it, so that two
/// rules negating the same variable build the same (interned) node, and [`is_negation`] can
/// recognise the pair. `None` for dtypes without an exact negation.
pub fn negated(t: &Var) -> Option<Var> {
    if !negatable(t.dtype()) {
        return None;
    }
    if let Some(x) = unary(t, ScalarOp::Neg) {
        return Some(x.clone());
    }
    if let Some((a, b)) = binary(t, ScalarOp::Sub) {
        return match unary(a, ScalarOp::Neg) {
            Some(p) => build::add(b, p).ok(),
            None => build::sub(b, a).ok(),
        };
    }
    if t.constant_value().is_some() {
        return neg_const(t);
    }
    build::neg(t).ok()
}

/// True when `a` is `-b` or `b` is `-a` in the forms [`negated`] builds.
pub fn is_negation(a: &Var, b: &Var) -> bool {
    negated(a).as_ref() == Some(b) || negated(b).as_ref() == Some(a)
}
