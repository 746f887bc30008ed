//! The beta function `B(a, b) = Γ(a) Γ(b) / Γ(a + b)` and its logarithm.
//!
//! Algorithm: the three log-gammas in double-double (`a + b` formed exactly), summed and
//! exponentiated once; when the larger argument is at least 12 the difference
//! `ln Γ(max + min) - ln Γ(max)` comes from the cancellation-free Stirling difference
//! [`crate::gamma`]'s `lgamma_diff`, so `B(1e300, 0.5)` keeps full accuracy. Poles follow SciPy:
//! a non-positive integer argument gives ±inf, unless the other argument is an integer that makes
//! the limit finite (`B(-n, m) = (-1)^m B(1 + n - m, m)` for `1 + n - m > 0`); a pole of
//! `Γ(a + b)` alone gives 0.

use crate::dd::DD;
use crate::gamma::{is_nonpos_int, lgamma_dd, lgamma_diff};

/// `ln |B(a, b)|` in double-double and the sign of B, for finite arguments that are not poles.
pub(crate) fn lbeta_dd(a: f64, b: f64) -> (DD, f64) {
    let (big, small) = if a >= b { (a, b) } else { (b, a) };
    if small > 0.0 && big >= 12.0 {
        let (lg, _) = lgamma_dd(DD::new(small));
        return (lg - lgamma_diff(DD::new(big), DD::new(small)), 1.0);
    }
    let ab = DD::sum(a, b);
    let (la, sa) = lgamma_dd(DD::new(a));
    let (lb, sb) = lgamma_dd(DD::new(b));
    let (lab, sab) = lgamma_dd(ab);
    (la + lb - lab, sa * sb * sab)
}

/// What the pole cases of B give, if any: `Some(value)` for a non-positive integer argument or a
/// pole of `Γ(a + b)`, `None` for the regular case. `log` selects `ln |B|` semantics.
fn pole_case(a: f64, b: f64, log: bool) -> Option<f64> {
    for (p, q) in [(a, b), (b, a)] {
        if is_nonpos_int(p) {
            if q == q.floor() && 1.0 - p - q > 0.0 {
                let sign = if (q as i64).rem_euclid(2) == 0 {
                    1.0
                } else {
                    -1.0
                };
                return Some(if log {
                    betaln(1.0 - p - q, q)
                } else {
                    sign * beta(1.0 - p - q, q)
                });
            }
            return Some(f64::INFINITY);
        }
    }
    let ab = DD::sum(a, b);
    if ab.lo == 0.0 && is_nonpos_int(ab.hi) {
        return Some(if log { f64::NEG_INFINITY } else { 0.0 });
    }
    None
}

/// The beta function `B(a, b) = Γ(a) Γ(b) / Γ(a + b)` (SciPy `beta`), real arguments.
pub fn beta(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a.is_infinite() || b.is_infinite() {
        let other = if a.is_infinite() { b } else { a };
        return if a > 0.0 && b > 0.0 || other > 0.0 && (a > 0.0 || b > 0.0) {
            0.0
        } else {
            f64::NAN
        };
    }
    if let Some(v) = pole_case(a, b, false) {
        return v;
    }
    let (l, sign) = lbeta_dd(a, b);
    sign * l.exp().to_f64()
}

/// `ln |B(a, b)|` (SciPy `betaln`), accurate also where B itself over- or underflows.
pub fn betaln(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a.is_infinite() || b.is_infinite() {
        return if a > 0.0 && b > 0.0 {
            f64::NEG_INFINITY
        } else {
            f64::NAN
        };
    }
    if let Some(v) = pole_case(a, b, true) {
        return v;
    }
    if a == 1.0 {
        return -libm::log(b.abs());
    }
    if b == 1.0 {
        return -libm::log(a.abs());
    }
    lbeta_dd(a, b).0.to_f64()
}
