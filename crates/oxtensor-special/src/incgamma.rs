//! The regularized incomplete gamma functions `P(a, x)` (`gammainc`), `Q(a, x)` (`gammaincc`),
//! their inverses in x, and the chi-square survival function built on Q.
//!
//! Algorithm: the common factor `D = x^a e^-x / Γ(a)` is formed as
//! `exp(a ln x - x - ln Γ(a))` entirely in double-double, so its relative error does not grow
//! with the size of the exponent. Then, as in Numerical Recipes' `gser`/`gcf`:
//! * `x < a + 1` (`x < 2.5` when a < 1): the series `P = D/a Σ_n x^n / ((a+1)...(a+n))` (positive terms, summed in
//!   double-double) and `Q = 1 - P`; for `a < 1` that complement would cancel, so Q comes from
//!   `Q = -expm1(a ln x - ln Γ(1+a)) - x^a/Γ(1+a) · a Σ_{n>=1} (-x)^n / (n! (a+n))` instead;
//! * otherwise Legendre's continued fraction for `Q` (modified Lentz) and `P = 1 - Q`;
//! * `a >= 1e8`: Temme's uniform asymptotic expansion (two correction terms), since the series
//!   and fraction need O(√a) terms near x ≈ a.
//!
//! The inverses start from the Wilson–Hilferty cube-root normal approximation (a >= 1) or the
//! small-x power law, then take Newton steps on the logarithm of whichever of P or Q is the smaller tail, inside a
//! bracket that falls back to bisection.

use crate::dd::DD;
use crate::gamma::lgamma_dd;

/// `ln D = a ln x - x - ln Γ(a)` in double-double (a, x > 0).
fn ln_prefactor(a: f64, x: f64) -> DD {
    DD::new(x).ln() * a - x - lgamma_dd(DD::new(a)).0
}

/// `(P, Q)` in double-double for finite `a > 0`, `x > 0` (the inverses need the residual
/// `v - y` more precisely than an f64 `v` gives it).
fn pq_dd(a: f64, x: f64) -> (DD, DD) {
    let series = if a < 1.0 { x < 2.5 } else { x < a + 1.0 };
    let lnd = ln_prefactor(a, x);
    // Far tails: the smaller of P, Q underflows; skip the sums (which would crawl for huge x).
    if lnd.hi < -760.0 - libm::log(a + 2.0) {
        return if series {
            (DD::ZERO, DD::ONE)
        } else {
            (DD::ONE, DD::ZERO)
        };
    }
    if a >= TEMME_MIN_A {
        return temme(a, x);
    }
    if series {
        let mut term = DD::ONE;
        let mut sum = DD::ONE;
        let mut n = 1.0;
        // Stop when the remaining tail, at most term / (1 - x/(a+n)), is below 1e-18 of the sum
        // (for a ≈ x the ratio is close to 1 and a fixed cut-off would leave ulps behind).
        loop {
            term = term * (DD::new(x) / DD::sum(a, n));
            sum = sum + term;
            n += 1.0;
            let shrink = 1.0 - x / (a + n);
            if (shrink > 0.0 && term.hi < 1e-18 * sum.hi * shrink) || n > 1e7 {
                break;
            }
        }
        let p = lnd.exp() * sum / a;
        if a < 1.0 {
            return (p, small_a_q(a, x));
        }
        return (p, DD::ONE - p);
    }
    let q = lnd.exp() * continued_fraction(a, x);
    (DD::ONE - q, q)
}

/// Where Temme's uniform expansion replaces the series and continued fraction (both need
/// O(√a) terms near x ≈ a).
const TEMME_MIN_A: f64 = 1e8;

/// Taylor coefficients of Temme's `C₀(η)` at η = 0 (tools/temme_coefficients.py).
const TEMME_C0: [f64; 14] = [
    -0.3333333333333333,
    0.08333333333333333,
    -0.014814814814814815,
    0.0011574074074074073,
    0.0003527336860670194,
    -0.0001787551440329218,
    3.919263178522438e-05,
    -2.1854485106799924e-06,
    -1.85406221071516e-06,
    8.296711340953087e-07,
    -1.7665952736826078e-07,
    6.707853543401498e-09,
    1.0261809784240309e-08,
    -4.382036018453353e-09,
];

