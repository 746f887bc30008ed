//! Gradient markers: `zero_grad`, `disconnected_grad`, `grad_clip` and `undefined_grad`, values that are the
//! identity in the forward pass but change how gradients flow through them. Each is an
//! [`Op::GradMarker`] node, a view of its input in every backend.

use crate::error::GradError;
use crate::rules::{Term, per_input};
use oxtensor_graph::build::{self as b};
use oxtensor_graph::{GradMarker, GraphError, Op, Var};

fn mark(kind: GradMarker, inputs: &[Var]) -> Result<Var, GradError> {
    Ok(Var::apply1(Op::GradMarker(kind), inputs)?)
}

/// `x` in the forward pass, with a zero gradient: `grad(f(zero_grad(x)), x)` is zeros, and `x`
/// still counts as connected (no disconnected-input error). PyTensor's `zero_grad`.
#[track_caller]
pub fn zero_grad(x: &Var) -> Result<Var, GradError> {
    mark(GradMarker::Zero, std::slice::from_ref(x))
}

/// `x` in the forward pass, treated as a constant by differentiation: no gradient flows
/// through it, and a variable reached only through it is disconnected (an error under
/// `DisconnectedInputs::Raise`). PyTensor's `disconnected_grad`; like listing `x` in
/// `consider_constant`, but recorded in the graph.
#[track_caller]
pub fn disconnected_grad(x: &Var) -> Result<Var, GradError> {
    mark(GradMarker::Disconnected, std::slice::from_ref(x))
}

/// `x` in the forward pass, with an undefined gradient: a gradient that flows through it to a
/// requested variable is PyTensor's `NullType` (an error naming `x`'s op under the default
/// `null_gradients="raise"`). PyTensor's `undefined_grad`, for values whose derivative a
/// model must never use.
#[track_caller]
pub fn undefined_grad(x: &Var) -> Result<Var, GradError> {
    mark(GradMarker::Undefined, std::slice::from_ref(x))
}

/// `x` in the forward pass; in the backward pass the gradient flowing into `x` is clipped
/// elementwise to `[lo, hi]` (0-d bounds, stored in `x`'s dtype). PyTensor's `grad_clip`, used
/// against exploding gradients. Constant bounds with `lo > hi` are an error.
#[track_caller]
pub fn grad_clip(x: &Var, lo: &Var, hi: &Var) -> Result<Var, GradError> {
    for (what, v) in [("lower", lo), ("upper", hi)] {
        if v.ndim() != 0 {
            return Err(GradError::Invalid(format!(
                "grad_clip: the {what} bound must be a scalar (0-d), got {}",
                v.describe()
            )));
        }
    }
    let value = |v: &Var| v.constant_value().and_then(|t| t.item::<f64>());
    if let (Some(l), Some(h)) = (value(lo), value(hi))
        && l > h
    {
        return Err(GradError::Invalid(format!(
            "grad_clip: the upper bound ({h}) must be >= the lower bound ({l})"
        )));
    }
    // Bounds in x's dtype, so the gradient clipped to them keeps x's type.
    mark(
        GradMarker::Clip,
        &[x.clone(), b::cast(lo, x.dtype())?, b::cast(hi, x.dtype())?],
    )
}

/// The pullback of a marker: zero, nothing, or the clipped cotangent for input 0; the clip
/// bounds get no gradient.
pub(crate) fn pullback(
    kind: GradMarker,
    inputs: &[Var],
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    per_input(wanted, |k| {
        Ok(match (kind, k) {
            (GradMarker::Zero, 0) => Term::Zero,
            (GradMarker::Clip, 0) => Term::Grad(b::clip(g, &inputs[1], &inputs[2])?),
            (GradMarker::Undefined, 0) => {
                Term::Undefined(format!("undefined_grad of {}", inputs[0].describe()))
            }
            _ => Term::Disconnected,
        })
    })
}
