//! Modified Bessel functions of real order: `iv`, `ive`, `kv`, `kve`, `kn` and the fixed-order
//! `i0`, `i1`, `i0e`, `i1e`.
//!
//! Algorithm (I): for `x > 40` where Hankel's asymptotic series
//! `I_v(x) ~ e^x / √(2πx) Σ_k (-1)^k a_k(v) / x^k`, `a_k = Π_{j<=k} (4v² - (2j-1)²) / (k! 8^k)`,
//! reaches 1e-17 before its terms turn to grow, that series; otherwise the power series
//! `I_v(x) = (x/2)^v Σ_k (x²/4)^k / (k! Γ(v+k+1))`, its terms by the ratio recurrence in
//! double-double (rescaled when the partial sum nears overflow) and the prefactor
//! `exp(v ln(x/2) - ln Γ(v+1) [- x])` formed in double-double, so the scaled `ive` never
//! overflows in between. The power series holds for every real order that is not a negative
//! integer (those use `I_{-n} = I_n`).
//!
//! Algorithm (K): the integral `K_v(x) = ½ ∫_{-∞}^{∞} exp(v t - x cosh t) dt` by the trapezoidal
//! rule, which converges geometrically for such analytic, doubly-exponentially decaying
//! integrands. The rule is centred on the peak `t₀ = asinh(v/x)` with step
//! `h = min(σ/2, 1/10)`, `σ = (x² + v²)^(-1/4)` the peak's width (error below e^-40 in both the
//! Gaussian and the flat small-x regimes); the exponent relative to the peak is expanded as
//! `c₁ s - c₂ (cosh s - 1) - c₃ (sinh s - s)` with `c₁ = v - x sinh t₀` in double-double near the
//! peak (|s| < 1) and directly as `v s - x cosh(t₀ + s) + x cosh t₀` beyond, so each node costs
//! one f64 exp and the peak value `exp(v t₀ - x cosh t₀)` is taken once in
//! double-double.

use crate::dd::DD;
use crate::gamma::lgamma_dd;

/// The threshold above which Hankel's expansion is tried.
const HANKEL_MIN_X: f64 = 40.0;

/// Hankel's asymptotic sum `Σ_k (-1)^k a_k(v) / x^k`, or `None` when it does not reach
/// 1e-17 relative before its terms start to grow.
fn hankel_sum(v: f64, x: f64) -> Option<DD> {
    // 4v² exactly, so 4v² - (2k-1)² does not cancel away its accuracy when v is near k - 1/2.
    let mu = DD::prod(2.0 * v, 2.0 * v);
    let mut term = DD::ONE;
    let mut sum = DD::ONE;
    let mut prev = f64::INFINITY;
    for k in 1..200 {
        let odd = (2 * k - 1) as f64;
        term = term * -(mu - odd * odd) / DD::prod(8.0 * k as f64, x);
        let size = term.hi.abs();
        if size > prev {
            return None;
        }
        sum = sum + term;
        if size < 1e-17 * sum.hi.abs() {
            return Some(sum);
        }
        prev = size;
    }
    None
}

/// `ln I_v(x)` (`scaled` subtracts x) and the sign, for x > 0 and v not a negative integer.
fn ln_iv(v: f64, x: f64, scaled: bool) -> (DD, f64) {
    if let Some(sum) = (x > HANKEL_MIN_X).then(|| hankel_sum(v, x)).flatten() {
        let ln_pref = -(DD::HALF_LN_2PI + DD::new(x).ln() * 0.5);
        let ln_pref = if scaled { ln_pref } else { ln_pref + x };
        return (ln_pref + sum.abs().ln(), sum.hi.signum());
    }
    if x > 1e7 && v > 0.0 {
        // The power series would need ~x terms: Debye's expansion instead (approximate).
        return (debye_ln(v, x, true, scaled), 1.0);
    }
    // Power series Σ r_k, r_0 = 1, r_k = r_{k-1} (x²/4) / (k (k + v)).
    let q = DD::prod(x, x) * 0.25;
    let mut r = DD::ONE;
    let mut sum = DD::ONE;
    let mut rescale = 0.0;
    let mut k = 1.0;
    loop {
        r = r * q / (DD::sum(k, v) * k);
        sum = sum + r;
        if r.hi.abs() < 1e-33 * sum.hi.abs() && k + v > 0.0 {
            break;
        }
        if sum.hi.abs() > 1e280 {
            sum = sum * 1e-280;
            r = r * 1e-280;
            rescale += 1.0;
        }
        k += 1.0;
    }
    let (lg, sg) = lgamma_dd(DD::sum(v, 1.0));
    let mut ln = DD::new(x * 0.5).ln() * v - lg + sum.abs().ln() + DD::new(1e280).ln() * rescale;
    if scaled {
        ln = ln - x;
    }
    (ln, sg * sum.hi.signum())
}

