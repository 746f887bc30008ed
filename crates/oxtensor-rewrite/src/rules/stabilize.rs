//! Numerical stabilization (`stabilize`): expressions that overflow, underflow or cancel in
//! floating point, replaced by equal ones that do not. Each rule's result is at least as
//! accurate everywhere and finite wherever the true value is.
//!
//! `log1mexp(x) = log(1 - exp(x))` holds for `x <= 0` (NaN above, in every form); `logaddexp`
//! holds everywhere, infinities included.
//!
//! The patterns follow the canonical forms (`x - 1` is `x + (-1)` after `canonicalize`), and
//! also match the plain forms, so the pass works without canonicalization too.

use crate::pattern::{
    apply, binary, cast_to, dimshuffle, elemwise_args, is_const, keep_dims, nary, negated,
    reduce_of, reduce_over, scalar_const, scalar_like, unary, without_first,
};
use crate::rule::{REAL_ONLY, Root, Rule, RuleCtx};
use oxtensor_graph::build;
use oxtensor_graph::{Axes, ReduceOp, ScalarOp, Var};

// log(1 + x) → log1p(x)
fn log1p_from_log(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let s = unary(v, ScalarOp::Log)?;
    let rest = without_first(elemwise_args(s, ScalarOp::Add)?, |a| is_const(a, 1.0))?;
    let x = cast_to(&nary(ScalarOp::Add, &rest)?, s.dtype())?;
    apply(ScalarOp::Log1p, &[x])
}

// log(1 - x) → log1p(-x)
fn log1p_from_log_sub(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (c, x) = binary(unary(v, ScalarOp::Log)?, ScalarOp::Sub)?;
    if !is_const(c, 1.0) {
        return None;
    }
    let neg = build::neg(&cast_to(x, v.dtype())?).ok()?;
    apply(ScalarOp::Log1p, &[neg])
}

// exp(x) - 1 → expm1(x)
fn expm1_from_sub(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (e, c) = binary(v, ScalarOp::Sub)?;
    if !is_const(c, 1.0) {
        return None;
    }
    let x = unary(e, ScalarOp::Exp)?;
    cast_to(&apply(ScalarOp::Expm1, std::slice::from_ref(x))?, v.dtype())
}

// exp(x) + (-1) → expm1(x)   (the canonical form of exp(x) - 1; other terms are kept)
fn expm1_from_add(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let mut rest = without_first(elemwise_args(v, ScalarOp::Add)?, |a| is_const(a, -1.0))?;
    let at = rest
        .iter()
        .position(|a| unary(a, ScalarOp::Exp).is_some())?;
    let x = unary(&rest[at], ScalarOp::Exp)?.clone();
    rest[at] = apply(ScalarOp::Expm1, &[x])?;
    cast_to(&nary(ScalarOp::Add, &rest)?, v.dtype())
}

// log1p(exp(x)) → softplus(x)   (so log(1 + exp(x)) → softplus(x) through log1p)
fn softplus_from_log1p(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let x = unary(unary(v, ScalarOp::Log1p)?, ScalarOp::Exp)?;
    apply(ScalarOp::Softplus, std::slice::from_ref(x))
}

// log(sigmoid(x)) → -softplus(-x)
fn log_sigmoid(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let x = unary(unary(v, ScalarOp::Log)?, ScalarOp::Sigmoid)?;
    let neg_x = build::neg(&cast_to(x, v.dtype())?).ok()?;
    build::neg(&build::softplus(&neg_x).ok()?).ok()
}

// 1 - sigmoid(x) → sigmoid(-x)
fn one_minus_sigmoid(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (c, s) = binary(v, ScalarOp::Sub)?;
    if !is_const(c, 1.0) {
        return None;
    }
    let x = unary(s, ScalarOp::Sigmoid)?;
    let neg_x = negated(&cast_to(x, s.dtype())?)?;
    cast_to(&build::sigmoid(&neg_x).ok()?, v.dtype())
}

// log1p(-sigmoid(x)) → -softplus(x)   (so log(1 - sigmoid(x)) → -softplus(x))
fn log1p_neg_sigmoid(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let n = unary(v, ScalarOp::Log1p)?;
    let x = unary(unary(n, ScalarOp::Neg)?, ScalarOp::Sigmoid)?;
    build::neg(&build::softplus(&cast_to(x, v.dtype())?).ok()?).ok()
}

