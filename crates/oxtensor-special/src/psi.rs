//! The digamma function and its derivatives: `digamma`, `trigamma`, `polygamma`.
//!
//! Algorithm (digamma): positive `x` are shifted up to `z >= 10` with
//! `ψ(x) = ψ(x + n) - Σ 1/(x + k)`, the sum in double-double, then the asymptotic series
//! `ψ(z) = ln z - 1/(2z) - Σ B_2k / (2k z^2k)`; negative `x` use the reflection
//! `ψ(x) = ψ(1 - x) - π cos(πx) / sin(πx)` with exact argument reduction. Within 1/256 of the
//! positive root x₀ = 1.46163... a Taylor series in `x - x₀` (x₀ in double-double, coefficients
//! ψ^(k)(x₀)/k! from mpmath) keeps the relative accuracy that an absolute error bound would lose.
//!
//! Algorithm (polygamma, n >= 1): `ψ^(n)(x) = (-1)^(n+1) n! Σ_k (x + k)^-(n+1)`: the first terms
//! summed directly until `x + N >= n + 10`, the rest by the asymptotic (Euler–Maclaurin)
//! series `(n-1)!/z^n + n!/(2 z^(n+1)) + Σ_j B_2j (2j+n-1)! / ((2j)! z^(2j+n))`; every term is
//! formed as `exp(ln n! - (n+1) ln|x+k|)` in double-double so neither `n!` nor the powers
//! overflow before the result does.

use crate::dd::DD;
use crate::gamma::{is_nonpos_int, lgamma_dd};

/// `B_2k / (2k)`, k = 1..15: the coefficients of digamma's asymptotic series.
const PSI_ASYMP: [f64; 15] = [
    1.0 / 12.0,
    -1.0 / 120.0,
    1.0 / 252.0,
    -1.0 / 240.0,
    1.0 / 132.0,
    -691.0 / 32760.0,
    1.0 / 12.0,
    -3617.0 / 8160.0,
    43867.0 / 14364.0,
    -174611.0 / 6600.0,
    77683.0 / 276.0,
    -236364091.0 / 65520.0,
    657931.0 / 12.0,
    -3392780147.0 / 3480.0,
    1723168255201.0 / 85932.0,
];

/// Bernoulli numbers B_2k, k = 1..15.
const BERNOULLI: [f64; 15] = [
    1.0 / 6.0,
    -1.0 / 30.0,
    1.0 / 42.0,
    -1.0 / 30.0,
    5.0 / 66.0,
    -691.0 / 2730.0,
    7.0 / 6.0,
    -3617.0 / 510.0,
    43867.0 / 798.0,
    -174611.0 / 330.0,
    854513.0 / 138.0,
    -236364091.0 / 2730.0,
    8553103.0 / 6.0,
    -23749461029.0 / 870.0,
    8615841276005.0 / 14322.0,
];

/// The positive root of ψ in double-double.
const ROOT: DD = DD {
    hi: 1.4616321449683622,
    lo: 9.549995429965697e-17,
};

/// ψ^(k)(x₀) / k! for k = 1..7 at the positive root x₀ (mpmath, 50 digits, rounded).
const ROOT_TAYLOR: [f64; 7] = [
    0.9676722454476212,
    -0.4427631689835921,
    0.258499760955651,
    -0.16394270544240652,
    0.10782405069126237,
    -0.07219956125645471,
    0.04880428816414311,
];

/// ψ(x) in double-double for finite `x` that is not a pole.
pub(crate) fn digamma_dd(x: DD) -> DD {
    if x.hi < 0.0 {
        let cot = x.cospi() / x.sinpi();
        return digamma_dd(DD::ONE - x) - DD::PI * cot;
    }
    let mut z = x;
    let mut acc = DD::ZERO;
    while z.hi < 10.0 {
        acc = acc + z.recip();
        z = z + 1.0;
    }
    let w = 1.0 / z.hi;
    let w2 = w * w;
    let mut tail = 0.0;
    for &c in PSI_ASYMP.iter().rev() {
        tail = tail * w2 + c;
    }
    z.ln() - z.recip() * 0.5 - tail * w2 - acc
}

