//! Bessel functions of the first kind: `jv` of real order and `j0`, `j1`.
//!
//! Algorithm, all in double-double so the results keep their relative accuracy close to the
//! zeros of J (where an f64 evaluation of the same formulas loses it):
//! * the power series `J_v(x) = (x/2)^v Σ_k (-x²/4)^k / (k! Γ(v+k+1))` whenever its cancellation
//!   (largest term over the sum) stays below 1e15, which always holds for x <= 25;
//! * for x > 25, Hankel's expansion `J_v(x) = √(2/(πx)) (P cos χ - Q sin χ)`,
//!   `χ = x - (v/2 + 1/4)π`, when its terms fall to 1e-17 before growing, with the angle reduced
//!   modulo π/2 in double-double (x <= 1e15; beyond, f64 sin/cos of x and the angle-addition
//!   formula);
//! * otherwise (x > 25, order comparable to x or larger, v >= 0): Hankel at the orders
//!   `μ = frac(v)` and `μ + 1`, forward recurrence `J_{k+1} = (2k/x) J_k - J_{k-1}` (stable up to
//!   order x), then, past order x, the ratios `J_k / J_{k-1}` from the backward continued
//!   fraction (stable there) multiplied on.

use crate::dd::DD;
use crate::gamma::lgamma_dd;

/// π/2 in double-double.
const HALF_PI: DD = DD {
    hi: core::f64::consts::FRAC_PI_2,
    lo: 6.123233995736766e-17,
};

/// The series region's tolerated cancellation (largest term / result).
const MAX_SERIES_LOSS: f64 = 1e15;

/// The power series, or `None` when it cancels by more than [`MAX_SERIES_LOSS`].
fn series(v: f64, x: f64) -> Option<DD> {
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
    if biggest > MAX_SERIES_LOSS * sum.hi.abs() {
        return None;
    }
    let (lg, sg) = lgamma_dd(DD::sum(v, 1.0));
    let front = (DD::new(0.5 * x).ln() * v - lg).exp() * sg;
    Some(front * sum)
}

/// Hankel's `(P, Q)` sums, or `None` when they do not reach 1e-17 before diverging. The sum
/// runs on, while the terms still fall, to 1e-33: near a zero of J the two parts cancel and the
/// extra digits are what keeps the small result's relative accuracy.
fn hankel_pq(v: f64, x: f64) -> Option<(DD, DD)> {
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
            return if prev < 1e-17 { Some((p, q)) } else { None };
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
    if prev < 1e-17 { Some((p, q)) } else { None }
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

/// J_v(x) by Hankel's expansion, when it converges.
fn hankel(v: f64, x: f64) -> Option<DD> {
    let (p, q) = hankel_pq(v, x)?;
    let (c, s) = hankel_angle(v, x);
    let amp = (DD::new(2.0) / (DD::PI * x)).sqrt_dd();
    Some(amp * (p * c - q * s))
}

/// J_v(x) for v >= 0, x > 25 from Hankel at low order plus recurrences.
fn recurrence(v: f64, x: f64) -> Option<DD> {
    let n = v.floor();
    let mu = v - n;
    let mut prev = hankel(mu, x)?;
    if n == 0.0 {
        return Some(prev);
    }
    let mut cur = hankel(mu + 1.0, x)?;
    // Forward while the order stays below x.
    let forward_to = n.min(x.floor());
    let mut k = 1.0;
    while k < forward_to {
        let next = cur * (DD::new(2.0 * (mu + k)) / x) - prev;
        prev = cur;
        cur = next;
        k += 1.0;
    }
    if k >= n {
        return Some(cur);
    }
    // Ratios r_j = J_{μ+j} / J_{μ+j-1} for j = k+1..n, from the backward continued fraction.
    let top = (n + 100.0 + x).floor();
    let mut r = DD::ZERO;
    let mut j = top;
    let mut product = DD::ONE;
    while j > k {
        r = (DD::new(2.0 * (mu + j)) / x - r).recip();
        if j <= n {
            product = product * r;
        }
        j -= 1.0;
    }
    Some(cur * product)
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
        return 0.0;
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
    let value = if x <= 25.0 {
        series(v, x)
    } else {
        hankel(v, x)
            .or_else(|| series(v, x))
            .or_else(|| if v >= 0.0 { recurrence(v, x) } else { None })
    };
    value.map_or_else(|| series_unchecked(v, x), DD::to_f64)
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
