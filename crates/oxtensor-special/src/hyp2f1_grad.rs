//! `hyp2f1_da`, `hyp2f1_db`, `hyp2f1_dc`: the derivatives of the Gauss hypergeometric function
//! `₂F₁(a, b; c; x)` with respect to its parameters, what the gradient of `hyp2f1` needs.
//! PyTensor (`hyp2f1_grad`) sums the derivative of each term of the defining series, in f64 and
//! in log scale, for |x| < 1 only (NaN elsewhere, and ~10⁶ terms as |x| → 1); it stops where a
//! term's value vanishes, so at a non-positive integer a = −n its ∂/∂a misses the derivative's
//! tail (k > n), e.g. 0.137 instead of 0.0549 at (a, b, c, x) = (−3, 1.5, 2.5, 0.99).
//!
//! Algorithm: forward-mode differentiation, on dual numbers in double-double ([`Dual`]), of the
//! very expansions `hyp2f1` uses (`hyp2f1.rs`), so the derivative is defined on the same region
//! and with the same transformations:
//! * `|x| <= 1/2` (and `1/2 < x <= 9/10`): the defining series, each term `t_{k+1} = t_k (a+k)
//!   (b+k) / ((c+k)(k+1)) x` a dual number. At a non-positive integer `a = −n` the value's terms
//!   stop at degree n but the derivative's do not (`∂(a)_k/∂a ≠ 0` for k > n), so the sum runs
//!   until both have converged;
//! * `9/10 < x < 1`: the `1 − x` connection formula (A&S 15.3.6), differentiating the gamma
//!   ratios (`∂ ln Γ = ψ`; at a pole of a denominator gamma the ratio is 0 and its derivative
//!   comes from `1/Γ(−n + ε) ≈ (−1)ⁿ n! ε`), the power `(1 − x)^{c−a−b}` and both series; when
//!   `c − a − b` is within 1e-9 of an integer, the defining series;
//! * `x < −1/2`: Pfaff's transformation `(1−x)^{−a} ₂F₁(a, c−b; c; x/(x−1))` with the
//!   transformed parameters' derivatives (`∂(c−b)/∂b = −1`, `∂(c−b)/∂c = 1`);
//! * `x = 1`: Gauss's sum `Γ(c) Γ(c−a−b) / (Γ(c−a) Γ(c−b))`, differentiated, when `c > a + b`;
//! * a terminating numerator (a or b a non-positive integer) when the differentiated direction
//!   leaves that parameter fixed: the finite sum, for every x.
//!
//! NaN: any NaN or infinite argument; `c` a non-positive integer (a pole of ₂F₁, or a
//! terminating sum whose derivative is not taken here); `x > 1` (₂F₁ is complex or infinite
//! there) and `x = 1` with `c <= a + b` (divergent); and a series that has not converged
//! within 10⁶ terms: x within about 3e-5 of 1 when `c − a − b` is within 1e-9 of an integer,
//! or x below about −3e4 when `b − a` is (e.g. (1.5, 0.5, 3, 0.99999) and (0.5, 1.5, 3, −1e5)
//! are NaN, where `hyp2f1` itself returns its truncated sum). At x = 0
//! every derivative is 0. ∂/∂b is ∂/∂a with a and b exchanged (₂F₁ is symmetric in them).

use crate::dd::DD;
use crate::dual::Dual;
use crate::gamma::{is_nonpos_int, lgamma_dd};
use crate::psi::digamma_dd;

/// The most terms a series may take.
const MAX_TERMS: f64 = 1e6;

/// The defining series `Σ (a)_k (b)_k / ((c)_k k!) x^k` on dual numbers, up to `n_max` terms
/// (`None` when it has not converged by then, unless `n_max` is the exact length of a
/// terminating sum).
fn series(a: Dual, b: Dual, c: Dual, x: DD, n_max: f64, exact_len: bool) -> Option<Dual> {
    let xd = Dual::constant(x);
    let mut t = Dual::constant(DD::ONE);
    let mut sum = t;
    let mut k = 0.0;
    let past_peak = a.v.hi.abs().max(b.v.hi.abs());
    while k < n_max {
        t = t * (a + k) * (b + k) / ((c + k) * Dual::constant(DD::new(k + 1.0))) * xd;
        sum = sum + t;
        k += 1.0;
        let small = |term: DD, total: DD| term.hi.abs() <= 1e-33 * total.hi.abs();
        let vanished = t.v.hi == 0.0 && t.d.hi == 0.0;
        if vanished || (k > past_peak && small(t.v, sum.v) && small(t.d, sum.d)) {
            return Some(sum);
        }
    }
    exact_len.then_some(sum)
}

