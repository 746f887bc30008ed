//! The gamma function and its relatives: `gamma`, `gammaln`, `factorial`, `poch`, plus the
//! double-double log-gamma core every other module builds on.
//!
//! Algorithm: for `z >= 12` Stirling's series
//! `ln Γ(z) = (z - 1/2) ln z - z + ln(2π)/2 + Σ_k B_2k / (2k (2k-1) z^(2k-1))` (15 terms, truncation
//! below 1e-25 relative), evaluated in double-double; smaller positive `z` are shifted up with
//! `Γ(z) = Γ(z + n) / (z (z+1) ... (z+n-1))`, the product kept in double-double; negative `z`
//! use the reflection `Γ(z) Γ(1-z) = π / sin(πz)` with an exactly reduced `sin(πz)`. The final
//! `exp` is a double-double exponential, so `gamma` is correctly rounded in most cases. Only near
//! the zeros of `ln Γ` at 1 and 2, where an absolute error turns into a large relative one,
//! `gammaln` uses `libm`'s dedicated polynomials instead.

use crate::dd::DD;

/// Stirling coefficients `B_2k / (2k (2k-1))`, k = 1..15.
const STIRLING: [f64; 15] = [
    1.0 / 12.0,
    -1.0 / 360.0,
    1.0 / 1260.0,
    -1.0 / 1680.0,
    1.0 / 1188.0,
    -691.0 / 360360.0,
    1.0 / 156.0,
    -3617.0 / 122400.0,
    43867.0 / 244188.0,
    -174611.0 / 125400.0,
    77683.0 / 5796.0,
    -236364091.0 / 1506960.0,
    657931.0 / 300.0,
    -3392780147.0 / 93960.0,
    1723168255201.0 / 2492028.0,
];

/// ln π in double-double.
const LN_PI: DD = DD {
    hi: 1.1447298858494002,
    lo: 1.0265951162707826e-17,
};

/// Where Stirling's series takes over from the upward shift.
const STIRLING_MIN: f64 = 12.0;

/// The tail `Σ_k B_2k / (2k (2k-1) z^(2k-1))` of Stirling's series, for `z >= 12`: the first two
/// terms in double-double (their f64 rounding would be visible in `P(a, x)` for tiny `a`), the
/// rest, below 1e-9, in f64.
fn stirling_tail(z: DD) -> DD {
    let w = z.recip();
    let w2 = w * w;
    let mut rest = 0.0;
    for &c in STIRLING[2..].iter().rev() {
        rest = rest * w2.hi + c;
    }
    let c2 = DD::new(-1.0) / 360.0;
    let c1 = DD::ONE / 12.0;
    (c1 + w2 * (c2 + w2 * rest)) * w
}

/// `ln Γ(z)` by Stirling's series, `z >= 12`.
fn stirling(z: DD) -> DD {
    (z - 0.5) * z.ln() - z + DD::HALF_LN_2PI + stirling_tail(z)
}

/// `ln |Γ(z)|` in double-double and the sign of `Γ(z)`. `z` must be finite and not a
/// non-positive integer.
pub(crate) fn lgamma_dd(z: DD) -> (DD, f64) {
    if z.lo == 0.0 && (z.hi == 1.0 || z.hi == 2.0) {
        return (DD::ZERO, 1.0);
    }
    if z.hi < 0.5 {
        let s = z.sinpi();
        let (lg, _) = lgamma_dd(DD::ONE - z);
        let sign = if s.hi < 0.0 { -1.0 } else { 1.0 };
        return (LN_PI - s.abs().ln() - lg, sign);
    }
    let mut zz = z;
    let mut prod = DD::ONE;
    while zz.hi < STIRLING_MIN {
        prod = prod * zz;
        zz = zz + 1.0;
    }
    let lg = stirling(zz);
    if prod.hi == 1.0 && prod.lo == 0.0 {
        (lg, 1.0)
    } else {
        (lg - prod.ln(), 1.0)
    }
}

/// `log(1 + t) - t` in double-double, `t > -1`.
pub(crate) fn log1pmx_dd(t: DD) -> DD {
    if t.hi.abs() < 0.25 {
        // -t²/2 + t³/3 - ...: |t| < 1/4 gives < 1e-33 after 52 terms.
        let mut pow = t * t;
        let mut s = DD::ZERO;
        let mut k = 2.0;
        while pow.hi.abs() > 1e-34 * s.hi.abs().max(1e-300) && k < 80.0 {
            let term = pow / k;
            s = if (k as i32) % 2 == 0 {
                s - term
            } else {
                s + term
            };
            pow = pow * t;
            k += 1.0;
        }
        s
    } else {
        (t + 1.0).ln() - t
    }
}

/// `ln Γ(a + b) - ln Γ(a)` without cancellation, for `a >= 12` and `a + b >= 12`.
///
/// Subtracting the two Stirling series analytically gives
/// `b ln a + (b - 1/2) b/a + (a + b - 1/2) (log1p(b/a) - b/a) + S(a+b) - S(a)`, where the
/// difference of the tails `S` is taken term by term as `c_k a^-m expm1(-m log1p(b/a))`.
pub(crate) fn lgamma_diff(a: DD, b: DD) -> DD {
    let t = b / a;
    let main = b * a.ln() + (b - 0.5) * t + (a + b - 0.5) * log1pmx_dd(t);
    let lt = libm::log1p(t.hi);
    let w = 1.0 / a.hi;
    let mut ds = 0.0;
    let mut wm = w;
    for (k, &c) in STIRLING.iter().enumerate() {
        let m = (2 * k + 1) as f64;
        ds += c * wm * libm::expm1(-m * lt);
        wm *= w * w;
    }
    main + ds
}

