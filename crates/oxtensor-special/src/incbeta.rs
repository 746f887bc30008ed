//! The regularized incomplete beta function `I_x(a, b)` (`betainc`) and its inverse in x
//! (`betaincinv`).
//!
//! Algorithm: the continued fraction of Numerical Recipes' `betacf`
//! (`I_x(a,b) = x^a (1-x)^b / (a B(a,b)) · 1/(1+ d₁/(1+ d₂/(1+ ...)))`,
//! `d_{2m+1} = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1))`, `d_{2m} = m(b-m) x / ((a+2m-1)(a+2m))`),
//! evaluated by the modified Lentz method in double-double, with the prefactor formed as
//! `exp(a ln x + b ln(1-x) - ln B(a,b))` in double-double (`1 - x` exact). For
//! `x > (a+1)/(a+b+2)` the symmetry `I_x(a,b) = 1 - I_{1-x}(b,a)` keeps the fraction on the side
//! where it converges fast. The inverse takes Newton steps in `ln x` on `ln I` of the smaller
//! tail (so the power-law behaviour near 0 is nearly linear), inside a bisection bracket.

use crate::beta::lbeta_dd;
use crate::dd::DD;

/// The continued fraction `1/(1+ d₁/(1+ d₂/(1+ ...)))` for `I_x(a, b)`, Lentz's method.
fn continued_fraction(a: f64, b: f64, x: DD) -> DD {
    const TINY: f64 = 1e-300;
    let guard = |v: DD| if v.hi.abs() < TINY { DD::new(TINY) } else { v };
    let ab = DD::sum(a, b);
    let mut c = DD::ONE;
    let mut d = guard(DD::ONE - ab * x / DD::sum(a, 1.0)).recip();
    let mut h = d;
    let mut m = 1.0;
    while m < 1e6 {
        let m2 = 2.0 * m;
        // Even step d_{2m}.
        let num = x * DD::sum(b, -m) * m / (DD::sum(a, m2 - 1.0) * DD::sum(a, m2));
        d = guard(DD::ONE + num * d).recip();
        c = guard(DD::ONE + num / c);
        h = h * d * c;
        // Odd step d_{2m+1}.
        let num = -(x * DD::sum(a, m) * (ab + m)) / (DD::sum(a, m2) * DD::sum(a, m2 + 1.0));
        d = guard(DD::ONE + num * d).recip();
        c = guard(DD::ONE + num / c);
        let del = d * c;
        h = h * del;
        if (del - 1.0).hi.abs() < 1e-31 {
            break;
        }
        m += 1.0;
    }
    h
}

/// `I_x(a, b)` (lower) and `1 - I_x(a, b)` (upper) in double-double for `a, b > 0`, `0 < x < 1`.
fn lower_upper(a: f64, b: f64, x: f64) -> (DD, DD) {
    let y = DD::sum(1.0, -x);
    let swap = x > (a + 1.0) / (a + b + 2.0);
    let (pa, pb, px, py) = if swap {
        (b, a, y, DD::new(x))
    } else {
        (a, b, DD::new(x), y)
    };
    let ln_front = px.ln() * pa + py.ln() * pb - lbeta_dd(pa, pb).0;
    let part = ln_front.exp() * continued_fraction(pa, pb, px) / pa;
    if swap {
        (DD::ONE - part, part)
    } else {
        (part, DD::ONE - part)
    }
}

/// The regularized incomplete beta function `I_x(a, b)` (SciPy `betainc`): NaN outside
/// `a, b >= 0`, `0 <= x <= 1`; `I_x(0, b) = 1`, `I_x(a, 0) = 0` (NaN when both are 0), and 0 / 1
/// at x = 0 / 1.
pub fn betainc(a: f64, b: f64, x: f64) -> f64 {
    if a.is_nan() || b.is_nan() || x.is_nan() || a < 0.0 || b < 0.0 || !(0.0..=1.0).contains(&x) {
        return f64::NAN;
    }
    if a == 0.0 && b == 0.0 || a.is_infinite() && b.is_infinite() {
        return f64::NAN;
    }
    // Limits in one infinite parameter: all mass at x = 1 (a = inf) or at x = 0 (b = inf).
    if a.is_infinite() {
        return if x < 1.0 { 0.0 } else { 1.0 };
    }
    if b.is_infinite() {
        return if x > 0.0 { 1.0 } else { 0.0 };
    }
    // SciPy settles the ends of [0, 1] before the zero parameters.
    if x == 0.0 || x == 1.0 {
        return x;
    }
    if a == 0.0 {
        return 1.0;
    }
    if b == 0.0 {
        return 0.0;
    }
    if a == b && x == 0.5 {
        return 0.5;
    }
    lower_upper(a, b, x).0.to_f64()
}

