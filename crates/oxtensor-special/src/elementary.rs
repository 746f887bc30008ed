//! Small elementwise helpers with careful formulas: `log1mexp`, `xlogy`, `xlog1py`, `logit`,
//! `expit`. Each picks, per range, the expression free of cancellation (Mächler's `log1mexp`
//! split at -ln 2; `logit` through `log1p` near 1/2).

/// `log(1 - e^x)` for x <= 0 (PyTensor's `log1mexp`): -inf at 0, NaN for x > 0.
///
/// `log(-expm1(x))` for -ln 2 < x, `log1p(-exp(x))` below (Mächler 2012): each is accurate where
/// the other cancels.
pub fn log1mexp(x: f64) -> f64 {
    if x.is_nan() || x > 0.0 {
        return f64::NAN;
    }
    if x > -core::f64::consts::LN_2 {
        libm::log(-libm::expm1(x))
    } else {
        libm::log1p(-libm::exp(x))
    }
}

/// `x * log(y)` with `0 * log(y) = 0` for any y that is not NaN (SciPy `xlogy`).
pub fn xlogy(x: f64, y: f64) -> f64 {
    if x == 0.0 && !y.is_nan() {
        return 0.0;
    }
    x * libm::log(y)
}

/// `x * log1p(y)` with `0 * log1p(y) = 0` for any y that is not NaN (SciPy `xlog1py`).
pub fn xlog1py(x: f64, y: f64) -> f64 {
    if x == 0.0 && !y.is_nan() {
        return 0.0;
    }
    x * libm::log1p(y)
}

/// The log-odds `log(p / (1 - p))` (SciPy `logit`): ∓inf at 0 and 1, NaN outside [0, 1].
///
/// Near p = 1/2, `log1p((2p - 1) / (1 - p))` (2p - 1 exact); below, `log p - log1p(-p)`; above,
/// `log(p / (1 - p))` with the exact 1 - p.
pub fn logit(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if (0.3..=0.7).contains(&p) {
        libm::log1p((2.0 * p - 1.0) / (1.0 - p))
    } else if p < 0.3 {
        libm::log(p) - libm::log1p(-p)
    } else {
        libm::log(p / (1.0 - p))
    }
}

/// The logistic sigmoid `1 / (1 + e^-x)` (SciPy `expit`), without overflow for either sign.
pub fn expit(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + libm::exp(-x))
    } else {
        let e = libm::exp(x);
        e / (1.0 + e)
    }
}