/// Taylor coefficients of Temme's `C₁(η)` at η = 0 (tools/temme_coefficients.py).
const TEMME_C1: [f64; 14] = [
    -0.001851851851851852,
    -0.003472222222222222,
    0.0026455026455026454,
    -0.0009902263374485596,
    0.00020576131687242798,
    -4.018775720164609e-07,
    -1.8098550334489977e-05,
    7.64916091608111e-06,
    -1.6120900894563446e-06,
    4.647127802807434e-09,
    1.378633446915721e-07,
    -5.752545603517705e-08,
    1.1951628599778148e-08,
    -1.7543241719747647e-11,
];

/// Horner evaluation of a power series.
fn horner(c: &[f64], t: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, &k| acc * t + k)
}

/// `(P, Q)` for a >= 1e8 by Temme's uniform asymptotic expansion (DLMF 8.12):
/// `Q = ½ erfc(η √(a/2)) + e^{-aη²/2} / √(2πa) (C₀(η) + C₁(η)/a)`, `η²/2 = λ - 1 - ln λ`,
/// `λ = x/a`, η of the sign of λ - 1; the next term is below 1e-16 a^-2 relative. η and the
/// exponent are formed in double-double from `log1p(λ-1) - (λ-1)`; `C₀`, `C₁` from their
/// Taylor series for |η| < 0.3 (where the closed forms cancel) and closed forms beyond.
fn temme(a: f64, x: f64) -> (DD, DD) {
    let m = DD::sum(x, -a) / a;
    let half_eta2 = -crate::gamma::log1pmx_dd(m);
    let eta_abs = (half_eta2 * 2.0).sqrt_dd();
    let eta = if m.hi < 0.0 { -eta_abs } else { eta_abs };
    let e = eta.hi;
    let (c0, c1) = if e.abs() < 0.3 {
        (horner(&TEMME_C0, e), horner(&TEMME_C1, e))
    } else {
        let mm = m.to_f64();
        (
            1.0 / mm - 1.0 / e,
            1.0 / (e * e * e) - 1.0 / (mm * mm * mm) - 1.0 / (mm * mm) - 1.0 / (12.0 * mm),
        )
    };
    let r =
        (-(half_eta2 * a)).exp() * ((c0 + c1 / a) / libm::sqrt(2.0 * core::f64::consts::PI * a));
    // √(a/2) in double-double: in the tails erfc's relative sensitivity is 2u², so an f64
    // square root alone would cost tens of ulps.
    let u = eta * DD::new(0.5 * a).sqrt_dd();
    let half_erfc = |z: DD| {
        0.5 * (libm::erfc(z.hi)
            - z.lo * core::f64::consts::FRAC_2_SQRT_PI * libm::exp(-z.hi * z.hi))
    };
    let q = r + half_erfc(u);
    let p = DD::new(half_erfc(-u)) - r;
    (p, q)
}

/// `(P, Q)` rounded to f64.
fn pq(a: f64, x: f64) -> (f64, f64) {
    let (p, q) = pq_dd(a, x);
    (p.to_f64(), q.to_f64())
}

/// ζ(k)/k for k = 2..31 (mpmath): the Taylor coefficients of ln Γ(1 + a).
const ZETA_OVER_K: [f64; 30] = [
    0.8224670334241132,
    0.40068563438653143,
    0.27058080842778454,
    0.20738555102867398,
    0.1695571769974082,
    0.1440498967688461,
    0.12550966952474304,
    0.11133426586956469,
    0.1000994575127818,
    0.09095401714582904,
    0.083353840546109,
    0.0769325164113522,
    0.07143294629536133,
    0.06666870588242046,
    0.06250095514121304,
    0.058823978658684585,
    0.055555767627403614,
    0.05263167937961666,
    0.05000004769810169,
    0.047619070330142226,
    0.04545455629320467,
    0.04347826605304026,
    0.04166666915034121,
    0.04000000119214014,
    0.03846153903467518,
    0.037037037312989324,
    0.035714285847333355,
    0.034482758684919304,
    0.03333333336437758,
    0.03225806453115042,
];

/// Euler's γ in double-double.
const EULER: DD = DD {
    hi: 0.5772156649015329,
    lo: -4.942915152430645e-18,
};

/// `ln Γ(1 + a)` in double-double with *relative* accuracy for small a: the Taylor series
/// `-γ a + Σ_k (-1)^k ζ(k)/k a^k` for |a| <= 0.2 (the log-gamma core has only absolute
/// accuracy, useless when a is 1e-300), the core beyond.
fn lgamma1p(a: f64) -> DD {
    if a.abs() > 0.2 {
        return lgamma_dd(DD::sum(1.0, a)).0;
    }
    let mut pow = a * a;
    let mut tail = 0.0;
    for (i, &c) in ZETA_OVER_K.iter().enumerate() {
        let term = c * pow;
        tail += if i % 2 == 0 { term } else { -term };
        if term.abs() < 1e-20 * tail.abs() {
            break;
        }
        pow *= a;
    }
    -(EULER * a) + tail
}

