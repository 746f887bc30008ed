//! Pullbacks of the special functions ([`SpecialFn`]): one exhaustive `match`, following
//! PyTensor's `L_op`s. Each derivative is a graph of special and elementary ops (so second
//! derivatives work where those have rules). Where PyTensor's gradient is undefined (the
//! integer order of `polygamma`) or not implemented here (derivatives with respect to the
//! parameters of the inverses, of Bessel orders, second derivatives in the parameters of
//! `gammainc`, `betainc` and `hyp2f1`), the input gets [`Term::Undefined`] naming the function
//! and the parameter.

use crate::rules::{Term, per_input};
use crate::util::{fconst, rsub, scale, shift};
use oxtensor_graph::build::{self as b, Built};
use oxtensor_graph::{GraphError, ScalarOp, SpecialFn, Var};
use std::f64::consts::{FRAC_2_SQRT_PI, PI, SQRT_2};

/// The pullback of `f` applied elementwise to `inputs`, producing `z`, with cotangent `g`.
pub(crate) fn pullback(
    f: SpecialFn,
    inputs: &[Var],
    z: &Var,
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    use SpecialFn::*;
    // Input `i` in the output's float type.
    let x = |i: usize| b::cast(&inputs[i], z.dtype());
    let sp = |h: SpecialFn, args: &[Var]| b::special(h, args);
    // Per input: `Some(derivative)` (to be multiplied by `g`), or `None`: not available.
    let d: Vec<Option<Built>> = match f {
        // Γ' = Γ ψ.
        Gamma => vec![Some(b::mul(z, &sp(Psi, &[x(0)?])?))],
        Psi => vec![Some(sp(TriGamma, &[x(0)?]))],
        TriGamma => vec![Some(sp(PolyGamma, &[fconst(2.0, z), x(0)?]))],
        // d ψ⁽ⁿ⁾/dx = ψ⁽ⁿ⁺¹⁾; the order is an integer.
        PolyGamma => vec![None, Some(sp(PolyGamma, &[shift(&x(0)?, 1.0)?, x(1)?]))],
        // dP/dx = xᵃ⁻¹ e⁻ˣ / Γ(a); dQ/dx = −dP/dx.
        // ∂P/∂a is its own function (`gammainc_grad`); ∂Q/∂a = −∂P/∂a.
        GammaInc => vec![
            Some(sp(GammaIncGrad, &[x(0)?, x(1)?])),
            Some(gamma_density(&x(0)?, &x(1)?)),
        ],
        GammaIncC => vec![
            Some(b::neg(&sp(GammaIncGrad, &[x(0)?, x(1)?])?)),
            Some(b::neg(&gamma_density(&x(0)?, &x(1)?)?)),
        ],
        // ∂²P/∂a∂x = ∂/∂a of the density = density · (log x − ψ(a)); ∂²P/∂a² is not
        // implemented (nor in PyTensor).
        GammaIncGrad => vec![
            None,
            Some(b::mul(
                &gamma_density(&x(0)?, &x(1)?)?,
                &b::sub(&b::log(&x(1)?)?, &sp(Psi, &[x(0)?])?)?,
            )),
        ],
        // The inverse's derivative is the reciprocal of the density at the result.
        GammaIncInv => vec![None, Some(inverse_gamma_slope(&x(0)?, z))],
        GammaIncCInv => vec![None, Some(b::neg(&inverse_gamma_slope(&x(0)?, z)?))],
        // ∂B/∂a = B (ψ(a) − ψ(a + b)); ∂ log B/∂a = ψ(a) − ψ(a + b).
        Beta | BetaLn => {
            let (a, c) = (x(0)?, x(1)?);
            let psi_ab = sp(Psi, &[b::add(&a, &c)?])?;
            let da = b::sub(&sp(Psi, &[a])?, &psi_ab)?;
            let dc = b::sub(&sp(Psi, &[c])?, &psi_ab)?;
            if f == Beta {
                vec![Some(b::mul(z, &da)), Some(b::mul(z, &dc))]
            } else {
                vec![Some(Ok(da)), Some(Ok(dc))]
            }
        }
        // ∂I_x(a, b)/∂x = xᵃ⁻¹ (1 − x)ᵇ⁻¹ / B(a, b); ∂/∂a and ∂/∂b are their own functions.
        BetaInc => {
            let args = [x(0)?, x(1)?, x(2)?];
            vec![
                Some(sp(BetaIncDa, &args)),
                Some(sp(BetaIncDb, &args)),
                Some(beta_density(&args[0], &args[1], &args[2])),
            ]
        }
        // ∂²I/∂a∂x = density · (ln x − ψ(a) + ψ(a + b)), ∂²I/∂b∂x = density · (ln(1 − x) −
        // ψ(b) + ψ(a + b)); the second derivatives in the shapes are not implemented (nor in
        // PyTensor).
        BetaIncDa | BetaIncDb => {
            let (a, c, y) = (x(0)?, x(1)?, x(2)?);
            let psi_ab = sp(Psi, &[b::add(&a, &c)?])?;
            let (log_w, psi) = if f == BetaIncDa {
                (b::log(&y)?, sp(Psi, std::slice::from_ref(&a))?)
            } else {
                (b::log1p(&b::neg(&y)?)?, sp(Psi, std::slice::from_ref(&c))?)
            };
            let slope = b::add(&b::sub(&log_w, &psi)?, &psi_ab)?;
            vec![None, None, Some(b::mul(&beta_density(&a, &c, &y)?, &slope))]
        }
        BetaIncInv => {
            let density = beta_density(&x(0)?, &x(1)?, z)?;
            vec![None, None, Some(b::reciprocal(&density))]
        }
        // erfinv' = √π/2 · exp(erfinv²); erfcinv' = −√π/2 · exp(erfcinv²).
        Erfinv => vec![Some(scale(&b::exp(&b::sqr(z)?)?, 1.0 / FRAC_2_SQRT_PI))],
        Erfcinv => vec![Some(scale(&b::exp(&b::sqr(z)?)?, -1.0 / FRAC_2_SQRT_PI))],
        // erfcx' = 2x·erfcx(x) − 2/√π.
        Erfcx => vec![Some(shift(
            &scale(&b::mul(&x(0)?, z)?, 2.0)?,
            -FRAC_2_SQRT_PI,
        ))],
        I0 => vec![Some(sp(I1, &[x(0)?]))],
        // I₁' = I₀ − I₁/x.
        I1 => vec![Some(b::sub(&sp(I0, &[x(0)?])?, &b::true_div(z, &x(0)?)?))],
        // I_v' = (I_{v−1} + I_{v+1}) / 2.
        Iv => {
            let (v, y) = (x(0)?, x(1)?);
            let s = b::add(
                &sp(Iv, &[shift(&v, -1.0)?, y.clone()])?,
                &sp(Iv, &[shift(&v, 1.0)?, y])?,
            )?;
            vec![None, Some(scale(&s, 0.5))]
        }
        // (I_v e^{−|x|})' = (ive_{v−1} + ive_{v+1}) / 2 − sign(x)·ive_v.
        Ive => {
            let (v, y) = (x(0)?, x(1)?);
            let s = b::add(
                &sp(Ive, &[shift(&v, -1.0)?, y.clone()])?,
                &sp(Ive, &[shift(&v, 1.0)?, y.clone()])?,
            )?;
            vec![
                None,
                Some(b::sub(&scale(&s, 0.5)?, &b::mul(&b::sign(&y)?, z)?)),
            ]
        }
        J0 => vec![Some(b::neg(&sp(J1, &[x(0)?])?))],
        // J₁' = (J₀ − J₂) / 2.
        J1 => {
            let y = x(0)?;
            let two = fconst(2.0, z);
            vec![Some(scale(
                &b::sub(&sp(J0, std::slice::from_ref(&y))?, &sp(Jv, &[two, y])?)?,
                0.5,
            ))]
        }
        // J_v' = (J_{v−1} − J_{v+1}) / 2.
        Jv => {
            let (v, y) = (x(0)?, x(1)?);
            let s = b::sub(
                &sp(Jv, &[shift(&v, -1.0)?, y.clone()])?,
                &sp(Jv, &[shift(&v, 1.0)?, y])?,
            )?;
            vec![None, Some(scale(&s, 0.5))]
        }
        // K_v' = −(K_{v−1} + K_{v+1}) / 2 (an integer order for `kn`, computed by `kv`).
        Kn | Kv => {
            let (v, y) = (x(0)?, x(1)?);
            let s = b::add(
                &sp(Kv, &[shift(&v, -1.0)?, y.clone()])?,
                &sp(Kv, &[shift(&v, 1.0)?, y])?,
            )?;
            vec![None, Some(scale(&s, -0.5))]
        }
        // (K_v eˣ)' = kve_v − (kve_{v−1} + kve_{v+1}) / 2.
        Kve => {
            let (v, y) = (x(0)?, x(1)?);
            let s = b::add(
                &sp(Kve, &[shift(&v, -1.0)?, y.clone()])?,
                &sp(Kve, &[shift(&v, 1.0)?, y])?,
            )?;
            vec![None, Some(b::sub(z, &scale(&s, 0.5)?))]
        }
        // ∂T/∂h = −exp(−h²/2)·erf(ah/√2) / (2√(2π)); ∂T/∂a = exp(−h²(1 + a²)/2) / (2π(1 + a²)).
        OwensT => {
            let (h, a) = (x(0)?, x(1)?);
            let h2 = b::sqr(&h)?;
            let dh = b::mul(
                &b::exp(&scale(&h2, -0.5)?)?,
                &b::erf(&scale(&b::mul(&a, &h)?, 1.0 / SQRT_2)?)?,
            )
            .and_then(|v| scale(&v, -1.0 / (2.0 * (2.0 * PI).sqrt())));
            let one_a2 = shift(&b::sqr(&a)?, 1.0)?;
            let da = b::true_div(
                &b::exp(&scale(&b::mul(&h2, &one_a2)?, -0.5)?)?,
                &scale(&one_a2, 2.0 * PI)?,
            );
            vec![Some(dh), Some(da)]
        }
        // ∂₂F₁/∂x = ab/c · ₂F₁(a + 1, b + 1; c + 1; x); ∂/∂a, ∂/∂b, ∂/∂c are their own
        // functions.
        Hyp2F1 => {
            let args = [x(0)?, x(1)?, x(2)?, x(3)?];
            vec![
                Some(sp(Hyp2F1Da, &args)),
                Some(sp(Hyp2F1Db, &args)),
                Some(sp(Hyp2F1Dc, &args)),
                Some(hyp2f1_slope(Hyp2F1, &args)),
            ]
        }
        // ∂/∂x of ∂₂F₁/∂θ = ∂/∂θ of ab/c · ₂F₁(a + 1, b + 1; c + 1; x) (product rule); the
        // second derivatives in the parameters are not implemented (nor in PyTensor).
        Hyp2F1Da | Hyp2F1Db | Hyp2F1Dc => {
            let args = [x(0)?, x(1)?, x(2)?, x(3)?];
            let (a, c0, c) = (&args[0], &args[1], &args[2]);
            let up = sp(Hyp2F1, &hyp2f1_shifted(&args)?)?;
            // ∂(ab/c)/∂θ.
            let d_coef = match f {
                Hyp2F1Da => b::true_div(c0, c)?,
                Hyp2F1Db => b::true_div(a, c)?,
                _ => b::neg(&b::true_div(&b::mul(a, c0)?, &b::sqr(c)?)?)?,
            };
            let d_up = hyp2f1_slope(f, &args)?;
            vec![
                None,
                None,
                None,
                Some(b::add(&b::mul(&d_coef, &up)?, &d_up)),
            ]
        }
        // chi2sf(x, k) = Q(k/2, x/2): ∂/∂x = −½ · density of Γ(k/2) at x/2.
        Chi2SF => {
            let (y, k) = (x(0)?, x(1)?);
            let dens = gamma_density(&scale(&k, 0.5)?, &scale(&y, 0.5)?)?;
            vec![Some(scale(&dens, -0.5)), None]
        }
        // d log(1 − eˣ)/dx = −1 / expm1(−x).
        Log1mexp => vec![Some(b::neg(&b::reciprocal(&b::expm1(&b::neg(&x(0)?)?)?)?))],
        // ∂(x log y) = (log y, x / y); ∂(x log1p y) = (log1p y, x / (1 + y)).
        XLogY => vec![Some(b::log(&x(1)?)), Some(b::true_div(&x(0)?, &x(1)?))],
        XLog1PY => vec![
            Some(b::log1p(&x(1)?)),
            Some(b::true_div(&x(0)?, &shift(&x(1)?, 1.0)?)),
        ],
        // logit' = 1 / (p (1 − p)).
        Logit => {
            let p = x(0)?;
            vec![Some(b::reciprocal(&b::mul(&p, &rsub(1.0, &p)?)?))]
        }
        // (x!)' = x! · ψ(x + 1).
        Factorial => vec![Some(b::mul(z, &sp(Psi, &[shift(&x(0)?, 1.0)?])?))],
        // (z)ₘ = Γ(z + m)/Γ(z): ∂/∂z = (z)ₘ (ψ(z + m) − ψ(z)), ∂/∂m = (z)ₘ ψ(z + m).
        Poch => {
            let (s, m) = (x(0)?, x(1)?);
            let psi_sm = sp(Psi, &[b::add(&s, &m)?])?;
            vec![
                Some(b::mul(z, &b::sub(&psi_sm, &sp(Psi, &[s])?)?)),
                Some(b::mul(z, &psi_sm)),
            ]
        }
    };
    let mut d = d;
    per_input(wanted, |k| match d.get_mut(k).and_then(Option::take) {
        Some(dk) => Ok(Term::Grad(b::elemwise(ScalarOp::Mul, &[g.clone(), dk?])?)),
        None => Ok(Term::Undefined(undefined(f, k))),
    })
}

