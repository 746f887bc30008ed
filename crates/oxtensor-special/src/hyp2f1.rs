//! The Gauss hypergeometric function `₂F₁(a, b; c; x)` for real arguments and x <= 1.
//!
//! Coverage and algorithm (sums in double-double):
//! * polynomial cases (a or b a non-positive integer, reached before any pole of c): the finite
//!   sum, for every real x;
//! * `|x| <= 1/2` and `1/2 < x <= 9/10`: the defining series `Σ (a)_k (b)_k / ((c)_k k!) x^k`;
//! * `9/10 < x < 1`: the `1 - x` connection formula (A&S 15.3.6) when `c - a - b` is not an
//!   integer; the defining series otherwise (slow but convergent, losing accuracy as x → 1);
//! * `x < -1/2`: Pfaff's transformation `(1-x)^-a ₂F₁(a, c-b; c; x/(x-1))`, whose argument lies
//!   in (1/3, 1), then the cases above (for x < -9 that is the `1/(1-x)` connection; when b - a
//!   is an integer the series in x/(x-1) again);
//! * `x = 1`: Gauss's sum `Γ(c) Γ(c-a-b) / (Γ(c-a) Γ(c-b))` for c - a - b > 0, otherwise ±inf
//!   with the sign of the divergent term;
//! * `x > 1` (non-polynomial; the value is complex): inf, as SciPy returns; c a non-positive
//!   integer (no terminating numerator first): inf; an infinite parameter: NaN.
//!
//! Not covered to full accuracy: near-integer `c - a - b` (or `b - a` for x < -9), where the two
//! terms of the connection formula cancel, and x within ~1e-3 of 1 in the integer case.

use crate::dd::DD;
use crate::gamma::{is_nonpos_int, lgamma_dd};

/// The defining series, summed until the terms fall below 1e-33 of the sum (or `n_max` terms).
fn series(a: DD, b: DD, c: DD, x: DD, n_max: f64) -> DD {
    let mut t = DD::ONE;
    let mut sum = DD::ONE;
    let mut k = 0.0;
    while k < n_max {
        t = t * (a + k) * (b + k) / ((c + k) * (k + 1.0)) * x;
        sum = sum + t;
        k += 1.0;
        if t.hi == 0.0 || (t.hi.abs() < 1e-33 * sum.hi.abs() && k > a.hi.abs().max(b.hi.abs())) {
            break;
        }
    }
    sum
}

/// `Π Γ(num) / Π Γ(den)` with signs; a pole in the denominator gives 0.
fn gamma_ratio(num: &[DD], den: &[DD]) -> DD {
    let mut ln = DD::ZERO;
    let mut sign = 1.0;
    for &z in den {
        if z.lo == 0.0 && is_nonpos_int(z.hi) {
            return DD::ZERO;
        }
        let (l, s) = lgamma_dd(z);
        ln = ln - l;
        sign *= s;
    }
    for &z in num {
        if z.lo == 0.0 && is_nonpos_int(z.hi) {
            return DD::new(f64::INFINITY);
        }
        let (l, s) = lgamma_dd(z);
        ln = ln + l;
        sign *= s;
    }
    ln.exp() * sign
}

/// True when `v` is within rounding of an integer.
fn near_integer(v: DD) -> bool {
    (v.hi - v.hi.round()).abs() < 1e-9
}

/// ₂F₁ for `0 <= x < 1` (the non-polynomial, non-pole cases), given x and `y = 1 - x` both in
/// double-double (after Pfaff's map, y = 1/(1-x₀) is known more precisely than 1 - w).
fn unit_interval(a: DD, b: DD, c: DD, x: DD, y: DD) -> DD {
    let s = c - a - b;
    if x.hi <= 0.9 || near_integer(s) {
        return series(a, b, c, x, 1e6);
    }
    let first = gamma_ratio(&[c, s], &[c - a, c - b]);
    let second = gamma_ratio(&[c, -s], &[a, b]);
    let f1 = series(a, b, DD::ONE - s, y, 1e6);
    let f2 = series(c - a, c - b, DD::ONE + s, y, 1e6);
    let pow = (y.ln() * s).exp();
    first * f1 + second * pow * f2
}

/// The Gauss hypergeometric function `₂F₁(a, b; c; x)` (SciPy `hyp2f1`) for real arguments;
/// see the module documentation for the covered region.
pub fn hyp2f1(a: f64, b: f64, c: f64, x: f64) -> f64 {
    // As in SciPy, a zero numerator parameter or x = 0 gives 1 whatever the others are.
    if x == 0.0 || a == 0.0 || b == 0.0 {
        return 1.0;
    }
    if a.is_nan() || b.is_nan() || c.is_nan() || x.is_nan() {
        return f64::NAN;
    }
    if a.is_infinite() || b.is_infinite() || c.is_infinite() {
        return f64::NAN;
    }
    // Terminating numerator: a finite sum, valid for every x.
    let terminating = [a, b]
        .into_iter()
        .filter(|&p| is_nonpos_int(p))
        .map(|p| -p)
        .fold(f64::INFINITY, f64::min);
    // (Degrees beyond 1e6 are left to the general path, which caps its work.)
    if terminating <= 1e6 && (!is_nonpos_int(c) || terminating < -c) {
        return series(
            DD::new(a),
            DD::new(b),
            DD::new(c),
            DD::new(x),
            terminating + 1.0,
        )
        .to_f64();
    }
    if is_nonpos_int(c) {
        return f64::INFINITY;
    }
    if x > 1.0 || x.is_infinite() {
        return if x.is_infinite() && x < 0.0 {
            f64::NAN
        } else {
            f64::INFINITY
        };
    }
    if x == 1.0 {
        let s = DD::sum(c, -a) - b;
        if s.hi <= 0.0 {
            // Divergent: F ~ Γ(c)Γ(-s)/(Γ(a)Γ(b)) (1-x)^s (a log for s = 0), so the sign is
            // that of the gamma ratio.
            let cd = DD::new(c);
            let ratio = if s.hi < 0.0 {
                gamma_ratio(&[cd, -s], &[DD::new(a), DD::new(b)])
            } else {
                gamma_ratio(&[cd], &[DD::new(a), DD::new(b)])
            };
            return if ratio.hi < 0.0 {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
        }
        let cd = DD::new(c);
        return gamma_ratio(&[cd, s], &[cd - a, cd - b]).to_f64();
    }
    if x >= -0.5 {
        if x <= 0.5 {
            return series(DD::new(a), DD::new(b), DD::new(c), DD::new(x), 1e6).to_f64();
        }
        return unit_interval(
            DD::new(a),
            DD::new(b),
            DD::new(c),
            DD::new(x),
            DD::sum(1.0, -x),
        )
        .to_f64();
    }
    // Pfaff: (1-x)^-a F(a, c-b; c; x/(x-1)), the argument in (1/3, 1).
    let one_minus_x = DD::sum(1.0, -x);
    let w = -(DD::new(x) / one_minus_x);
    let front = (-(one_minus_x.ln() * a)).exp();
    // c - b exactly, so the transformed parameters carry no rounding.
    let (ad, cd, cb) = (DD::new(a), DD::new(c), DD::sum(c, -b));
    let inner = if w.hi <= 0.5 {
        series(ad, cb, cd, w, 1e6)
    } else {
        unit_interval(ad, cb, cd, w, one_minus_x.recip())
    };
    (front * inner).to_f64()
}