/// True when `x` is `x0 - max(x0, axes)` with the axes kept, as the rules below build it
/// (possibly with infinite maxima replaced by 0): such an `x` is already shifted.
fn is_shifted(x: &Var, axes: &Axes) -> bool {
    let Some((x0, k)) = binary(x, ScalarOp::Sub) else {
        return false;
    };
    let Some((_, m)) = dimshuffle(k) else {
        return false;
    };
    let m = match elemwise_args(m, ScalarOp::Switch) {
        Some([_, _, inner]) => inner,
        _ => m,
    };
    matches!(reduce_of(m, ReduceOp::Max), Some((a, y)) if a == axes && y == x0)
}

/// `max(x, axes)` with ±∞ replaced by 0: shifting by it keeps `x − m` finite where `x` is,
/// and a slice of all −∞ still gives `log(0) = −∞` as the unshifted form does.
fn finite_max(x: &Var, axes: &Axes) -> Option<Var> {
    let m = reduce_over(ReduceOp::Max, axes, x)?;
    let zero = scalar_like(0.0, m.dtype(), m.ndim())?;
    build::switch(&build::isinf(&m).ok()?, &zero, &m).ok()
}

// log(sum(exp(x), axes)) → m + log(sum(exp(x - m), axes)),  m = max(x, axes)   (also under keepdims)
fn logsumexp(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let inner = unary(v, ScalarOp::Log)?;
    let (wrap, s) = match dimshuffle(inner) {
        Some((order, s)) => (Some(order), s),
        None => (None, inner),
    };
    let (axes, e) = reduce_of(s, ReduceOp::Sum)?;
    let x = unary(e, ScalarOp::Exp)?;
    if !x.dtype().is_float() || axes.is_empty() || is_shifted(x, axes) {
        return None;
    }
    let m = finite_max(x, axes)?;
    let shifted = build::sub(x, &keep_dims(&m, axes, x.ndim())?).ok()?;
    let sum = reduce_over(ReduceOp::Sum, axes, &build::exp(&shifted).ok()?)?;
    let lse = build::add(&m, &build::log(&sum).ok()?).ok()?;
    match wrap {
        Some(order) => build::dimshuffle(&lse, order).ok(),
        None => Some(lse),
    }
}

/// The axes of `d` when it is `sum(exp(x), axes)` with the axes kept (`keepdims=True`, or the
/// rank padding of a full sum) for this `x`.
fn kept_sum_exp<'a>(d: &'a Var, x: &Var) -> Option<&'a Axes> {
    let (order, s) = dimshuffle(d)?;
    let (axes, e) = reduce_of(s, ReduceOp::Sum)?;
    let same = unary(e, ScalarOp::Exp)? == x
        && order == oxtensor_graph::build::keepdims_order(x.ndim(), axes);
    same.then_some(axes)
}

// exp(x) / sum(exp(x), axes, keepdims) → exp(x - m) / sum(exp(x - m), axes, keepdims),  m = max(x, axes)
fn softmax(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (num, den) = binary(v, ScalarOp::TrueDiv)?;
    let x = unary(num, ScalarOp::Exp)?;
    let axes = kept_sum_exp(den, x)?;
    if !x.dtype().is_float() || is_shifted(x, axes) {
        return None;
    }
    let m = reduce_over(ReduceOp::Max, axes, x)?;
    let shifted = build::sub(x, &keep_dims(&m, axes, x.ndim())?).ok()?;
    let e = build::exp(&shifted).ok()?;
    let total = keep_dims(&reduce_over(ReduceOp::Sum, axes, &e)?, axes, x.ndim())?;
    build::true_div(&e, &total).ok()
}

// log(exp(x) / sum(exp(x), axes, keepdims)) → x - log(sum(exp(x), axes, keepdims))   (then logsumexp)
fn log_softmax(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (num, den) = binary(unary(v, ScalarOp::Log)?, ScalarOp::TrueDiv)?;
    let x = unary(num, ScalarOp::Exp)?;
    let axes = kept_sum_exp(den, x)?;
    if !x.dtype().is_float() {
        return None;
    }
    let lse = build::log(&reduce_over(ReduceOp::Sum, axes, num)?).ok()?;
    build::sub(x, &keep_dims(&lse, axes, x.ndim())?).ok()
}

/// `log1mexp(x)` from existing ops: `log1p(-exp(x))` is accurate where `exp(x) < 1/2`, and
/// `log(-expm1(x))` where `x` is near 0 (Mächler's rule). The first branch reads
/// `minimum(x, -ln 2)`, equal to `x` where it is selected, which also marks the result as
/// already stabilized so [`log1mexp_from_log1p`] does not match its own output.
fn log1mexp(x: &Var, dtype: oxtensor_data::DType) -> Option<Var> {
    let x = cast_to(x, dtype)?;
    let cut = scalar_like(-std::f64::consts::LN_2, dtype, x.ndim())?;
    let low = build::minimum(&x, &cut).ok()?;
    let near = build::log1p(&build::neg(&build::exp(&low).ok()?).ok()?).ok()?;
    let far = build::log(&build::neg(&build::expm1(&x).ok()?).ok()?).ok()?;
    build::switch(&build::lt(&x, &cut).ok()?, &near, &far).ok()
}

