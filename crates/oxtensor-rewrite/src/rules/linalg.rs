//! Linear algebra (`linalg`, in `stabilize`): products with an inverse become solves (one
//! LU factorisation and two triangular solves instead of an inverse and a product, and more
//! accurate), and logarithms of determinants become `slogdet`, which does not overflow or
//! underflow for large matrices. `log(det(a))` is NaN where the determinant is negative, so
//! the replacement keeps that NaN with a switch on the sign.

use crate::pattern::{cast_to, same_shape, unary};
use crate::rule::{OpKind, Root, Rule, RuleCtx};
use oxtensor_graph::build::{self, linalg as la};
use oxtensor_graph::{AssumeA, LinalgOp, Op, ScalarOp, Var};

/// The matrix `a` when `v` is `det(a)`.
fn det_of(v: &Var) -> Option<&Var> {
    match v.owner()? {
        (Op::Linalg(LinalgOp::Det), [a]) => Some(a),
        _ => None,
    }
}

// matmul(inv(a), b) → solve(a, b)
fn inv_matmul_to_solve(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    let (Op::MatMul, [x, b]) = v.owner()? else {
        return None;
    };
    let (Op::Linalg(LinalgOp::Inv), [a]) = x.owner()? else {
        return None;
    };
    if !cx.single_client(x) {
        return None;
    }
    let b_ndim = b.ndim().min(2);
    let s = la::solve(a, b, AssumeA::General, false, false, Some(b_ndim)).ok()?;
    let s = cast_to(&s, v.dtype())?;
    same_shape(&s, v).then_some(s)
}

// log(abs(det(a))) → slogdet(a)[1]
fn log_abs_det_to_slogdet(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let a = det_of(unary(unary(v, ScalarOp::Log)?, ScalarOp::Abs)?)?;
    let (_, logabs) = la::slogdet(a).ok()?;
    cast_to(&logabs, v.dtype())
}

// log(det(a)) → switch(sign < 0, nan, slogdet(a)[1])
fn log_det_to_slogdet(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let a = det_of(unary(v, ScalarOp::Log)?)?;
    let (sign, logabs) = la::slogdet(a).ok()?;
    let negative = build::with_scalar(ScalarOp::Lt, &sign, 0.0, false).ok()?;
    let nan = build::weak_constant(build::Scalar::Float(f64::NAN), logabs.dtype());
    cast_to(&build::switch(&negative, &nan, &logabs).ok()?, v.dtype())
}

/// The rules, in priority order.
pub(crate) const RULES: &[Rule] = &[
    Rule::new(
        "inv_matmul_to_solve",
        Root::Op(OpKind::MatMul),
        inv_matmul_to_solve,
    ),
    Rule::new(
        "log_abs_det_to_slogdet",
        Root::Elemwise(ScalarOp::Log),
        log_abs_det_to_slogdet,
    ),
    Rule::new(
        "log_det_to_slogdet",
        Root::Elemwise(ScalarOp::Log),
        log_det_to_slogdet,
    ),
];