/// Debye's uniform expansion (DLMF 10.41.3–4) for large order, used only where the convergent
/// methods would take millions of terms (order and argument both beyond ~1e7, order above
/// 1e12 for K): `ln I_v(x)` (`first_kind`) or `ln K_v(x)`, with `x = v z`, `t = 1/√(1+z²)`,
/// `η = √(1+z²) - asinh(1/z)` and the polynomials `u₁..u₃(t)`. Accurate to about `u₄/v⁴`
/// relative plus the f64 rounding of `v η` (~1e-12 for v ~ 1e4): approximate, documented.
fn debye_ln(v: f64, x: f64, first_kind: bool, scaled: bool) -> DD {
    let z = x / v;
    let root = libm::hypot(1.0, z);
    let t = 1.0 / root;
    let t2 = t * t;
    let u1 = t * (3.0 - 5.0 * t2) / 24.0;
    let u2 = t2 * (81.0 - 462.0 * t2 + 385.0 * t2 * t2) / 1152.0;
    let u3 = t * t2 * (30375.0 - 369603.0 * t2 + 765765.0 * t2 * t2 - 425425.0 * t2 * t2 * t2)
        / 414720.0;
    let sign = if first_kind { 1.0 } else { -1.0 };
    let series = 1.0 + sign * u1 / v + u2 / (v * v) + sign * u3 / (v * v * v);
    // v η, or v (η - z) when the exponential scaling e^∓x is folded in.
    let eta_minus_z = 1.0 / (root + z) - libm::asinh(1.0 / z);
    let exponent = if scaled {
        v * eta_minus_z
    } else {
        v * eta_minus_z + x
    };
    let quarter = -0.25 * libm::log1p(z * z);
    let front = if first_kind {
        -0.5 * libm::log(2.0 * core::f64::consts::PI * v)
    } else {
        0.5 * libm::log(core::f64::consts::PI / (2.0 * v))
    };
    DD::new(sign * exponent + quarter + front) + libm::log(series)
}

/// Shared body of `iv` and `ive`.
fn iv_impl(v: f64, x: f64, scaled: bool) -> f64 {
    if v.is_nan() || x.is_nan() {
        return f64::NAN;
    }
    let v_int = v == v.floor();
    if x < 0.0 {
        if !v_int {
            return f64::NAN;
        }
        let odd = (v.abs() % 2.0) == 1.0;
        let r = iv_impl(v, -x, scaled);
        return if odd { -r } else { r };
    }
    // I_{-n} = I_n for integer orders.
    let v = if v_int { v.abs() } else { v };
    if x == 0.0 {
        return if v == 0.0 {
            1.0
        } else if v > 0.0 {
            0.0
        } else if scaled {
            // SciPy: NaN for ive at the pole of a negative non-integer order.
            f64::NAN
        } else {
            f64::INFINITY
        };
    }
    if x.is_infinite() {
        return f64::NAN;
    }
    if v.is_infinite() {
        // SciPy: iv gives 0, ive NaN.
        return if scaled { f64::NAN } else { 0.0 };
    }
    let (ln, sign) = ln_iv(v, x, scaled);
    sign * ln.exp().to_f64()
}

/// The modified Bessel function of the first kind `I_v(x)` of real order (SciPy `iv`): NaN for
/// x < 0 unless v is an integer (then `I_v(-x) = (-1)^v I_v(x)`); like SciPy, NaN at x = ±inf
/// and 0 for infinite order.
pub fn iv(v: f64, x: f64) -> f64 {
    iv_impl(v, x, false)
}

/// The exponentially scaled `ive(v, x) = I_v(x) e^{-|x|}` (SciPy `ive`).
pub fn ive(v: f64, x: f64) -> f64 {
    iv_impl(v, x, true)
}

/// `I_0(x)` (SciPy `i0`).
pub fn i0(x: f64) -> f64 {
    iv(0.0, x)
}

/// `I_1(x)` (SciPy `i1`).
pub fn i1(x: f64) -> f64 {
    iv(1.0, x)
}

/// `I_0(x) e^{-|x|}` (SciPy `i0e`; unlike `ive`, 0 at ±inf, its limit, as SciPy's i0e gives).
pub fn i0e(x: f64) -> f64 {
    if x.is_infinite() {
        return 0.0;
    }
    ive(0.0, x)
}

/// `I_1(x) e^{-|x|}` (SciPy `i1e`; ±0 at ±inf as SciPy's i1e gives).
pub fn i1e(x: f64) -> f64 {
    if x.is_infinite() {
        return 0.0f64.copysign(x);
    }
    ive(1.0, x)
}

/// sinh t in double-double (series below 1/2, exponentials above).
fn sinh_dd(t: DD) -> DD {
    if t.hi.abs() < 0.5 {
        let t2 = t * t;
        let mut term = t;
        let mut s = t;
        let mut n = 1.0;
        while term.hi.abs() > 1e-34 * s.hi.abs() {
            term = term * t2 / ((n + 1.0) * (n + 2.0));
            s = s + term;
            n += 2.0;
        }
        return s;
    }
    let e = t.exp();
    (e - e.recip()) * 0.5
}

