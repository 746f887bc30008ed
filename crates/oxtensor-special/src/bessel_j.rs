//! Bessel functions of the first kind: `jv` of real order and `j0`, `j1`.
//!
//! Algorithm, all in double-double so the results keep their relative accuracy next to the
//! zeros of J (where an f64 evaluation of the same formulas loses it), tried in this order:
//! * Hankel's expansion `J_v(x) = √(2/(πx)) (P cos χ - Q sin χ)`, `χ = x - (v/2 + 1/4)π`, when its
//!   terms fall to 1e-33 before growing (large x, v² ≲ x), with the angle reduced modulo π/2 in
//!   double-double (x <= 1e15; beyond, f64 sin/cos of x and the angle-addition formula);
//! * the power series `J_v(x) = (x/2)^v Σ_k (-x²/4)^k / (k! Γ(v+k+1))` when it cancels by less
//!   than 1e6 (small x, or order well above x);
//! * for v >= 0, Miller's backward recurrence from order `v + x + 60`, normalised by Neumann's
//!   identity `(x/2)^v / Γ(v+1) = Σ_k (v+2k) Γ(v+k)/(Γ(v+1) k!) J_{v+2k}(x)`; its cost grows
//!   like x, so it is used up to x = 1e7 (beyond, with v² > x, the result is NaN: not covered);
//! * negative non-integer orders where neither of the first two applies: Hankel to 1e-17, or the
//!   series tolerating more cancellation (the least accurate region).

use crate::dd::DD;
use crate::gamma::lgamma_dd;

/// π/2 in double-double.
const HALF_PI: DD = DD {
    hi: core::f64::consts::FRAC_PI_2,
    lo: 6.123233995736766e-17,
};

/// The series region's tolerated cancellation (largest term / result).
const MAX_SERIES_LOSS: f64 = 1e15;

/// The power series, or `None` when it cancels by more than `max_loss` (largest term / sum).
fn series(v: f64, x: f64, max_loss: f64) -> Option<DD> {
    let q = -(DD::prod(x, x) * 0.25);
    let mut t = DD::ONE;
    let mut sum = DD::ONE;
    let mut biggest = 1.0f64;
    let mut k = 1.0;
    loop {
        t = t * q / (DD::sum(k, v) * k);
        sum = sum + t;
        biggest = biggest.max(t.hi.abs());
        if t.hi.abs() < 1e-33 * biggest && k + v > 0.0 {
            break;
        }
        if k > 1e5 {
            return None;
        }
        k += 1.0;
    }
    if biggest > max_loss * sum.hi.abs() {
        return None;
    }
    let (lg, sg) = lgamma_dd(DD::sum(v, 1.0));
    let front = (DD::new(0.5 * x).ln() * v - lg).exp() * sg;
    Some(front * sum)
}

/// Hankel's `(P, Q)` sums, or `None` when their terms do not reach `tol` before diverging. The
/// sum runs on, while the terms still fall, to 1e-33: near a zero of J the two parts cancel and
/// the extra digits are what keeps the small result's relative accuracy.
fn hankel_pq(v: f64, x: f64, tol: f64) -> Option<(DD, DD)> {
    let mu = DD::prod(2.0 * v, 2.0 * v);
    let mut t = DD::ONE;
    let (mut p, mut q) = (DD::ONE, DD::ZERO);
    let mut prev = f64::INFINITY;
    for k in 1..1000 {
        let odd = (2 * k - 1) as f64;
        let next = t * (mu - odd * odd) / DD::prod(8.0 * k as f64, x);
        let size = next.hi.abs();
        if size > prev {
            // Asymptotic series: stop at the smallest term if it is small enough.
            return if prev < tol { Some((p, q)) } else { None };
        }
        t = next;
        // t_k enters P (even k) or Q (odd k) with sign (-1)^(k/2) resp. (-1)^((k-1)/2).
        match k % 4 {
            0 => p = p + t,
            1 => q = q + t,
            2 => p = p - t,
            _ => q = q - t,
        }
        if size < 1e-33 {
            return Some((p, q));
        }
        prev = size;
    }
    if prev < tol { Some((p, q)) } else { None }
}

/// `(cos χ, sin χ)` for `χ = x - (v/2 + 1/4) π`.
fn hankel_angle(v: f64, x: f64) -> (DD, DD) {
    let phase = (DD::new(v) * 0.5 + 0.25) * DD::PI;
    if x <= 1e15 {
        let chi = DD::new(x) - phase;
        let k = (chi.hi / HALF_PI.hi).round();
        let r = chi - HALF_PI * k;
        let (c, s) = (r.cos_small(), r.sin_small());
        return match (k as i64).rem_euclid(4) {
            0 => (c, s),
            1 => (-s, c),
            2 => (-c, -s),
            _ => (s, -c),
        };
    }
    let (sx, cx) = (libm::sin(x), libm::cos(x));
    let (cp, sp) = (libm::cos(phase.hi), libm::sin(phase.hi));
    (DD::new(cx * cp + sx * sp), DD::new(sx * cp - cx * sp))
}