/// Why the gradient of `f` with respect to its input `k` is not given.
fn undefined(f: SpecialFn, k: usize) -> String {
    let param = f.export().params.get(k).copied().unwrap_or("?");
    if f == SpecialFn::PolyGamma {
        format!(
            "{}: the order {param} is an integer (PyTensor: grad_undefined)",
            f.py_name()
        )
    } else {
        format!(
            "{}: the derivative with respect to {param} is not implemented",
            f.py_name()
        )
    }
}

/// `(a + 1, b + 1, c + 1, x)` from `(a, b, c, x)`.
fn hyp2f1_shifted(args: &[Var; 4]) -> Result<[Var; 4], GraphError> {
    Ok([
        shift(&args[0], 1.0)?,
        shift(&args[1], 1.0)?,
        shift(&args[2], 1.0)?,
        args[3].clone(),
    ])
}

/// `ab/c · h(a + 1, b + 1, c + 1, x)`: with `h` = ₂F₁ the x-derivative of ₂F₁, with `h` one of
/// its parameter derivatives the second term of the x-derivative of that derivative.
fn hyp2f1_slope(h: SpecialFn, args: &[Var; 4]) -> Built {
    let up = b::special(h, &hyp2f1_shifted(args)?)?;
    let coef = b::true_div(&b::mul(&args[0], &args[1])?, &args[2])?;
    b::mul(&coef, &up)
}