/// `sinh s - s` in f64 without cancellation for small s.
fn sinh_minus_id(s: f64) -> f64 {
    if s.abs() < 0.75 {
        let s2 = s * s;
        let mut term = s * s2 / 6.0;
        let mut sum = term;
        let mut n = 3.0;
        while term.abs() > 1e-18 * sum.abs() {
            term *= s2 / ((n + 1.0) * (n + 2.0));
            sum += term;
            n += 2.0;
        }
        return sum;
    }
    libm::sinh(s) - s
}

/// `ln K_v(x)` (plus x when `scaled`) for v >= 0 and finite x > 0, by the trapezoidal rule.
fn ln_kv(v: f64, x: f64, scaled: bool) -> DD {
    let sigma = libm::pow(x * x + v * v, -0.25);
    // A power-of-two step and a centre on its grid make every node t0 + jh an exact f64, so
    // cosh of a node far out (argument ~ 400 for tiny x) is not spoiled by rounding the node.
    let h = libm::exp2(libm::log2((0.5 * sigma).min(0.1)).floor());
    let t0 = (libm::asinh(v / x) / h).round() * h;
    let t0d = DD::new(t0);
    let sh = sinh_dd(t0d);
    let c1 = (DD::new(v) - sh * x).to_f64();
    // cosh t0 - 1 = 2 sinh²(t0/2), exactly representable argument t0/2.
    let half = sinh_dd(DD::new(0.5 * t0));
    let cosh_m1 = half * half * 2.0;
    let c2 = ((cosh_m1 + 1.0) * x).to_f64();
    let c3 = (sh * x).to_f64();
    // Near the peak the expansion avoids cancelling v s against x (cosh t - cosh t0); far from
    // it (where cosh s ≫ 1 and the expansion's two terms would cancel instead) the direct form.
    let psi = |s: f64| {
        if s.abs() < 1.0 {
            let hs = libm::sinh(0.5 * s);
            c1 * s - c2 * (2.0 * hs * hs) - c3 * sinh_minus_id(s)
        } else {
            v * s - x * libm::cosh(t0 + s) + c2
        }
    };
    let mut sum = DD::ONE;
    for dir in [1.0, -1.0] {
        let mut j = 1.0;
        loop {
            let term = libm::exp(psi(dir * j * h));
            sum = sum + term;
            if term.is_nan() || term < 1e-20 * sum.hi || j > 1e7 {
                break;
            }
            j += 1.0;
        }
    }
    // φ(t0) = v t0 - x (cosh t0 - 1) [- x]
    let mut peak = DD::prod(v, t0) - cosh_m1 * x;
    if !scaled {
        peak = peak - x;
    }
    peak + sum.ln() + DD::new(0.5 * h).ln()
}

/// Shared body of `kv` and `kve`.
fn kv_impl(v: f64, x: f64, scaled: bool) -> f64 {
    if v.is_nan() || x.is_nan() || x < 0.0 || v.is_infinite() {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::INFINITY;
    }
    if x.is_infinite() {
        return if scaled { f64::NAN } else { 0.0 };
    }
    if v.is_infinite() {
        return f64::NAN;
    }
    let v = v.abs();
    if x > 1e6 && x > 100.0 * v * v {
        // Hankel's expansion K_v(x) ~ √(π/(2x)) e^-x Σ a_k(v)/x^k, converged here to 1e-17
        // within a few terms; the quadrature would need ~√x nodes.
        let mu = DD::prod(2.0 * v, 2.0 * v);
        let mut term = DD::ONE;
        let mut sum = DD::ONE;
        for k in 1..40 {
            let odd = (2 * k - 1) as f64;
            term = term * (mu - odd * odd) / DD::prod(8.0 * k as f64, x);
            sum = sum + term;
            if term.hi.abs() < 1e-33 * sum.hi.abs() {
                break;
            }
        }
        let ln_pref = DD::new(core::f64::consts::FRAC_PI_2 / x).ln() * 0.5;
        let ln_pref = if scaled { ln_pref } else { ln_pref - x };
        return (ln_pref + sum.ln()).exp().to_f64();
    }
    if v > 1e12 {
        return debye_ln(v, x, false, scaled).exp().to_f64();
    }
    ln_kv(v, x, scaled).exp().to_f64()
}

/// The modified Bessel function of the second kind `K_v(x)` of real order (SciPy `kv`): inf at
/// x = 0, NaN for x < 0, 0 at inf, NaN for infinite order (SciPy's conventions).
pub fn kv(v: f64, x: f64) -> f64 {
    kv_impl(v, x, false)
}

/// The exponentially scaled `kve(v, x) = K_v(x) e^x` (SciPy `kve`); NaN at x = inf as in SciPy.
pub fn kve(v: f64, x: f64) -> f64 {
    kv_impl(v, x, true)
}

/// `K_n(x)` for integer order (SciPy `kn`); a non-integral `n` is truncated toward zero as
/// SciPy does.
pub fn kn(n: f64, x: f64) -> f64 {
    kv(n.trunc(), x)
}
