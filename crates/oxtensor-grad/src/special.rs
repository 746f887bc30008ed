//! Special functions needed by gradients but absent from [`ScalarOp`], built as graphs of
//! elementary ops (so they have gradients themselves, and the Hessian of `gammaln` works).
//!
//! [`ScalarOp`]: oxtensor_graph::ScalarOp

use crate::util::{fconst, rsub, scale, shift};
use oxtensor_graph::build::{self as b, Built};
use oxtensor_graph::{ScalarOp, Var};
use std::f64::consts::PI;

/// How far the recurrence shifts the argument before the asymptotic series is used.
const SHIFT: usize = 6;

/// Coefficients of the asymptotic series ψ(y) ≈ ln y − 1/(2y) − Σ cₖ / y²ᵏ (cₖ = B₂ₖ / 2k),
/// for k = 1‥5; with y ≥ 6.5 the truncation error is below 2·10⁻¹¹.
const SERIES: [f64; 5] = [
    1.0 / 12.0,
    -1.0 / 120.0,
    1.0 / 252.0,
    -1.0 / 240.0,
    1.0 / 132.0,
];

/// The digamma function ψ(x) = d log|Γ(x)| / dx of a float tensor, elementwise.
///
/// For x ≥ ½: the recurrence ψ(x) = ψ(x + 6) − Σₖ₌₀⁵ 1/(x + k), then the asymptotic series at
/// y = x + 6. For x < ½: the reflection ψ(x) = ψ(1 − x) − π / tan(πx). Poles (x = 0, −1, …)
/// give ±∞ or NaN, as SciPy's `psi`.
pub(crate) fn digamma(x: &Var) -> Built {
    let reflect = b::lt(x, &fconst(0.5, x))?;
    let xr = b::switch(&reflect, &rsub(1.0, x)?, x)?;
    let mut reciprocals = Vec::with_capacity(SHIFT);
    for k in 0..SHIFT {
        reciprocals.push(b::reciprocal(&shift(&xr, k as f64)?)?);
    }
    let partial = b::elemwise(ScalarOp::Add, &reciprocals)?;
    let y = shift(&xr, SHIFT as f64)?;
    let inv_y2 = b::reciprocal(&b::sqr(&y)?)?;
    // Horner: c₁ + c₂ t + … + c₅ t⁴ with t = 1/y², times t.
    let mut poly = fconst(SERIES[SERIES.len() - 1], x);
    for &c in SERIES[..SERIES.len() - 1].iter().rev() {
        poly = shift(&b::mul(&poly, &inv_y2)?, c)?;
    }
    let series = b::mul(&poly, &inv_y2)?;
    let half_over_y = b::true_div(&fconst(0.5, x), &y)?;
    let at_y = b::sub(&b::sub(&b::log(&y)?, &half_over_y)?, &series)?;
    let psi_r = b::sub(&at_y, &partial)?;
    let cot_term = b::true_div(&fconst(PI, x), &b::tan(&scale(x, PI)?)?)?;
    b::switch(&reflect, &b::sub(&psi_r, &cot_term)?, &psi_r)
}