/// `Π Γ(num) / Π Γ(den)` on dual numbers. A denominator at a pole makes the ratio 0 with the
/// derivative of `1/Γ` there; `None` for a numerator at a pole (or two denominator poles with
/// a nonzero derivative, which cannot happen on the paths that call this).
fn gamma_ratio(num: &[Dual], den: &[Dual]) -> Option<Dual> {
    let pole = |z: &Dual| z.v.lo == 0.0 && is_nonpos_int(z.v.hi);
    if num.iter().any(pole) {
        return None;
    }
    let poles: Vec<&Dual> = den.iter().filter(|z| pole(z)).collect();
    let regular = den.iter().filter(|z| !pole(z));
    let mut ln = DD::ZERO;
    let mut sign = 1.0;
    let mut slope = DD::ZERO;
    for z in num {
        let (l, s) = lgamma_dd(z.v);
        ln = ln + l;
        sign *= s;
        slope = slope + digamma_dd(z.v) * z.d;
    }
    for z in regular {
        let (l, s) = lgamma_dd(z.v);
        ln = ln - l;
        sign *= s;
        slope = slope - digamma_dd(z.v) * z.d;
    }
    let rest = ln.exp() * sign;
    match poles.as_slice() {
        [] => Some(Dual {
            v: rest,
            d: rest * slope,
        }),
        // 1/Γ(−n + ε) = (−1)ⁿ n! ε + O(ε²).
        [p] => {
            let n = -p.v.hi;
            let (ln_fact, _) = lgamma_dd(DD::new(n + 1.0));
            let sign_n = if n % 2.0 == 0.0 { 1.0 } else { -1.0 };
            Some(Dual {
                v: DD::ZERO,
                d: rest * ln_fact.exp() * sign_n * p.d,
            })
        }
        _ => Some(Dual::constant(DD::ZERO)),
    }
}

/// True when `v` is within rounding of an integer.
fn near_integer(v: DD) -> bool {
    (v.hi - v.hi.round()).abs() < 1e-9
}

/// ₂F₁ for `0 <= x < 1` on dual numbers, given x and `y = 1 − x`.
fn unit_interval(a: Dual, b: Dual, c: Dual, x: DD, y: DD) -> Option<Dual> {
    let s = c - a - b;
    if x.hi <= 0.9 || near_integer(s.v) {
        return series(a, b, c, x, MAX_TERMS, false);
    }
    let one = Dual::constant(DD::ONE);
    let first = gamma_ratio(&[c, s], &[c - a, c - b])?;
    let second = gamma_ratio(&[c, -s], &[a, b])?;
    let f1 = series(a, b, one - s, y, MAX_TERMS, false)?;
    let f2 = series(c - a, c - b, one + s, y, MAX_TERMS, false)?;
    let pow = (Dual::constant(y.ln()) * s).exp();
    Some(first * f1 + second * pow * f2)
}

/// The derivative of ₂F₁(a, b; c; x) along the direction `seed` = (∂a, ∂b, ∂c).
fn derivative(a: f64, b: f64, c: f64, x: f64, seed: [f64; 3]) -> f64 {
    let args = [a, b, c, x];
    if args.iter().any(|v| !v.is_finite()) || is_nonpos_int(c) {
        return f64::NAN;
    }
    if x == 0.0 {
        return 0.0;
    }
    let (ad, bd, cd) = (
        Dual::var(DD::new(a), seed[0]),
        Dual::var(DD::new(b), seed[1]),
        Dual::var(DD::new(c), seed[2]),
    );
    // A terminating numerator whose parameter is not differentiated: a finite sum.
    let terminating = [(a, seed[0]), (b, seed[1])]
        .into_iter()
        .filter(|&(p, s)| is_nonpos_int(p) && s == 0.0)
        .map(|(p, _)| -p)
        .fold(f64::INFINITY, f64::min);
    let result = if terminating <= MAX_TERMS {
        series(ad, bd, cd, DD::new(x), terminating + 1.0, true)
    } else if x > 1.0 {
        None
    } else if x == 1.0 {
        let s = cd - ad - bd;
        if s.v.hi <= 0.0 {
            return f64::NAN;
        }
        gamma_ratio(&[cd, s], &[cd - ad, cd - bd])
    } else if x >= -0.5 {
        if x <= 0.5 {
            series(ad, bd, cd, DD::new(x), MAX_TERMS, false)
        } else {
            unit_interval(ad, bd, cd, DD::new(x), DD::sum(1.0, -x))
        }
    } else {
        // Pfaff: (1−x)^−a F(a, c−b; c; x/(x−1)), the argument in (1/3, 1).
        let one_minus_x = DD::sum(1.0, -x);
        let w = -(DD::new(x) / one_minus_x);
        let front = (-(ad * one_minus_x.ln())).exp();
        let cb = Dual {
            v: DD::sum(c, -b),
            d: DD::new(seed[2] - seed[1]),
        };
        let inner = if w.hi <= 0.5 {
            series(ad, cb, cd, w, MAX_TERMS, false)
        } else {
            unit_interval(ad, cb, cd, w, one_minus_x.recip())
        };
        inner.map(|f| front * f)
    };
    match result {
        Some(f) => f.d.to_f64(),
        None => f64::NAN,
    }
}

