//! Error-function relatives not in `libm`: the inverses `erfinv`, `erfcinv` and the scaled
//! complementary function `erfcx`.
//!
//! Algorithm: the inverses take Halley steps `x -= δ / (1 + x δ)`, `δ = f / f'`, on
//! `erf(x) = y` near zero and on `erfc(x) = q` in the tails (q = 1 - |y| is exact there), where
//! the step is written with `erfcx` and `q e^{x²}` (formed in double-double) so it stays
//! accurate down to subnormal q. `erfcx(x) = e^{x²} erfc(x)` multiplies `libm`'s erfc by a
//! double-double `e^{x²}` for moderate x, uses Laplace's continued fraction for x >= 26 and the
//! reflection `erfcx(-x) = 2 e^{x²} - erfcx(x)` for negative x.

use crate::dd::DD;

/// 2/√π.
const TWO_OVER_SQRT_PI: f64 = core::f64::consts::FRAC_2_SQRT_PI;
/// √π / 2.
const SQRT_PI_OVER_TWO: f64 = 0.886226925452758;

/// The scaled complementary error function `erfcx(x) = e^{x²} erfc(x)` (SciPy `erfcx`).
pub fn erfcx(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < 0.0 {
        if x < -26.7 {
            return f64::INFINITY;
        }
        let e2 = DD::prod(x, x).exp() * 2.0;
        return (e2 - erfcx(-x)).to_f64();
    }
    if x < 26.0 {
        return (DD::prod(x, x).exp() * libm::erfc(x)).to_f64();
    }
    if x.is_infinite() {
        return 0.0;
    }
    // Laplace's continued fraction erfcx(x) = 1/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))).
    let mut t = x;
    for k in (1..=24).rev() {
        t = x + (k as f64 * 0.5) / t;
    }
    TWO_OVER_SQRT_PI * 0.5 / t
}

/// One Halley step for `erfc(x) = q`, x > 0: δ = (erfc(x) - q)/erfc'(x) written via erfcx so
/// it neither underflows nor loses the tiny target.
fn erfc_step(x: f64, q: f64) -> f64 {
    let q_scaled = (DD::prod(x, x) + DD::new(q).ln()).exp().to_f64();
    let delta = -SQRT_PI_OVER_TWO * (erfcx(x) - q_scaled);
    delta / (1.0 + x * delta)
}

/// Solves `erfc(x) = q` for `0 < q <= 1/2` (so x >= 0.476...).
fn erfc_root(q: f64) -> f64 {
    let lq = -libm::log(q);
    let mut x = lq.sqrt();
    for _ in 0..2 {
        x = (lq - libm::log(x * 1.772453850905516)).max(0.2).sqrt();
    }
    for _ in 0..50 {
        let step = erfc_step(x, q);
        x -= step;
        if step.abs() <= 2e-16 * x {
            break;
        }
    }
    x
}

/// Solves `erf(x) = t` for `0 <= t <= 1/2`.
fn erf_root(t: f64) -> f64 {
    if t == 0.0 {
        return t;
    }
    let mut x = t * SQRT_PI_OVER_TWO * (1.0 + core::f64::consts::PI / 12.0 * t * t);
    for _ in 0..50 {
        let delta = (libm::erf(x) - t) / (TWO_OVER_SQRT_PI * libm::exp(-x * x));
        let step = delta / (1.0 + x * delta);
        x -= step;
        if step.abs() <= 2e-16 * x {
            break;
        }
    }
    x
}

/// The inverse error function (SciPy `erfinv`): ±inf at ±1, NaN outside [-1, 1].
pub fn erfinv(y: f64) -> f64 {
    if y.is_nan() || y.abs() > 1.0 {
        return f64::NAN;
    }
    if y.abs() == 1.0 {
        return y * f64::INFINITY;
    }
    let t = y.abs();
    let x = if t <= 0.5 {
        erf_root(t)
    } else {
        erfc_root(1.0 - t)
    };
    x.copysign(y)
}

/// The inverse complementary error function (SciPy `erfcinv`): inf at 0, -inf at 2, NaN outside
/// [0, 2]; erfcinv(1) = -0 as in SciPy.
pub fn erfcinv(y: f64) -> f64 {
    if y.is_nan() || !(0.0..=2.0).contains(&y) {
        return f64::NAN;
    }
    if y == 0.0 {
        return f64::INFINITY;
    }
    if y == 2.0 {
        return f64::NEG_INFINITY;
    }
    if y == 1.0 {
        return -0.0;
    }
    if y <= 0.5 {
        erfc_root(y)
    } else if y <= 1.5 {
        let t = 1.0 - y;
        erf_root(t.abs()).copysign(t)
    } else {
        -erfc_root(2.0 - y)
    }
}