/// Q(a, x) for a < 1, x < a + 1 without forming 1 - P.
fn small_a_q(a: f64, x: f64) -> DD {
    let t = DD::new(x).ln() * a - lgamma1p(a);
    let u = t.exp();
    let mut s = DD::ZERO;
    let mut pow_fact = DD::ONE;
    let mut n = 1.0;
    loop {
        pow_fact = pow_fact * (-x) / n;
        let term = pow_fact / DD::sum(a, n);
        s = s + term;
        if term.hi.abs() < 1e-34 || term.hi.abs() < 1e-18 * s.hi.abs() || n > 200.0 {
            break;
        }
        n += 1.0;
    }
    -(u - 1.0) - u * s * a
}

/// Legendre's continued fraction `Γ(a, x) e^x x^-a = 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a- ...)))`,
/// by the modified Lentz method carried in double-double (in f64 the product of the ~50
/// convergence factors alone costs several ulps).
fn continued_fraction(a: f64, x: f64) -> DD {
    const TINY: f64 = 1e-300;
    let guard = |v: DD| if v.hi.abs() < TINY { DD::new(TINY) } else { v };
    let mut b = DD::sum(x, 1.0) - a;
    let mut c = DD::new(1.0 / TINY);
    let mut d = guard(b).recip();
    let mut h = d;
    let mut i = 1.0;
    while i < 1e6 {
        let an = DD::sum(i, -a) * (-i);
        b = b + 2.0;
        d = guard(an * d + b).recip();
        c = guard(b + an / c);
        let del = d * c;
        h = h * del;
        if (del - 1.0).hi.abs() < 1e-30 {
            break;
        }
        i += 1.0;
    }
    h
}

/// `Some((P, Q))` for the boundary and invalid cases, `None` for the regular ones.
fn special_pq(a: f64, x: f64) -> Option<(f64, f64)> {
    if a.is_nan() || x.is_nan() || a < 0.0 || x < 0.0 {
        return Some((f64::NAN, f64::NAN));
    }
    if a == 0.0 {
        return Some(if x > 0.0 {
            (1.0, 0.0)
        } else {
            (f64::NAN, f64::NAN)
        });
    }
    if x == 0.0 {
        return Some((0.0, 1.0));
    }
    if x.is_infinite() {
        return Some(if a.is_infinite() {
            (f64::NAN, f64::NAN)
        } else {
            (1.0, 0.0)
        });
    }
    if a.is_infinite() {
        return Some((0.0, 1.0));
    }
    None
}

/// The regularized lower incomplete gamma function `P(a, x) = γ(a, x) / Γ(a)` (SciPy
/// `gammainc`): NaN for a < 0 or x < 0, P(0, x) = 1 for x > 0, P(a, 0) = 0, P(a, inf) = 1.
pub fn gammainc(a: f64, x: f64) -> f64 {
    special_pq(a, x).unwrap_or_else(|| pq(a, x)).0
}

/// The regularized upper incomplete gamma function `Q(a, x) = Γ(a, x) / Γ(a) = 1 - P(a, x)`
/// (SciPy `gammaincc`), accurate in its own right where it is small.
pub fn gammaincc(a: f64, x: f64) -> f64 {
    special_pq(a, x).unwrap_or_else(|| pq(a, x)).1
}

/// The chi-square survival function with `k` degrees of freedom, `Q(k/2, x/2)` (SciPy
/// `chdtrc(k, x)`; note the argument order here is `(x, k)`): 1 at x = 0, NaN for x < 0 or
/// k < 0; k = 0 is the point mass at 0.
pub fn chi2sf(x: f64, k: f64) -> f64 {
    if x.is_nan() || k.is_nan() || k < 0.0 || x < 0.0 {
        return f64::NAN;
    }
    if k == 0.0 {
        // The degenerate distribution at 0 (SciPy: 0 for x > 0, NaN at x = 0).
        return if x > 0.0 { 0.0 } else { f64::NAN };
    }
    if x == 0.0 {
        return 1.0;
    }
    gammaincc(k / 2.0, x / 2.0)
}

