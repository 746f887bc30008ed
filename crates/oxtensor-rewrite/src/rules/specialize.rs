//! Specialization (`specialize`): general ops with special arguments replaced by cheaper ops.
//!
//! Powers with small constant exponents become multiplications, square roots and reciprocals
//! (last-bit differences from `pow` are accepted, as in PyTensor; `(-inf) ** 0.5` is `inf` but
//! `sqrt(-inf)` is NaN). Inverse pairs cancel where the domain allows: `log(exp(x))` is `x`
//! everywhere (and finite where `exp(x)` overflowed); `exp(log(x))` is `x` only for `x >= 0`,
//! so it becomes `switch(x >= 0, x, nan)`, which keeps the NaN for negative `x` (PyTensor's
//! choice); likewise `expm1(log1p(x))` keeps NaN below −1.

use crate::pattern::{
    binary, cast_to, elemwise_args, is_const, negatable, reduce_of, same_shape, scalar_const,
    scalar_like, unary, without_first,
};
use crate::rule::{OpKind, REAL_ONLY, Root, Rule, RuleCtx};
use oxtensor_graph::build;
use oxtensor_graph::{ReduceOp, ScalarOp, Var};

/// For `v = x ** e` with a scalar-like constant `e` equal to `exponent`: `x` cast to `v`'s dtype
/// (its shape is `v`'s, since `e` broadcasts like a scalar). `float` asks for a float output.
fn pow_base(v: &Var, exponent: f64, float: bool) -> Option<Var> {
    let (x, e) = binary(v, ScalarOp::Pow)?;
    if scalar_const(e)? != exponent || (float && !v.dtype().is_float()) {
        return None;
    }
    let x = cast_to(x, v.dtype())?;
    same_shape(&x, v).then_some(x)
}

// x ** 2 → sqr(x)
fn pow_two(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    build::sqr(&pow_base(v, 2.0, false)?).ok()
}

// x ** 3 → sqr(x) * x
fn pow_three(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let x = pow_base(v, 3.0, false)?;
    build::mul(&build::sqr(&x).ok()?, &x).ok()
}

// x ** 4 → sqr(sqr(x))
fn pow_four(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    build::sqr(&build::sqr(&pow_base(v, 4.0, false)?).ok()?).ok()
}

// x ** 0.5 → sqrt(x)
fn pow_half(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    build::sqrt(&pow_base(v, 0.5, true)?).ok()
}

// x ** -1 → reciprocal(x)
fn pow_minus_one(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    build::reciprocal(&pow_base(v, -1.0, true)?).ok()
}

// x ** -2 → reciprocal(sqr(x))
fn pow_minus_two(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    build::reciprocal(&build::sqr(&pow_base(v, -2.0, true)?).ok()?).ok()
}

// x ** -0.5 → reciprocal(sqrt(x))
fn pow_minus_half(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    build::reciprocal(&build::sqrt(&pow_base(v, -0.5, true)?).ok()?).ok()
}

// x * x → sqr(x)
fn mul_self(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (a, b) = binary(v, ScalarOp::Mul)?;
    if a != b {
        return None;
    }
    build::sqr(&cast_to(a, v.dtype())?).ok()
}

// x * -1 → -x
fn mul_minus_one(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let rest = without_first(elemwise_args(v, ScalarOp::Mul)?, |a| is_const(a, -1.0))?;
    let [x] = rest.as_slice() else {
        return None;
    };
    if !negatable(v.dtype()) {
        return None;
    }
    let x = cast_to(x, v.dtype())?;
    same_shape(&x, v).then(|| build::neg(&x).ok())?
}

/// `switch(x >= lower, x, nan)` of `v`'s dtype and shape: `x` where an inverse pair is the
/// identity, NaN where the inner function was NaN.
fn identity_above(v: &Var, x: &Var, lower: f64) -> Option<Var> {
    let x = cast_to(x, v.dtype())?;
    let lo = scalar_like(lower, v.dtype(), v.ndim())?;
    let nan = scalar_like(f64::NAN, v.dtype(), v.ndim())?;
    let r = build::switch(&build::ge(&x, &lo).ok()?, &x, &nan).ok()?;
    same_shape(&r, v).then_some(r)
}

// exp(log(x)) → switch(x >= 0, x, nan)
fn exp_log(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    identity_above(v, unary(unary(v, ScalarOp::Exp)?, ScalarOp::Log)?, 0.0)
}

// expm1(log1p(x)) → switch(x >= -1, x, nan)
fn expm1_log1p(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    identity_above(v, unary(unary(v, ScalarOp::Expm1)?, ScalarOp::Log1p)?, -1.0)
}

// log(exp(x)) → x
fn log_exp(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    cast_to(unary(unary(v, ScalarOp::Log)?, ScalarOp::Exp)?, v.dtype())
}

// log1p(expm1(x)) → x
fn log1p_expm1(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    cast_to(
        unary(unary(v, ScalarOp::Log1p)?, ScalarOp::Expm1)?,
        v.dtype(),
    )
}

// sum(x * y) → matmul(x, y)   (x, y float vectors of v's dtype: a dot product)
fn sum_mul_dot(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (_, m) = reduce_of(v, ReduceOp::Sum)?;
    let (x, y) = binary(m, ScalarOp::Mul)?;
    let vector = |a: &Var| a.ndim() == 1 && a.dtype() == v.dtype() && a.ty().shape[0] != Some(1);
    if !v.dtype().is_float() || !vector(x) || !vector(y) {
        return None;
    }
    build::matmul(x, y).ok()
}

/// The specialization rules.
pub const RULES: &[Rule] = &[
    Rule::new("pow_two", Root::Elemwise(ScalarOp::Pow), pow_two),
    Rule::new("pow_three", Root::Elemwise(ScalarOp::Pow), pow_three),
    Rule::new("pow_four", Root::Elemwise(ScalarOp::Pow), pow_four),
    Rule::new("pow_half", Root::Elemwise(ScalarOp::Pow), pow_half),
    Rule::new(
        "pow_minus_one",
        Root::Elemwise(ScalarOp::Pow),
        pow_minus_one,
    ),
    Rule::new(
        "pow_minus_two",
        Root::Elemwise(ScalarOp::Pow),
        pow_minus_two,
    ),
    Rule::new(
        "pow_minus_half",
        Root::Elemwise(ScalarOp::Pow),
        pow_minus_half,
    ),
    Rule::new("mul_self", Root::Elemwise(ScalarOp::Mul), mul_self),
    Rule::new(
        "mul_minus_one",
        Root::Elemwise(ScalarOp::Mul),
        mul_minus_one,
    ),
    Rule::new("exp_log", Root::Elemwise(ScalarOp::Exp), exp_log).tagged(&[REAL_ONLY]),
    Rule::new("expm1_log1p", Root::Elemwise(ScalarOp::Expm1), expm1_log1p).tagged(&[REAL_ONLY]),
    Rule::new("log_exp", Root::Elemwise(ScalarOp::Log), log_exp).tagged(&[REAL_ONLY]),
    Rule::new("log1p_expm1", Root::Elemwise(ScalarOp::Log1p), log1p_expm1).tagged(&[REAL_ONLY]),
    Rule::new("sum_mul_dot", Root::Op(OpKind::Reduce), sum_mul_dot),
];