/// ∂₂F₁(a, b; c; x)/∂a for real arguments, x <= 1 (see the module documentation for the
/// region and the NaN cases).
pub fn hyp2f1_da(a: f64, b: f64, c: f64, x: f64) -> f64 {
    derivative(a, b, c, x, [1.0, 0.0, 0.0])
}

/// ∂₂F₁(a, b; c; x)/∂b: [`hyp2f1_da`] with a and b exchanged.
pub fn hyp2f1_db(a: f64, b: f64, c: f64, x: f64) -> f64 {
    derivative(a, b, c, x, [0.0, 1.0, 0.0])
}

/// ∂₂F₁(a, b; c; x)/∂c for real arguments, x <= 1 (see the module documentation).
pub fn hyp2f1_dc(a: f64, b: f64, c: f64, x: f64) -> f64 {
    derivative(a, b, c, x, [0.0, 0.0, 1.0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hyp2f1;

    /// A fourth-order central difference of `hyp2f1` in parameter `i`.
    fn numeric(p: [f64; 4], i: usize) -> f64 {
        let h = 1e-4 * p[i].abs().max(0.5);
        let f = |t: f64| {
            let mut q = p;
            q[i] += t;
            hyp2f1(q[0], q[1], q[2], q[3])
        };
        (8.0 * (f(h) - f(-h)) - (f(2.0 * h) - f(-2.0 * h))) / (12.0 * h)
    }

    fn analytic(p: [f64; 4], i: usize) -> f64 {
        let f = [hyp2f1_da, hyp2f1_db, hyp2f1_dc][i];
        f(p[0], p[1], p[2], p[3])
    }

    #[test]
    fn agrees_with_finite_differences_in_every_region() {
        for &(a, b, c) in &[
            (0.5, 1.5, 2.25),
            (1.3, -2.7, 3.1),
            (-1.5, 0.75, 0.6),
            (2.0, 3.0, 7.5),
            (0.2, 0.3, 4.7),
        ] {
            for &x in &[-30.0, -3.0, -0.7, -0.3, 0.1, 0.45, 0.7, 0.95, 0.99, 1.0] {
                let p = [a, b, c, x];
                if x == 1.0 && c <= a + b {
                    continue;
                }
                for i in 0..3 {
                    let (got, want) = (analytic(p, i), numeric(p, i));
                    assert!(
                        (got - want).abs() <= 1e-7 * want.abs().max(1e-3),
                        "p={p:?} wrt {i}: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn terminating_numerators_and_edges() {
        // F(−2, b; c; x) = 1 − 2bx/c + b(b+1)x²/(c(c+1)): ∂/∂b and ∂/∂c for any x.
        let (b, c, x) = (1.5, 2.5, 3.0);
        let db = -2.0 * x / c + (2.0 * b + 1.0) * x * x / (c * (c + 1.0));
        let dc = 2.0 * b * x / (c * c)
            - b * (b + 1.0) * x * x * (2.0 * c + 1.0) / (c * c * (c + 1.0) * (c + 1.0));
        assert!((hyp2f1_db(-2.0, b, c, x) - db).abs() < 1e-14 * db.abs());
        assert!((hyp2f1_dc(-2.0, b, c, x) - dc).abs() < 1e-14 * dc.abs());
        // ∂/∂a at a = 0: Σ_{k≥1} (b)_k x^k / ((c)_k k); with b = c, −ln(1 − x).
        let x = 0.3f64;
        assert!((hyp2f1_da(0.0, 2.0, 2.0, x) + (-x).ln_1p()).abs() < 1e-15);
        // Symmetry in a and b.
        assert_eq!(
            hyp2f1_da(0.3, 0.9, 1.7, -0.4),
            hyp2f1_db(0.9, 0.3, 1.7, -0.4)
        );
        assert_eq!(hyp2f1_da(1.0, 2.0, 3.0, 0.0), 0.0);
        for p in [
            [1.0, 2.0, -1.0, 0.5],
            [1.0, 2.0, 3.0, 1.5],
            [1.0, 2.0, 2.5, 1.0],
            [f64::NAN, 2.0, 3.0, 0.5],
            [1.0, f64::INFINITY, 3.0, 0.5],
        ] {
            assert!(hyp2f1_dc(p[0], p[1], p[2], p[3]).is_nan(), "{p:?}");
        }
    }
}
