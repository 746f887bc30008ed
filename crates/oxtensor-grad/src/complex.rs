//! Gradients through complex numbers.
//!
//! The gradient of a real cost `C` with respect to a complex variable `z = x + iy` is
//! `∂C/∂x + i·∂C/∂y`, PyTensor's convention (its `real`, `imag` and `complex` rules follow
//! from it). For a holomorphic function `w = f(z)` this makes the input's gradient
//! `g·conj(f′(z))`, while the real rules compute `g·f′(z)`: so a holomorphic op's rule is run
//! on `conj(g)` and its result conjugated, `conj(rule(conj(g)))`, which is linear in `g` and
//! reduces to the real rule when everything is real. Matrix products are holomorphic in each
//! operand and go through the same conjugation.
//!
//! The rules for the ops that take complex numbers apart or build them (`real`, `imag`,
//! `angle`, `conj`, `complex`, `complex_from_polar`) are written out here; `abs`, `sign`,
//! `maximum`, `minimum` and `clip` need nothing special (their real rules already hold). Every
//! other op with a complex input (none exist today beyond these: the graph refuses complex
//! inputs to `floor`, `erf`, ...) has no gradient.

use crate::rules::{Term, grads};
use crate::util::fconst;
use oxtensor_graph::build::{self as b, Built};
use oxtensor_graph::{GraphError, ScalarOp, Var};

/// Whether a complex number is among the node's inputs or outputs.
pub(crate) fn involved(inputs: &[Var], outputs: &[&Var]) -> bool {
    inputs
        .iter()
        .chain(outputs.iter().copied())
        .any(|v| v.dtype().is_complex())
}

/// `conj(rule(conj(g)))`: a holomorphic op's real rule turned into the complex gradient.
pub(crate) fn conjugated(
    g: &Var,
    rule: impl FnOnce(&Var) -> Result<Vec<Term>, GraphError>,
) -> Result<Vec<Term>, GraphError> {
    let terms = rule(&b::conj(g)?)?;
    terms
        .into_iter()
        .map(|t| match t {
            Term::Grad(v) => Ok(Term::Grad(b::conj(&v)?)),
            other => Ok(other),
        })
        .collect()
}

/// The pullback of an elementwise op when complex numbers are involved or when the op is one
/// of the complex family; `None` when the real rule applies unchanged.
pub(crate) fn pullback(
    op: ScalarOp,
    inputs: &[Var],
    z: &Var,
    g: &Var,
    wanted: &[bool],
) -> Option<Result<Vec<Term>, GraphError>> {
    use ScalarOp::*;
    let x = &inputs[0];
    let complex_in = x.dtype().is_complex();
    Some(match op {
        Real if complex_in => grads(wanted, |_| b::complex(g, &zeros_like(g)?)),
        Imag if complex_in => grads(wanted, |_| b::complex(&zeros_like(g)?, g)),
        Conj if complex_in => grads(wanted, |_| b::conj(g)),
        Real | Conj => grads(wanted, |_| Ok(g.clone())),
        Imag => Ok(crate::rules::uniform(wanted, Term::Zero)),
        // θ = atan2(y, x): ∂θ/∂x = −y/r², ∂θ/∂y = x/r², so the gradient is g·i·z/|z|².
        Angle if complex_in => grads(wanted, |_| {
            let iz = b::complex(&b::neg(&b::imag(x)?)?, &b::real(x)?)?;
            b::true_div(&b::mul(g, &iz)?, &b::sqr(&b::abs(x)?)?)
        }),
        Angle => Ok(crate::rules::uniform(wanted, Term::Zero)),
        Complex => grads(wanted, |k| if k == 0 { b::real(g) } else { b::imag(g) }),
        // z = r·e^{iθ}: ∂C/∂r = Re(g·e^{−iθ}), ∂C/∂θ = r·Im(g·e^{−iθ}).
        ComplexFromPolar => {
            let (r, theta) = (&inputs[0], &inputs[1]);
            grads(wanted, |k| {
                let unit = b::complex_from_polar(&fconst(1.0, theta), &b::neg(theta)?)?;
                let rotated = b::mul(g, &unit)?;
                if k == 0 {
                    b::real(&rotated)
                } else {
                    b::mul(r, &b::imag(&rotated)?)
                }
            })
        }
        _ if !involved(inputs, &[z]) => return None,
        Abs | Sign | Maximum | Minimum | Clip | Switch | Cast(_) => return None,
        _ if op.allows_complex() => conjugated(g, |cg| {
            crate::elemwise::real_pullback(op, inputs, z, cg, wanted)
        }),
        _ => Ok(wanted
            .iter()
            .map(|&w| {
                if w {
                    Term::Undefined(format!("{op}: no gradient for complex inputs"))
                } else {
                    Term::Disconnected
                }
            })
            .collect()),
    })
}

/// Zeros of `v`'s dtype and shape.
fn zeros_like(v: &Var) -> Built {
    b::zeros_like(v, None)
}
