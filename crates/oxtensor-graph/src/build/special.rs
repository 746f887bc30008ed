//! Builders of the special functions ([`SpecialFn`], one node each) and of the functions
//! PyTensor builds from them or from elementary ops: `gammau`, `gammal`, `logaddexp`,
//! `logsumexp`, `softmax`, `log_softmax`.

use super::{Built, Scalar, cast, elemwise, max, sum, weak_constant, with_scalar};
use crate::{GraphError, ScalarOp, SpecialFn, Var};
use oxtensor_data::upgrade_to_float;

/// `f` applied elementwise to `inputs` (padded to a common rank), checking the count.
#[track_caller]
pub fn special(f: SpecialFn, inputs: &[Var]) -> Built {
    if inputs.len() != f.arity() {
        return Err(GraphError::Invalid {
            op: f.py_name().into(),
            message: format!(
                "takes {} inputs ({}), got {}",
                f.arity(),
                f.export().params.join(", "),
                inputs.len()
            ),
        });
    }
    elemwise(ScalarOp::Special(f), inputs)
}

/// The upper incomplete gamma function Γ(k, x) = Q(k, x)·Γ(k) (PyTensor's `gammau`).
#[track_caller]
pub fn gammau(k: &Var, x: &Var) -> Built {
    let q = special(SpecialFn::GammaIncC, &[k.clone(), x.clone()])?;
    elemwise(
        ScalarOp::Mul,
        &[q, special(SpecialFn::Gamma, std::slice::from_ref(k))?],
    )
}

/// The lower incomplete gamma function γ(k, x) = P(k, x)·Γ(k) (PyTensor's `gammal`).
#[track_caller]
pub fn gammal(k: &Var, x: &Var) -> Built {
    let p = special(SpecialFn::GammaInc, &[k.clone(), x.clone()])?;
    elemwise(
        ScalarOp::Mul,
        &[p, special(SpecialFn::Gamma, std::slice::from_ref(k))?],
    )
}

/// `x` converted to the float type it computes in (`upgrade_to_float`).
#[track_caller]
fn as_float(x: &Var) -> Built {
    cast(x, upgrade_to_float(x.dtype()))
}

/// `log(exp(a) + exp(b))` without overflow: `max(a, b) + log1p(exp(-|a - b|))`, and
/// `a + log 2` where `a == b` (so that two equal infinities give that infinity).
#[track_caller]
pub fn logaddexp(a: &Var, b: &Var) -> Built {
    let d = upgrade_to_float(oxtensor_data::result_type(a.dtype(), b.dtype()));
    let (a, b) = (cast(a, d)?, cast(b, d)?);
    let m = elemwise(ScalarOp::Maximum, &[a.clone(), b.clone()])?;
    let diff = elemwise(ScalarOp::Sub, &[a.clone(), b.clone()])?;
    let neg_abs = elemwise(ScalarOp::Neg, &[elemwise(ScalarOp::Abs, &[diff])?])?;
    let tail = elemwise(ScalarOp::Log1p, &[elemwise(ScalarOp::Exp, &[neg_abs])?])?;
    let general = elemwise(ScalarOp::Add, &[m, tail])?;
    let tie = with_scalar(ScalarOp::Add, &a, std::f64::consts::LN_2, false)?;
    let equal = elemwise(ScalarOp::Eq, &[a, b])?;
    elemwise(ScalarOp::Switch, &[equal, tie, general])
}

/// The maximum of `x` over `axis`, with infinities (all elements ±∞) replaced by 0: the shift
/// that makes `exp(x - shift)` safe and is exact to add back.
#[track_caller]
fn finite_max(x: &Var, axis: Option<&[i64]>, keepdims: bool) -> Built {
    let m = max(x, axis, keepdims)?;
    let inf = elemwise(ScalarOp::IsInf, std::slice::from_ref(&m))?;
    let zero = weak_constant(Scalar::Float(0.0), m.dtype());
    elemwise(ScalarOp::Switch, &[inf, zero, m])
}

/// `log(sum(exp(x), axis, keepdims))`, computed as `m + log(sum(exp(x - m)))` with `m` the
/// (finite) maximum over `axis`, so it neither overflows nor underflows to `-inf`.
#[track_caller]
pub fn logsumexp(x: &Var, axis: Option<&[i64]>, keepdims: bool) -> Built {
    let x = as_float(x)?;
    let m_keep = finite_max(&x, axis, true)?;
    let shifted = elemwise(
        ScalarOp::Exp,
        &[elemwise(ScalarOp::Sub, &[x.clone(), m_keep.clone()])?],
    )?;
    let lse = elemwise(ScalarOp::Log, &[sum(&shifted, axis, keepdims)?])?;
    let m = if keepdims {
        m_keep
    } else {
        finite_max(&x, axis, false)?
    };
    elemwise(ScalarOp::Add, &[lse, m])
}

/// `exp(x - max) / sum(exp(x - max))` over `axis` (`None`: all axes), as PyTensor's
/// `softmax`.
#[track_caller]
pub fn softmax(x: &Var, axis: Option<&[i64]>) -> Built {
    let x = as_float(x)?;
    let m = finite_max(&x, axis, true)?;
    let e = elemwise(ScalarOp::Exp, &[elemwise(ScalarOp::Sub, &[x, m])?])?;
    let s = sum(&e, axis, true)?;
    elemwise(ScalarOp::TrueDiv, &[e, s])
}

/// `x - max - log(sum(exp(x - max)))` over `axis` (`None`: all axes), as PyTensor's
/// `log_softmax`.
#[track_caller]
pub fn log_softmax(x: &Var, axis: Option<&[i64]>) -> Built {
    let x = as_float(x)?;
    let m = finite_max(&x, axis, true)?;
    let shifted = elemwise(ScalarOp::Sub, &[x, m])?;
    let e = elemwise(ScalarOp::Exp, std::slice::from_ref(&shifted))?;
    let lse = elemwise(ScalarOp::Log, &[sum(&e, axis, true)?])?;
    elemwise(ScalarOp::Sub, &[shifted, lse])
}
