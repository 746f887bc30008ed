//! `betainc_da(a, b, x)` = ∂I_x(a, b)/∂a and `betainc_db(a, b, x)` = ∂I_x(a, b)/∂b, the
//! derivatives of the regularized incomplete beta function with respect to its shape parameters:
//! what the gradients of `betainc` (and of the beta and binomial CDFs built on it) need.
//! PyTensor computes the same quantities (`betainc_grad`) with Boik & Robison-Cox's (1998)
//! hand-derived derivatives of the continued fraction's coefficients, summed in f64 to a 1e-12
//! relative change over at most 200 terms (NaN when that is not reached).
//!
//! Algorithm: forward-mode differentiation, on dual numbers in double-double ([`Dual`]), of the
//! expansion `betainc` itself uses (`incbeta`): on the side `x <= (a+1)/(a+b+2)` (else through
//! the symmetry `I_x(a, b) = 1 − I_{1−x}(b, a)`, which negates the derivative and swaps the
//! parameters),
//!
//! `I = F · h`, `F = xᵃ (1−x)ᵇ / (a B(a, b))`, `h` = Numerical Recipes' continued fraction
//! (modified Lentz),
//!
//! so `∂I/∂θ = I · (∂ ln F/∂θ + (∂h/∂θ)/h)` with
//! `∂ ln F/∂a = ln x − ψ(a) + ψ(a+b) − 1/a`, `∂ ln F/∂b = ln(1−x) − ψ(b) + ψ(a+b)`.
//! The derivative of `h` comes from the same Lentz recursion on dual numbers (each coefficient
//! a dual in the differentiated parameter), run until both the value and the derivative have
//! converged (at most 10⁶ terms, which covers parameters to ~10¹¹; beyond, or when a step
//! degenerates, NaN). Because the smaller tail is differentiated, a derivative near x = 0 or
//! x = 1 keeps its relative accuracy even where `I` itself rounds to 0 or 1.
//!
//! Domain: `a, b > 0` finite and `0 <= x <= 1`; the derivative is 0 at x = 0 and x = 1 (I is
//! 0 or 1 there for every shape); NaN elsewhere (including a = 0 or b = 0, where only a
//! one-sided derivative exists, and infinite parameters).

use crate::beta::lbeta_dd;
use crate::dd::DD;
use crate::dual::Dual;
use crate::psi::digamma_dd;

/// Where Lentz's method replaces a zero denominator.
const TINY: f64 = 1e-300;
/// The most terms the continued fraction may take (it needs O(√max(a, b))).
const MAX_TERMS: f64 = 1e6;

/// `(h, ∂h)` of the continued fraction `1/(1+ d₁/(1+ d₂/(1+ ...)))` of `incbeta`, with the
/// derivative along the direction `(seed_a, seed_b)` of the parameters. `None` when it does not
/// converge within [`MAX_TERMS`].
fn continued_fraction(a: f64, b: f64, x: DD, seed_a: f64, seed_b: f64) -> Option<Dual> {
    let guard = |v: Dual| {
        if v.v.hi.abs() < TINY {
            Dual::constant(DD::new(TINY))
        } else {
            v
        }
    };
    let one = Dual::constant(DD::ONE);
    let ad = Dual::var(DD::new(a), seed_a);
    let bd = Dual::var(DD::new(b), seed_b);
    let ab = ad + bd;
    let xd = Dual::constant(x);
    let mut c = one;
    let mut d = guard(one - ab * xd / (ad + 1.0)).recip();
    let mut h = d;
    let mut m = 1.0;
    while m < MAX_TERMS {
        let m2 = 2.0 * m;
        // Even step d_{2m} = m (b − m) x / ((a + 2m − 1)(a + 2m)).
        let num = xd * (bd + -m) * m / ((ad + (m2 - 1.0)) * (ad + m2));
        d = guard(one + num * d).recip();
        c = guard(one + num / c);
        h = h * d * c;
        // Odd step d_{2m+1} = −(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
        let num = -(xd * (ad + m) * (ab + m)) / ((ad + m2) * (ad + (m2 + 1.0)));
        d = guard(one + num * d).recip();
        c = guard(one + num / c);
        let del = d * c;
        h = h * del;
        let log_slope = (h.d / h.v).hi.abs();
        if (del.v - 1.0).hi.abs() < 1e-30 && del.d.hi.abs() <= 1e-24 * log_slope.max(1e-290) {
            return Some(h);
        }
        m += 1.0;
    }
    None
}