/// True when `x` is a non-positive integer (a pole of Γ).
#[inline]
pub(crate) fn is_nonpos_int(x: f64) -> bool {
    x <= 0.0 && x == x.floor()
}

/// The gamma function Γ(x) (SciPy `gamma`).
///
/// Γ(±0) = ±inf, NaN at negative integers and -inf, overflow to inf above x ≈ 171.62 and
/// underflow to ±0 for large negative x.
pub fn gamma(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x == 0.0 {
        return 1.0 / x;
    }
    if x.is_infinite() {
        return if x > 0.0 { x } else { f64::NAN };
    }
    if is_nonpos_int(x) {
        return f64::NAN;
    }
    if x > 171.7 {
        return f64::INFINITY;
    }
    let (lg, sign) = lgamma_dd(DD::new(x));
    sign * lg.exp().to_f64()
}

/// `ln |Γ(x)|` (SciPy `gammaln`): inf at the poles and at inf, -inf at -inf (SciPy's value).
pub fn gammaln(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.is_infinite() {
        return x;
    }
    if is_nonpos_int(x) {
        return f64::INFINITY;
    }
    if (0.75..=2.25).contains(&x) {
        return libm::lgamma(x);
    }
    lgamma_dd(DD::new(x)).0.to_f64()
}

/// `x!` as a float, `Γ(x + 1)` (SciPy `factorial(x, exact=False)`): 0 for x < 0, NaN for NaN.
///
/// `x + 1` is formed exactly in double-double, so non-integral `x` lose nothing to its rounding.
pub fn factorial(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < 0.0 {
        return 0.0;
    }
    if x > 171.0 {
        return f64::INFINITY;
    }
    lgamma_dd(DD::sum(x, 1.0)).0.exp().to_f64()
}

/// The Pochhammer symbol (rising factorial) `(z)_m = Γ(z + m) / Γ(z)` (SciPy `poch`), for real
/// `z` and `m`, with the limits at the poles: 1 for m = 0, inf where only Γ(z + m) has a pole,
/// 0 where only Γ(z) has one, and the finite ratio of residues when both do (integer m).
///
/// Integer `m` with `|m| <= 1000` is an exact-ish product in double-double; otherwise the ratio
/// of gammas in log space, with `lgamma_diff` when both arguments are large.
pub fn poch(z: f64, m: f64) -> f64 {
    if m == 0.0 {
        return 1.0;
    }
    if z.is_nan() || m.is_nan() {
        return f64::NAN;
    }
    if m.is_infinite() {
        if z.is_infinite() {
            return f64::NAN;
        }
        return if m > 0.0 { f64::INFINITY } else { 0.0 };
    }
    if z.is_infinite() && m != m.floor() {
        return if z > 0.0 { f64::INFINITY } else { f64::NAN };
    }
    if m == m.floor() && m.abs() <= 1000.0 {
        let mut p = DD::ONE;
        if m > 0.0 {
            for k in 0..(m as i32) {
                p = p * DD::sum(z, k as f64);
                if !p.hi.is_finite() || p.hi == 0.0 {
                    break;
                }
            }
            return p.to_f64();
        }
        for k in 1..=((-m) as i32) {
            p = p * DD::sum(z, -(k as f64));
            if !p.hi.is_finite() || p.hi == 0.0 {
                break;
            }
        }
        return (DD::ONE / p).to_f64();
    }
    let zm = DD::sum(z, m);
    let zm_pole = zm.lo == 0.0 && is_nonpos_int(zm.hi);
    let z_pole = is_nonpos_int(z);
    if zm_pole && !z_pole {
        return f64::INFINITY;
    }
    if z_pole && !zm_pole {
        return 0.0;
    }
    if z >= STIRLING_MIN && zm.hi >= STIRLING_MIN {
        return lgamma_diff(DD::new(z), DD::new(m)).exp().to_f64();
    }
    let (l1, s1) = lgamma_dd(zm);
    let (l0, s0) = lgamma_dd(DD::new(z));
    s1 * s0 * (l1 - l0).exp().to_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lgamma_diff_agrees_with_direct_difference_where_both_are_accurate() {
        let (a, b) = (DD::new(20.5), DD::new(3.25));
        let direct = lgamma_dd(a + b).0 - lgamma_dd(a).0;
        let diff = lgamma_diff(a, b);
        assert!(
            (direct - diff).to_f64().abs() < 1e-15,
            "{direct:?} vs {diff:?}"
        );
    }

    #[test]
    fn gamma_is_exact_at_small_integers() {
        let mut f = 1.0;
        for n in 1..25 {
            assert_eq!(gamma(n as f64), f, "gamma({n})");
            f *= n as f64;
        }
    }
}