/// The density of the Gamma(a) distribution at x: xᵃ⁻¹ e⁻ˣ / Γ(a), as
/// exp((a − 1) log x − x − log Γ(a)).
fn gamma_density(a: &Var, x: &Var) -> Built {
    let log_d = b::sub(
        &b::sub(&b::mul(&shift(a, -1.0)?, &b::log(x)?)?, x)?,
        &b::gammaln(a)?,
    )?;
    b::exp(&log_d)
}

/// d/dp of the inverse of P(a, ·) at p, given the inverse `x`: 1 / density(a, x).
fn inverse_gamma_slope(a: &Var, x: &Var) -> Built {
    b::reciprocal(&gamma_density(a, x)?)
}

/// The density of the Beta(a, b) distribution at x: xᵃ⁻¹ (1 − x)ᵇ⁻¹ / B(a, b), as
/// exp((a − 1) log x + (b − 1) log1p(−x) − betaln(a, b)).
fn beta_density(a: &Var, c: &Var, x: &Var) -> Built {
    let t1 = b::mul(&shift(a, -1.0)?, &b::log(x)?)?;
    let t2 = b::mul(&shift(c, -1.0)?, &b::log1p(&b::neg(x)?)?)?;
    let ln_b = b::special(SpecialFn::BetaLn, &[a.clone(), c.clone()])?;
    b::exp(&b::sub(&b::add(&t1, &t2)?, &ln_b)?)
}