/// Solves `I_x(a, b) = y` for `0 < y <= 1/2`.
fn invert(a: f64, b: f64, y: f64) -> f64 {
    let lnb = lbeta_dd(a, b).0.to_f64();
    // Small-x power law I ≈ x^a / (a B(a, b)), capped at the mean.
    let mean = a / (a + b);
    let ln_x0 = (libm::log(y) + libm::log(a) + lnb) / a;
    if ln_x0 < -746.0 {
        // The root is below the smallest subnormal.
        return 0.0;
    }
    let mut x = libm::exp(ln_x0);
    if !(x > 0.0 && x < mean) {
        x = mean.min(0.5);
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..300 {
        let (lower, _) = lower_upper(a, b, x);
        let v = lower.to_f64();
        let g = if v > 0.0 {
            libm::log1p(((lower - y) / y).to_f64())
        } else {
            f64::NEG_INFINITY
        };
        if g > 0.0 {
            hi = hi.min(x)
        } else {
            lo = lo.max(x)
        }
        if g == 0.0 {
            break;
        }
        // d ln I / d ln x = x pdf(x) / I.
        let ln_pdf = (a - 1.0) * libm::log(x) + (b - 1.0) * libm::log1p(-x) - lnb;
        let slope =
            libm::exp(ln_pdf + libm::log(x) - if v > 0.0 { libm::log(v) } else { libm::log(y) });
        let mut next = x * libm::exp(-g / slope);
        // A step below one part in 1e16 means Newton has converged (the root is bracketed by
        // x itself then, so the bracket test below would wrongly call for bisection).
        if (next - x).abs() <= 1e-16 * x {
            break;
        }
        if !(next > lo && next < hi && next.is_finite()) {
            next = if lo > 0.0 {
                (lo * hi).sqrt().max(0.5 * (lo + hi) * 1e-3)
            } else {
                0.5 * hi.min(x)
            };
            if lo > 0.0 && hi / lo < 4.0 {
                next = 0.5 * (lo + hi);
            }
        }
        let done = (next - x).abs() <= 1e-16 * x;
        x = next;
        if done || hi - lo <= 2e-16 * x {
            break;
        }
    }
    x
}

/// The inverse of [`betainc`] in x: the x with `I_x(a, b) = y` (SciPy `betaincinv`); 0 at y = 0,
/// 1 at y = 1, NaN outside [0, 1] or for a, b <= 0.
pub fn betaincinv(a: f64, b: f64, y: f64) -> f64 {
    if a.is_nan() || b.is_nan() || y.is_nan() || a <= 0.0 || b <= 0.0 || !(0.0..=1.0).contains(&y) {
        return f64::NAN;
    }
    if y == 0.0 || y == 1.0 {
        return y;
    }
    if a.is_infinite() {
        return f64::NAN;
    }
    if b.is_infinite() {
        // I_x(a, inf) = 1 for every x > 0.
        return 0.0;
    }
    if a == b && y == 0.5 {
        return 0.5;
    }
    if y <= 0.5 {
        return invert(a, b, y);
    }
    // Solve the upper tail in the mirrored variable 1 - x, then polish in x itself: the
    // subtraction 1 - x' would otherwise cost ulps when the answer is well below 1.
    let q = 1.0 - y;
    let mut x = 1.0 - invert(b, a, q);
    let lnb = lbeta_dd(a, b).0.to_f64();
    for _ in 0..3 {
        if !(x > 0.0 && x < 1.0) {
            break;
        }
        let upper = lower_upper(a, b, x).1;
        let v = upper.to_f64();
        if v <= 0.0 {
            break;
        }
        let g = libm::log1p(((upper - q) / q).to_f64());
        let ln_pdf = (a - 1.0) * libm::log(x) + (b - 1.0) * libm::log1p(-x) - lnb;
        let step = g / libm::exp(ln_pdf - libm::log(v));
        if step == 0.0 || !step.is_finite() {
            break;
        }
        x += step;
    }
    x
}