/// J_v(x) by Hankel's expansion, when its terms reach `tol`.
fn hankel(v: f64, x: f64, tol: f64) -> Option<DD> {
    let (p, q) = hankel_pq(v, x, tol)?;
    let (c, s) = hankel_angle(v, x);
    let amp = (DD::new(2.0) / (DD::PI * x)).sqrt_dd();
    Some(amp * (p * c - q * s))
}

/// J_v(x) for v >= 0 by Miller's backward recurrence, normalised with Neumann's identity
/// `(x/2)^v / Γ(v+1) = Σ_k d_k J_{v+2k}(x)`, `d_0 = 1`, `d_k = (v+2k) (v+1)...(v+k-1) / k!`.
///
/// The recurrence `f_{j-1} = (2(v+j)/x) f_j - f_{j+1}` runs down from order `v + M`,
/// `M >= x + 60` (where J has fallen below 1e-33 of its size at order v); J is its minimal
/// solution, so the backward direction is stable and in double-double leaves ~1e-32 absolute
/// error: enough for full relative accuracy next to a zero, where the series cancels.
fn miller(v: f64, x: f64) -> DD {
    let m = 2.0 * ((x + 60.0) / 2.0).ceil();
    let kmax = (m / 2.0) as usize;
    let mut d = Vec::with_capacity(kmax + 1);
    d.push(DD::ONE);
    let mut p = DD::ONE;
    for k in 1..=kmax {
        if k > 1 {
            p = p * DD::sum(v, (k - 1) as f64) / k as f64;
        }
        d.push(DD::sum(v, 2.0 * k as f64) * p);
    }
    let mut f_next = DD::ZERO;
    let mut f = DD::ONE;
    let mut sum = DD::ZERO;
    let mut j = kmax * 2;
    loop {
        if j.is_multiple_of(2) {
            sum = sum + d[j / 2] * f;
        }
        if j == 0 {
            break;
        }
        let f_prev = DD::sum(v, j as f64) * 2.0 / x * f - f_next;
        f_next = f;
        f = f_prev;
        j -= 1;
        if f.hi.abs() > 1e250 {
            f = f * 1e-250;
            f_next = f_next * 1e-250;
            sum = sum * 1e-250;
        }
    }
    let (lg, _) = lgamma_dd(DD::sum(v, 1.0));
    let front = (DD::new(0.5 * x).ln() * v - lg).exp();
    front * f / sum
}

/// The Bessel function of the first kind `J_v(x)` of real order (SciPy `jv`): NaN for x < 0
/// unless v is an integer (`J_n(-x) = (-1)^n J_n(x)`), NaN at x = ±inf and 0 for infinite order
/// (SciPy's conventions).
pub fn jv(v: f64, x: f64) -> f64 {
    if v.is_nan() || x.is_nan() {
        return f64::NAN;
    }
    let v_int = v == v.floor();
    if x < 0.0 {
        if !v_int {
            return f64::NAN;
        }
        let r = jv(v, -x);
        return if v.abs() % 2.0 == 1.0 { -r } else { r };
    }
    if x.is_infinite() {
        return f64::NAN;
    }
    if v.is_infinite() {
        // SciPy: 0 for +inf, NaN for -inf.
        return if v > 0.0 { 0.0 } else { f64::NAN };
    }
    if v_int && v < 0.0 {
        let r = jv(-v, x);
        return if v.abs() % 2.0 == 1.0 { -r } else { r };
    }
    if x == 0.0 {
        return if v == 0.0 {
            1.0
        } else if v > 0.0 {
            0.0
        } else {
            f64::INFINITY
        };
    }
    // Hankel where it converges to double-double precision, the series where it cancels little,
    // Miller's recurrence otherwise; negative non-integer orders have no Miller path and accept
    // a looser Hankel or a more cancelling series.
    let value = hankel(v, x, 1e-33)
        .or_else(|| series(v, x, 1e6))
        .or_else(|| (v >= 0.0 && x <= 1e7).then(|| miller(v, x)))
        .or_else(|| hankel(v, x, 1e-17))
        .or_else(|| series(v, x, MAX_SERIES_LOSS));
    match value {
        Some(v) => v.to_f64(),
        // Order and argument both beyond the reach of every method here (x > 1e7 with
        // v² > x, or a large negative non-integer order): not covered.
        None if x > 1e7 => f64::NAN,
        None => series_unchecked(v, x),
    }
}

/// The power series without the cancellation check: the last resort for negative non-integer
/// orders comparable to a large x (documented as the least accurate region).
fn series_unchecked(v: f64, x: f64) -> f64 {
    let q = -(DD::prod(x, x) * 0.25);
    let mut t = DD::ONE;
    let mut sum = DD::ONE;
    let mut k = 1.0;
    while (t.hi.abs() > 1e-33 * sum.hi.abs() || k + v <= 0.0) && k < 1e5 {
        t = t * q / (DD::sum(k, v) * k);
        sum = sum + t;
        k += 1.0;
    }
    let (lg, sg) = lgamma_dd(DD::sum(v, 1.0));
    ((DD::new(0.5 * x).ln() * v - lg).exp() * sg * sum).to_f64()
}

/// `J_0(x)` (SciPy `j0`).
pub fn j0(x: f64) -> f64 {
    jv(0.0, x)
}

/// `J_1(x)` (SciPy `j1`).
pub fn j1(x: f64) -> f64 {
    jv(1.0, x)
}
