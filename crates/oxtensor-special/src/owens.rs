//! Owen's T function `T(h, a) = 1/(2π) ∫_0^a exp(-h²(1+x²)/2) / (1+x²) dx`.
//!
//! Algorithm: for |a| <= 1 the integral itself, with `exp(-h²/2)` taken out in double-double and
//! the remaining smooth positive integrand `exp(-h²x²/2)/(1+x²)` integrated by 20-point
//! Gauss–Legendre on panels no wider than `min(1/2, 2/h)` over `[0, min(a, 12/h)]` (the rest is
//! below e^-72). For |a| > 1 the identity
//! `T(h, a) = (Q(h) + Q(ah))/2 - Q(h) Q(ah) - T(ah, 1/a)` (h >= 0, Q the normal upper tail)
//! brings the limit back into [0, 1]; Q is `erfc` with its argument's rounding error corrected to
//! first order, and `ah` is carried in double-double. Symmetries: T is even in h and odd in a.

use crate::dd::DD;
use std::sync::OnceLock;

/// 1/√2 in double-double.
const FRAC_1_SQRT_2: DD = DD {
    hi: core::f64::consts::FRAC_1_SQRT_2,
    lo: -4.833646656726457e-17,
};
/// 1/(2π) in double-double.
const INV_2PI: DD = DD {
    hi: 0.15915494309189535,
    lo: -9.839338337591243e-18,
};
/// 2/√π.
const TWO_OVER_SQRT_PI: f64 = core::f64::consts::FRAC_2_SQRT_PI;

/// Nodes and weights of 20-point Gauss–Legendre on [-1, 1] (positive half), computed once by
/// Newton's method on the Legendre polynomial.
fn gauss_legendre() -> &'static [(f64, f64); 10] {
    static RULE: OnceLock<[(f64, f64); 10]> = OnceLock::new();
    RULE.get_or_init(|| {
        const N: usize = 20;
        let mut rule = [(0.0, 0.0); 10];
        for (i, slot) in rule.iter_mut().enumerate() {
            let mut x = (core::f64::consts::PI * (i as f64 + 0.75) / (N as f64 + 0.5)).cos();
            let mut dp = 1.0;
            for _ in 0..100 {
                // Legendre recurrence for P_N(x) and its derivative.
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=N {
                    let k = k as f64;
                    let p2 = ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k;
                    p0 = p1;
                    p1 = p2;
                }
                dp = N as f64 * (x * p1 - p0) / (x * x - 1.0);
                let dx = p1 / dp;
                x -= dx;
                if dx.abs() < 1e-17 {
                    break;
                }
            }
            *slot = (x, 2.0 / ((1.0 - x * x) * dp * dp));
        }
        rule
    })
}

/// The normal upper tail `Q(z) = erfc(z/√2)/2` for a double-double z, the rounding of `z/√2`
/// corrected to first order (`erfc(u + δ) ≈ erfc(u) - δ 2/√π e^{-u²}`).
fn normal_q(z: DD) -> f64 {
    let u = z * FRAC_1_SQRT_2;
    0.5 * (libm::erfc(u.hi) - u.lo * TWO_OVER_SQRT_PI * libm::exp(-u.hi * u.hi))
}

/// T(h, a) for h >= 0 (double-double), 0 <= a <= 1, by quadrature.
fn t_quadrature(h: DD, a: f64) -> f64 {
    let h2 = h * h;
    let hh = h2.hi;
    let h_f = h.hi;
    let end = if h_f > 0.0 { a.min(12.0 / h_f) } else { a };
    let width = if h_f > 0.0 { (2.0 / h_f).min(0.5) } else { 0.5 };
    let panels = (end / width).ceil().max(1.0);
    let w = end / panels;
    let rule = gauss_legendre();
    let mut sum = DD::ZERO;
    let mut p = 0.0;
    while p < panels {
        let mid = (p + 0.5) * w;
        let half = 0.5 * w;
        for &(node, weight) in rule.iter() {
            for x in [mid - half * node, mid + half * node] {
                let f = libm::exp(-0.5 * hh * x * x) / (1.0 + x * x);
                sum = sum + f * weight * half;
            }
        }
        p += 1.0;
    }
    let front = (-(h2 * 0.5)).exp();
    (front * sum * INV_2PI).to_f64()
}

/// Owen's T function (SciPy `owens_t`).
pub fn owens_t(h: f64, a: f64) -> f64 {
    if h.is_nan() || a.is_nan() {
        return f64::NAN;
    }
    if a == 0.0 {
        return 0.0 * a.signum();
    }
    let sign = a.signum();
    let (h, a) = (h.abs(), a.abs());
    // T(h, a) <= Q(h)/2, which underflows beyond h ≈ 38.5.
    if h > 40.0 {
        return 0.0 * sign;
    }
    if a.is_infinite() {
        return sign
            * if h == 0.0 {
                0.25
            } else {
                0.5 * normal_q(DD::new(h))
            };
    }
    if h == 0.0 {
        return sign * libm::atan(a) * INV_2PI.hi;
    }
    if a <= 1.0 {
        return sign * t_quadrature(DD::new(h), a);
    }
    let ah = DD::prod(a, h);
    let q1 = normal_q(DD::new(h));
    let q2 = normal_q(ah);
    let t = t_quadrature(ah, 1.0 / a);
    let value = DD::new(0.5 * q1) + 0.5 * q2 - DD::prod(q1, q2) - t;
    sign * value.to_f64()
}