/// The digamma function ψ(x) = Γ'(x)/Γ(x) (SciPy `psi`/`digamma`).
///
/// ψ(+0) = -inf, ψ(-0) = +inf, NaN at negative integers and at -inf, ψ(inf) = inf.
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x == 0.0 {
        return -1.0 / x;
    }
    if x.is_infinite() {
        return if x > 0.0 { x } else { f64::NAN };
    }
    if is_nonpos_int(x) {
        return f64::NAN;
    }
    let dx = (DD::new(x) - ROOT).to_f64();
    if dx.abs() < 1.0 / 256.0 {
        let mut s = 0.0;
        for &c in ROOT_TAYLOR.iter().rev() {
            s = s * dx + c;
        }
        return s * dx;
    }
    digamma_dd(DD::new(x)).to_f64()
}

/// The trigamma function ψ'(x) = polygamma(1, x).
pub fn trigamma(x: f64) -> f64 {
    polygamma(1.0, x)
}

/// `sign * exp(l)` as a double-double term.
fn signed_exp(sign: f64, l: DD) -> DD {
    l.exp() * sign
}

/// The polygamma function ψ^(n)(x), the n-th derivative of digamma (SciPy `polygamma`).
///
/// `n` must be a non-negative integer (NaN otherwise); n = 0 is [`digamma`]. At the poles
/// (non-positive integer x) the result is inf; ψ^(n)(inf) = 0.
pub fn polygamma(n: f64, x: f64) -> f64 {
    if n.is_nan() || x.is_nan() || n < 0.0 || n != n.floor() {
        return f64::NAN;
    }
    if n.is_infinite() {
        // SciPy's (-1)^(n+1) n! ζ(n+1, x) at n = inf.
        return f64::INFINITY;
    }
    if n == 0.0 {
        return digamma(x);
    }
    let n_odd = n % 2.0 == 1.0;
    // (-1)^(n+1): positive for odd n.
    let outer = if n_odd { 1.0 } else { -1.0 };
    if x == f64::INFINITY {
        return 0.0;
    }
    // x = -inf counts as a pole (below), as in SciPy.
    if is_nonpos_int(x) {
        return outer * f64::INFINITY;
    }
    if x < -1000.0 {
        // x = -M + f: split Σ (x+k)^-(n+1) at the sign change; both halves are Hurwitz zetas of
        // positive arguments, so ψ^(n)(x) = ψ^(n)(f) + (-1)^(n+1) (ψ^(n)(1-f) - ψ^(n)(1-x)),
        // with no loop over the |x| terms in between.
        let f = x - x.floor();
        let sign = if n_odd { 1.0 } else { -1.0 };
        return polygamma(n, f) + sign * (polygamma(n, 1.0 - f) - polygamma(n, 1.0 - x));
    }
    if let Some(v) = polygamma_direct(n, x) {
        return outer * v;
    }
    let s = n + 1.0;
    let lnfact = lgamma_dd(DD::new(s)).0;
    let zmin = n + 10.0;
    let mut acc = DD::ZERO;
    let mut z = DD::new(x);
    while z.hi < zmin {
        // |x+k|^-s carries the sign (-1)^s when x + k < 0.
        let sign = if z.hi < 0.0 && !n_odd { -1.0 } else { 1.0 };
        let term = signed_exp(sign, lnfact - z.abs().ln() * s);
        acc = acc + term;
        z = z + 1.0;
        // For very large n the terms past the first few vanish geometrically: stop once they
        // are negligible and the next one at most halves (their sum is then below 2 terms).
        if z.hi > 0.0
            && term.hi.abs() <= 1e-34 * acc.hi.abs()
            && s * libm::log1p(1.0 / z.hi) > core::f64::consts::LN_2
        {
            return outer * acc.to_f64();
        }
    }
    let lnz = z.ln();
    // (n-1)!/z^n + n!/(2 z^(n+1))
    let lnfact_m1 = lnfact - n.ln_dd();
    acc = acc + (lnfact_m1 - lnz * n).exp() + (lnfact - lnz * s).exp() * 0.5;
    for (j, &b) in BERNOULLI.iter().enumerate() {
        let two_j = 2.0 * (j + 1) as f64;
        // B_2j (2j+n-1)! / ((2j)! z^(2j+n))
        let l =
            lgamma_dd(DD::new(two_j + n)).0 - lgamma_dd(DD::new(two_j + 1.0)).0 - lnz * (two_j + n);
        let term = signed_exp(b.signum(), l + DD::new(b.abs()).ln());
        acc = acc + term;
        if term.hi.abs() < 1e-20 * acc.hi.abs() {
            break;
        }
    }
    outer * acc.to_f64()
}

