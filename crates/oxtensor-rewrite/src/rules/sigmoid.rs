//! The logistic function written by hand (set `sigmoid`, in `stabilize`): `1/(1 + exp(-x))`
//! overflows to NaN or rounds to 0 and 1 where `sigmoid(x)` is exact, and its gradient is
//! worse (`exp(-x)/(1 + exp(-x))²` is `inf/inf` at `x = -1000`). These rules find the logistic
//! function in the forms users and the gradient write it, so that the rules on `sigmoid`
//! (`log(sigmoid(x)) → -softplus(-x)`, `1 - sigmoid(x) → sigmoid(-x)`) and the cancellations
//! of the `products` set apply:
//!
//! * in a product-quotient (see [`Ratio`]), each factor `1 + exp(t)` of the denominator becomes
//!   `sigmoid(t)` with a numerator factor `exp(t)`, or else a numerator factor `sigmoid(-t)`:
//!   `1/(1 + exp(-x)) → sigmoid(x)`, `exp(x)/(1 + exp(x)) → sigmoid(x)`, and the gradient's
//!   `g/(1 + exp(t))² → g·sigmoid(-t)·sigmoid(-t)`;
//! * in a product, `exp(t)·sigmoid(-t)` is `sigmoid(t)` (PyTensor's `local_sigm_times_exp`),
//!   which turns the rest of the gradient, `… · sigmoid(-t) · exp(t)`, into
//!   `sigmoid(-t) · sigmoid(t)`, the logistic derivative.
//!
//! The identities hold everywhere, infinities included (where the naive form is `inf/inf`, the
//! result is the limit). Negated arguments are built with [`negated`], which gives the form
//! canonicalization would, so that `sigmoid(-t)` built here and by `1 - sigmoid(x)` is one node.

use crate::pattern::{binary, cast_to, is_const, is_negation, negated, unary};
use crate::rule::{OpKind, Root, Rule, RuleCtx};
use crate::rules::products::{Ratio, rebuilt, scan, take};
use oxtensor_graph::build;
use oxtensor_graph::{ScalarOp, Var};

/// `(exp(t), t)` when `f` is `1 + exp(t)` or `exp(t) + 1` for a float `t`.
fn one_plus_exp(f: &Var) -> Option<(&Var, &Var)> {
    let (a, b) = binary(f, ScalarOp::Add)?;
    let e = match (is_const(a, 1.0), is_const(b, 1.0)) {
        (true, _) => b,
        (_, true) => a,
        _ => return None,
    };
    let t = unary(e, ScalarOp::Exp)?;
    t.dtype().is_float().then_some((e, t))
}

// c / (1 + exp(t)) → c · sigmoid(-t),  exp(t) / (1 + exp(t)) → sigmoid(t)   (each such factor of a denominator)
fn sigmoid_from_ratio(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    if !scan(v, |op, den| den && op == Some(ScalarOp::Add)) {
        return None;
    }
    let mut r = Ratio::of(v, cx);
    let mut found = false;
    for f in std::mem::take(&mut r.den) {
        let Some((e, t)) = one_plus_exp(&f) else {
            r.den.push(f);
            continue;
        };
        let s = if take(&mut r.num, e) {
            build::sigmoid(t).ok()?
        } else {
            build::sigmoid(&negated(t)?).ok()?
        };
        r.num.push(s);
        found = true;
    }
    if !found {
        return None;
    }
    rebuilt(v, &r)
}

// (1 + exp(t)) ** -1 → sigmoid(-t)
fn sigmoid_from_pow(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (f, c) = binary(v, ScalarOp::Pow)?;
    if !is_const(c, -1.0) || !v.dtype().is_float() {
        return None;
    }
    let (_, t) = one_plus_exp(f)?;
    let s = cast_to(&build::sigmoid(&negated(t)?).ok()?, v.dtype())?;
    crate::type_fits(v, &s).then_some(s)
}

/// The positions of factors `exp(t)` and `sigmoid(-t)` among `factors`.
fn exp_sigmoid_pair(factors: &[Var]) -> Option<(usize, usize)> {
    for (i, e) in factors.iter().enumerate() {
        let Some(t) = unary(e, ScalarOp::Exp) else {
            continue;
        };
        for (j, s) in factors.iter().enumerate() {
            if unary(s, ScalarOp::Sigmoid).is_some_and(|u| is_negation(t, u)) {
                return Some((i, j));
            }
        }
    }
    None
}

// exp(t) · sigmoid(-t) → sigmoid(t)   (any two factors of a product)
fn sigmoid_times_exp(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    if !scan(v, |op, den| !den && op == Some(ScalarOp::Exp)) {
        return None;
    }
    let mut r = Ratio::of(v, cx);
    let mut found = false;
    while let Some((i, j)) = exp_sigmoid_pair(&r.num) {
        let u = unary(&r.num[j], ScalarOp::Sigmoid)?;
        r.num[j] = build::sigmoid(&negated(u)?).ok()?;
        r.num.remove(i);
        found = true;
    }
    if !found {
        return None;
    }
    rebuilt(v, &r)
}

/// The rules recognising the logistic function.
pub const RULES: &[Rule] = &[
    Rule::new(
        "sigmoid_from_ratio",
        Root::Op(OpKind::Elemwise),
        sigmoid_from_ratio,
    ),
    Rule::new(
        "sigmoid_from_pow",
        Root::Elemwise(ScalarOp::Pow),
        sigmoid_from_pow,
    ),
    Rule::new(
        "sigmoid_times_exp",
        Root::Op(OpKind::Elemwise),
        sigmoid_times_exp,
    ),
];