/// Solves `P(a, x) = y` (`upper = false`) or `Q(a, x) = y` (`upper = true`) for x, with
/// `0 < y <= 1/2` the smaller tail.
fn invert(a: f64, y: f64, upper: bool) -> f64 {
    let lga = lgamma_dd(DD::new(a)).0.to_f64();
    // Target of the lower tail for the initial guess.
    let p = if upper { 1.0 - y } else { y };
    let mut x = if a >= 1.0 {
        // The normal quantile of the lower-tail probability, from whichever tail is given.
        let z = core::f64::consts::SQRT_2
            * crate::erf::erfcinv(2.0 * y)
            * if upper { 1.0 } else { -1.0 };
        let t = 1.0 - 1.0 / (9.0 * a) + z / (3.0 * a.sqrt());
        if t > 0.0 { a * t * t * t } else { 0.0 }
    } else {
        0.0
    };
    if x <= 0.0 || !x.is_finite() {
        // Small-x power law P ≈ x^a / Γ(a+1), or the exponential tail Q ≈ x^(a-1) e^-x / Γ(a).
        x = if !upper || y > 0.1 {
            libm::exp((libm::log(p) + lgamma_dd(DD::sum(a, 1.0)).0.to_f64()) / a)
        } else {
            let mut t = -libm::log(y) - lga;
            for _ in 0..3 {
                t = -libm::log(y) - lga + (a - 1.0) * libm::log(t.max(1e-300));
            }
            t.max(1e-300)
        };
    }
    let (mut lo, mut hi) = (0.0f64, f64::INFINITY);
    let ln_y = libm::log(y);
    for _ in 0..300 {
        let (pv, qv) = pq_dd(a, x);
        let vd = if upper { qv } else { pv };
        let v = vd.to_f64();
        // Newton on g(x) = ln v(x) - ln y, far better behaved than v - y in the tails.
        let g = if v > 0.0 {
            libm::log1p(((vd - y) / y).to_f64())
        } else {
            f64::NEG_INFINITY
        };
        // Keep a bracket: P increases and Q decreases with x.
        if (g > 0.0) != upper {
            hi = hi.min(x)
        } else {
            lo = lo.max(x)
        }
        if g == 0.0 {
            break;
        }
        let ln_dens = (ln_prefactor(a, x) - DD::new(x).ln()).to_f64();
        let dg = libm::exp(ln_dens - if v > 0.0 { libm::log(v) } else { ln_y });
        let dg = if upper { -dg } else { dg };
        let mut next = x - g / dg;
        // A step below one part in 1e16 means Newton has converged (the root is bracketed by
        // x itself then, so the bracket test below would wrongly call for bisection).
        if (next - x).abs() <= 1e-16 * x.abs() {
            break;
        }
        if !(next > lo && next < hi && next.is_finite()) {
            next = if hi.is_finite() {
                0.5 * (lo + hi)
            } else {
                2.0 * x.max(lo) + 1.0
            };
        }
        let done = (next - x).abs() <= 1e-16 * x.abs();
        x = next;
        if done || hi - lo <= 2e-16 * x {
            break;
        }
    }
    x
}

/// Shared argument checks of the two inverses: `Some(result)` for the boundary cases.
fn special_inv(a: f64, y: f64, y_zero: f64) -> Option<f64> {
    if a.is_nan() || y.is_nan() || a < 0.0 || !(0.0..=1.0).contains(&y) {
        return Some(f64::NAN);
    }
    // SciPy settles the ends of [0, 1] before a = 0.
    if y == 0.0 {
        return Some(y_zero);
    }
    if y == 1.0 {
        return Some(if y_zero == 0.0 { f64::INFINITY } else { 0.0 });
    }
    if a == 0.0 {
        return Some(f64::NAN);
    }
    None
}

/// The inverse of [`gammainc`] in x: the x with `P(a, x) = p` (SciPy `gammaincinv`); 0 at p = 0,
/// inf at p = 1, NaN outside [0, 1] or for a < 0.
pub fn gammaincinv(a: f64, p: f64) -> f64 {
    special_inv(a, p, 0.0).unwrap_or_else(|| {
        if p <= 0.5 {
            invert(a, p, false)
        } else {
            invert(a, 1.0 - p, true)
        }
    })
}

/// The inverse of [`gammaincc`] in x: the x with `Q(a, x) = q` (SciPy `gammainccinv`); inf at
/// q = 0, 0 at q = 1, NaN outside [0, 1] or for a < 0.
pub fn gammainccinv(a: f64, q: f64) -> f64 {
    special_inv(a, q, f64::INFINITY).unwrap_or_else(|| {
        if q <= 0.5 {
            invert(a, q, true)
        } else {
            invert(a, 1.0 - q, false)
        }
    })
}