/// `z^-k` for a double-double z and integer k >= 1, by binary powering of 1/z.
fn recip_powi(z: DD, k: u32) -> DD {
    let mut base = z.recip();
    let mut out = DD::ONE;
    let mut e = k;
    while e > 0 {
        if e & 1 == 1 {
            out = out * base;
        }
        base = base * base;
        e >>= 1;
    }
    out
}

/// `|ψ^(n)(x)|`-signed sum `n! Σ (x+k)^-(n+1)` (without the outer sign) with plain
/// double-double powers instead of `exp(ln n! - s ln z)`: several times cheaper, used when
/// n! is finite and no power leaves the double-double range (|z|^-s within 2^±960).
fn polygamma_direct(n: f64, x: f64) -> Option<f64> {
    let s = n + 1.0;
    let zmin = n + 10.0;
    let first = x.abs().max(1e-300);
    let last = zmin + 1.0 + x.abs();
    if n > 170.0 || s * libm::log2(first).abs() > 960.0 || (s + 30.0) * libm::log2(last) > 960.0 {
        return None;
    }
    let n_odd = n % 2.0 == 1.0;
    let si = s as u32;
    let mut acc = DD::ZERO;
    let mut z = DD::new(x);
    while z.hi < zmin {
        let p = recip_powi(z.abs(), si);
        acc = if z.hi < 0.0 && !n_odd {
            acc - p
        } else {
            acc + p
        };
        z = z + 1.0;
    }
    // Euler–Maclaurin tail relative to n!: 1/(n z^n) + 1/(2 z^(n+1)) + Σ_j B_2j c_j z^-(2j+n),
    // c_j = (2j+n-1)! / (n! (2j)!), c_1 = (n+1)/2, c_{j+1} = c_j (2j+n)(2j+n+1)/((2j+1)(2j+2)).
    let zn = recip_powi(z, n as u32);
    let w = z.recip();
    let w2 = w * w;
    acc = acc + zn / n + zn * w * 0.5;
    let mut c = DD::new(s) / 2.0;
    let mut wp = zn * w2;
    for (j, &b) in BERNOULLI.iter().enumerate() {
        let term = c * wp * b;
        acc = acc + term;
        if term.hi.abs() < 1e-33 * acc.hi.abs() {
            break;
        }
        let tj = 2.0 * (j + 1) as f64;
        c = c * ((tj + n) * (tj + n + 1.0)) / ((tj + 1.0) * (tj + 2.0));
        wp = wp * w2;
    }
    let mut fact = DD::ONE;
    let mut k = 2.0;
    while k <= n {
        fact = fact * k;
        k += 1.0;
    }
    Some((acc * fact).to_f64())
}

/// `ln` of an f64 in double-double, as a method for readability.
trait LnDd {
    fn ln_dd(self) -> DD;
}

impl LnDd for f64 {
    fn ln_dd(self) -> DD {
        DD::new(self).ln()
    }
}