/// ∂I_x(a, b)/∂a (`wrt_a`) or ∂I_x(a, b)/∂b; see the module documentation.
fn derivative(a: f64, b: f64, x: f64, wrt_a: bool) -> f64 {
    let finite_shapes = a.is_finite() && b.is_finite() && a > 0.0 && b > 0.0;
    if !finite_shapes || x.is_nan() || !(0.0..=1.0).contains(&x) {
        return f64::NAN;
    }
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let y = DD::sum(1.0, -x);
    let swap = x > (a + 1.0) / (a + b + 2.0);
    let (pa, pb, px, py) = if swap {
        (b, a, y, DD::new(x))
    } else {
        (a, b, DD::new(x), y)
    };
    // Which parameter of the evaluated side is differentiated.
    let wrt_first = wrt_a != swap;
    let (ln_px, ln_py) = (px.ln(), py.ln());
    let ln_front = ln_px * pa + ln_py * pb - lbeta_dd(pa, pb).0;
    let (seed_a, seed_b) = if wrt_first { (1.0, 0.0) } else { (0.0, 1.0) };
    let Some(h) = continued_fraction(pa, pb, px, seed_a, seed_b) else {
        return f64::NAN;
    };
    let part = ln_front.exp() * h.v / pa;
    if part.hi == 0.0 {
        return 0.0;
    }
    let psi_sum = digamma_dd(DD::sum(pa, pb));
    let d_ln_front = if wrt_first {
        ln_px - digamma_dd(DD::new(pa)) + psi_sum - DD::new(pa).recip()
    } else {
        ln_py - digamma_dd(DD::new(pb)) + psi_sum
    };
    let d_part = part * (d_ln_front + h.d / h.v);
    let r = d_part.to_f64();
    if swap { -r } else { r }
}

/// ∂I_x(a, b)/∂a: the derivative of the regularized incomplete beta function with respect to
/// its first shape (negative: more mass moves towards 1). NaN outside `a, b > 0` finite,
/// `0 <= x <= 1`; 0 at x = 0 and x = 1.
pub fn betainc_da(a: f64, b: f64, x: f64) -> f64 {
    derivative(a, b, x, true)
}

/// ∂I_x(a, b)/∂b: the derivative of the regularized incomplete beta function with respect to
/// its second shape (positive). NaN outside `a, b > 0` finite, `0 <= x <= 1`; 0 at x = 0 and
/// x = 1.
pub fn betainc_db(a: f64, b: f64, x: f64) -> f64 {
    derivative(a, b, x, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::betainc;

    /// A fourth-order central difference of whichever tail of I is the smaller (so the
    /// differences do not cancel against 1), signed as the derivative of I.
    fn numeric(a: f64, b: f64, x: f64, wrt_a: bool) -> f64 {
        let upper = betainc(a, b, x) > 0.5;
        let p = |t: f64| {
            let (aa, bb) = if wrt_a { (a + t, b) } else { (a, b + t) };
            if upper {
                -betainc(bb, aa, 1.0 - x)
            } else {
                betainc(aa, bb, x)
            }
        };
        let h = 1e-4 * if wrt_a { a } else { b }.max(0.1);
        (8.0 * (p(h) - p(-h)) - (p(2.0 * h) - p(-2.0 * h))) / (12.0 * h)
    }

    #[test]
    fn agrees_with_finite_differences_on_both_sides_of_the_split() {
        for &a in &[0.3, 1.0, 2.5, 9.0, 60.0] {
            for &b in &[0.4, 1.0, 3.5, 20.0, 150.0] {
                for &x in &[0.01, 0.2, 0.5, 0.7, 0.93] {
                    for wrt_a in [true, false] {
                        let got = if wrt_a {
                            betainc_da(a, b, x)
                        } else {
                            betainc_db(a, b, x)
                        };
                        let want = numeric(a, b, x, wrt_a);
                        assert!(
                            (got - want).abs() <= 1e-7 * want.abs().max(1e-12),
                            "a={a} b={b} x={x} wrt_a={wrt_a}: {got} vs {want}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn signs_and_edges() {
        assert!(betainc_da(2.0, 3.0, 0.4) < 0.0);
        assert!(betainc_db(2.0, 3.0, 0.4) > 0.0);
        assert_eq!(betainc_da(2.0, 3.0, 0.0), 0.0);
        assert_eq!(betainc_db(2.0, 3.0, 1.0), 0.0);
        for (a, b, x) in [
            (0.0, 1.0, 0.5),
            (1.0, -1.0, 0.5),
            (1.0, 1.0, 1.5),
            (f64::INFINITY, 1.0, 0.5),
            (1.0, 1.0, f64::NAN),
        ] {
            assert!(betainc_da(a, b, x).is_nan(), "{a} {b} {x}");
            assert!(betainc_db(a, b, x).is_nan(), "{a} {b} {x}");
        }
        // I_x(a, b) = 1 − I_{1−x}(b, a): the derivatives swap and change sign.
        let (a, b, x) = (2.5, 4.0, 0.25);
        let r = betainc_da(a, b, x) / -betainc_db(b, a, 1.0 - x);
        assert!((r - 1.0).abs() < 1e-13, "{r}");
    }
}