/// True when `x` is `minimum(_, c)` with `c <= -ln 2`: `log1p(-exp(x))` is already accurate.
fn clamped_low(x: &Var) -> bool {
    binary(x, ScalarOp::Minimum)
        .and_then(|(_, c)| scalar_const(c))
        .is_some_and(|c| c <= -std::f64::consts::LN_2)
}

// log(1 - exp(x)) → switch(x < -ln 2, log1p(-exp(min(x, -ln 2))), log(-expm1(x)))
fn log1mexp_from_log(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (c, e) = binary(unary(v, ScalarOp::Log)?, ScalarOp::Sub)?;
    if !is_const(c, 1.0) {
        return None;
    }
    log1mexp(unary(e, ScalarOp::Exp)?, v.dtype())
}

// log1p(-exp(x)) → switch(x < -ln 2, log1p(-exp(min(x, -ln 2))), log(-expm1(x)))
fn log1mexp_from_log1p(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let x = unary(
        unary(unary(v, ScalarOp::Log1p)?, ScalarOp::Neg)?,
        ScalarOp::Exp,
    )?;
    if clamped_low(x) {
        return None;
    }
    log1mexp(x, v.dtype())
}

// log(exp(a) + exp(b)) → switch(a == b, a + ln 2, max(a, b) + log1p(exp(-|a - b|)))
// (the switch gives logaddexp(±inf, ±inf) = ±inf, where a - b is NaN)
fn logaddexp(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (ea, eb) = binary(unary(v, ScalarOp::Log)?, ScalarOp::Add)?;
    let (a, b) = (unary(ea, ScalarOp::Exp)?, unary(eb, ScalarOp::Exp)?);
    let dtype = v.dtype();
    let (a, b) = (cast_to(a, dtype)?, cast_to(b, dtype)?);
    let ln2 = scalar_like(std::f64::consts::LN_2, dtype, v.ndim())?;
    let gap = build::neg(&build::abs(&build::sub(&a, &b).ok()?).ok()?).ok()?;
    let tail = build::log1p(&build::exp(&gap).ok()?).ok()?;
    let general = build::add(&build::maximum(&a, &b).ok()?, &tail).ok()?;
    let equal = build::add(&a, &ln2).ok()?;
    build::switch(&build::eq(&a, &b).ok()?, &equal, &general).ok()
}

/// The stabilization rules.
pub const RULES: &[Rule] = &[
    Rule::new(
        "log1mexp_from_log",
        Root::Elemwise(ScalarOp::Log),
        log1mexp_from_log,
    )
    .tagged(&[REAL_ONLY]),
    Rule::new(
        "log1mexp_from_log1p",
        Root::Elemwise(ScalarOp::Log1p),
        log1mexp_from_log1p,
    )
    .tagged(&[REAL_ONLY]),
    Rule::new("logaddexp", Root::Elemwise(ScalarOp::Log), logaddexp).tagged(&[REAL_ONLY]),
    Rule::new(
        "log1p_from_log",
        Root::Elemwise(ScalarOp::Log),
        log1p_from_log,
    ),
    Rule::new(
        "log1p_from_log_sub",
        Root::Elemwise(ScalarOp::Log),
        log1p_from_log_sub,
    ),
    Rule::new(
        "expm1_from_sub",
        Root::Elemwise(ScalarOp::Sub),
        expm1_from_sub,
    ),
    Rule::new(
        "expm1_from_add",
        Root::Elemwise(ScalarOp::Add),
        expm1_from_add,
    ),
    Rule::new(
        "softplus_from_log1p",
        Root::Elemwise(ScalarOp::Log1p),
        softplus_from_log1p,
    ),
    Rule::new("log_sigmoid", Root::Elemwise(ScalarOp::Log), log_sigmoid),
    Rule::new(
        "one_minus_sigmoid",
        Root::Elemwise(ScalarOp::Sub),
        one_minus_sigmoid,
    ),
    Rule::new(
        "log1p_neg_sigmoid",
        Root::Elemwise(ScalarOp::Log1p),
        log1p_neg_sigmoid,
    ),
    Rule::new("logsumexp", Root::Elemwise(ScalarOp::Log), logsumexp).tagged(&[REAL_ONLY]),
    Rule::new("softmax", Root::Elemwise(ScalarOp::TrueDiv), softmax),
    Rule::new("log_softmax", Root::Elemwise(ScalarOp::Log), log_softmax).tagged(&[REAL_ONLY]),
];
