//! Double-double arithmetic: a value held as an unevaluated sum `hi + lo` of two f64s, about
//! 106 bits of precision with the range of f64.
//!
//! Why: most functions here are sums, products and exponentials of intermediate quantities whose
//! rounding errors, magnified by cancellation or by a large exponent (`exp(a ln x - x - lnΓ(a))`),
//! would cost many ulps in plain f64. Carrying the few critical steps in double-double and
//! rounding once at the end is the simplest way to land within a few ulps of the true value.
//! The algorithms are the classical error-free transformations (Knuth's two-sum, the fused
//! multiply-add two-product) and Dekker/Bailey-style compound operations.

use core::ops::{Add, Div, Mul, Neg, Sub};

/// A double-double number `hi + lo` with `|lo| <= ulp(hi) / 2`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct DD {
    /// The leading part: the value rounded to f64.
    pub hi: f64,
    /// The trailing part: what `hi` misses.
    pub lo: f64,
}

/// `a + b` as an exact sum `s + e` (Knuth's two-sum).
#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// `a + b` as an exact sum, valid when `|a| >= |b|` (or a is zero).
#[inline]
fn quick_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// `a * b` as an exact sum `p + e` using a fused multiply-add.
#[inline]
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

impl DD {
    /// Zero.
    pub const ZERO: DD = DD { hi: 0.0, lo: 0.0 };
    /// One.
    pub const ONE: DD = DD { hi: 1.0, lo: 0.0 };
    /// π.
    pub const PI: DD = DD {
        hi: core::f64::consts::PI,
        lo: 1.2246467991473532e-16,
    };
    /// ln 2.
    pub const LN2: DD = DD {
        hi: core::f64::consts::LN_2,
        lo: 2.3190468138462996e-17,
    };
    /// ln(2π) / 2, the constant of Stirling's series.
    pub const HALF_LN_2PI: DD = DD {
        hi: 0.9189385332046728,
        lo: -3.8782941580672414e-17,
    };

    /// An f64 as a double-double (exact).
    #[inline]
    pub fn new(x: f64) -> DD {
        DD { hi: x, lo: 0.0 }
    }

    /// The exact sum of two f64s.
    #[inline]
    pub fn sum(a: f64, b: f64) -> DD {
        let (hi, lo) = two_sum(a, b);
        DD { hi, lo }
    }

    /// The exact product of two f64s.
    #[inline]
    pub fn prod(a: f64, b: f64) -> DD {
        let (hi, lo) = two_prod(a, b);
        DD { hi, lo }
    }

    /// The value rounded to f64.
    #[inline]
    pub fn to_f64(self) -> f64 {
        self.hi + self.lo
    }

    /// The reciprocal `1 / self`.
    #[inline]
    pub fn recip(self) -> DD {
        DD::ONE / self
    }

    /// Multiplication by a power of two (exact unless it under/overflows).
    #[inline]
    pub fn ldexp(self, k: i32) -> DD {
        DD {
            hi: libm::scalbn(self.hi, k),
            lo: libm::scalbn(self.lo, k),
        }
    }

    /// e^self to double-double precision; overflows to +inf and underflows to 0 like `exp`.
    ///
    /// Reduction `x = k ln2 + r`, then `r / 2^10` through a Taylor series for expm1 and ten
    /// doublings `e^{2t} - 1 = (e^t - 1)(e^t + 1)`, which keep the small result's precision.
    pub fn exp(self) -> DD {
        if self.hi.is_nan() {
            return DD::new(f64::NAN);
        }
        if self.hi > 709.8 {
            return DD::new(f64::INFINITY);
        }
        if self.hi < -745.2 {
            return DD::ZERO;
        }
        let k = (self.hi / DD::LN2.hi).round();
        let r = self - DD::LN2 * k;
        let t = r.ldexp(-10);
        // expm1(t) for |t| < 3.4e-4: terms t^n / n! to n = 9 leave < 1e-38.
        let mut term = t;
        let mut s = t;
        for n in 2..=10 {
            term = term * t / (n as f64);
            s = s + term;
        }
        for _ in 0..10 {
            s = s * (s + 2.0);
        }
        let e = s + 1.0;
        let k = k as i32;
        // Scale in two steps so 2^k itself never overflows or underflows prematurely.
        let k1 = k / 2;
        e.ldexp(k1).ldexp(k - k1)
    }

    /// The natural logarithm to double-double precision (self > 0), by one Newton step on
    /// `exp(y) = x` from the f64 logarithm.
    pub fn ln(self) -> DD {
        if self.hi <= 0.0 || !self.hi.is_finite() {
            return DD::new(libm::log(self.hi));
        }
        // Scale into the normal range so exp(-y) does not overflow for tiny inputs.
        let (m, e) = libm::frexp(self.hi);
        let scaled = self.ldexp(-e);
        let y = DD::new(libm::log(m));
        let corr = scaled * (-y).exp() - 1.0;
        y + corr + DD::LN2 * (e as f64)
    }

    /// sin(π self), exact argument reduction (sin πx is periodic in x with period 2).
    pub fn sinpi(self) -> DD {
        let (r, odd) = self.reduce_half();
        let s = sin_taylor(DD::PI * r);
        if odd { -s } else { s }
    }

    /// cos(π self), exact argument reduction.
    pub fn cospi(self) -> DD {
        let (r, odd) = self.reduce_half();
        let c = cos_taylor(DD::PI * r);
        if odd { -c } else { c }
    }

    /// `self = n + r` with n an integer and |r| <= 1/2; returns r and whether n is odd.
    fn reduce_half(self) -> (DD, bool) {
        let n = self.hi.round();
        let mut r = self - n;
        let mut n = n;
        if r.hi > 0.5 {
            r = r - 1.0;
            n += 1.0;
        } else if r.hi < -0.5 {
            r = r + 1.0;
            n -= 1.0;
        }
        (r, n.rem_euclid(2.0) == 1.0)
    }

    /// sin(self) for |self| <= π/2 (no argument reduction).
    pub fn sin_small(self) -> DD {
        sin_taylor(self)
    }

    /// cos(self) for |self| <= π/2 (no argument reduction).
    pub fn cos_small(self) -> DD {
        cos_taylor(self)
    }

    /// The square root (self >= 0), one Newton correction on the f64 root.
    pub fn sqrt_dd(self) -> DD {
        if self.hi <= 0.0 {
            return DD::new(self.hi.sqrt());
        }
        let s = self.hi.sqrt();
        DD::new(s) + (self - DD::prod(s, s)) / (2.0 * s)
    }

    /// The absolute value.
    #[inline]
    pub fn abs(self) -> DD {
        if self.hi < 0.0 { -self } else { self }
    }
}

/// sin t by its Taylor series, for |t| <= π/2.
fn sin_taylor(t: DD) -> DD {
    let t2 = t * t;
    let mut term = t;
    let mut s = t;
    let mut n = 1.0;
    while term.hi.abs() > 1e-34 * s.hi.abs().max(1e-300) {
        term = -(term * t2) / ((n + 1.0) * (n + 2.0));
        s = s + term;
        n += 2.0;
    }
    s
}

/// cos t by its Taylor series, for |t| <= π/2.
fn cos_taylor(t: DD) -> DD {
    let t2 = t * t;
    let mut term = DD::ONE;
    let mut s = DD::ONE;
    let mut n = 0.0;
    while term.hi.abs() > 1e-34 * s.hi.abs().max(1e-300) {
        term = -(term * t2) / ((n + 1.0) * (n + 2.0));
        s = s + term;
        n += 2.0;
    }
    s
}

impl Neg for DD {
    type Output = DD;
    #[inline]
    fn neg(self) -> DD {
        DD {
            hi: -self.hi,
            lo: -self.lo,
        }
    }
}

impl Add for DD {
    type Output = DD;
    #[inline]
    fn add(self, b: DD) -> DD {
        if !(self.hi + b.hi).is_finite() {
            return DD::new(self.hi + b.hi);
        }
        let (s1, s2) = two_sum(self.hi, b.hi);
        let (t1, t2) = two_sum(self.lo, b.lo);
        let s2 = s2 + t1;
        let (s1, s2) = quick_two_sum(s1, s2);
        let s2 = s2 + t2;
        let (hi, lo) = quick_two_sum(s1, s2);
        if hi.is_finite() {
            DD { hi, lo }
        } else {
            DD { hi, lo: 0.0 }
        }
    }
}

impl Add<f64> for DD {
    type Output = DD;
    #[inline]
    fn add(self, b: f64) -> DD {
        if !(self.hi + b).is_finite() {
            return DD::new(self.hi + b);
        }
        let (s1, s2) = two_sum(self.hi, b);
        let s2 = s2 + self.lo;
        let (hi, lo) = quick_two_sum(s1, s2);
        if hi.is_finite() {
            DD { hi, lo }
        } else {
            DD { hi, lo: 0.0 }
        }
    }
}

impl Sub for DD {
    type Output = DD;
    #[inline]
    fn sub(self, b: DD) -> DD {
        self + (-b)
    }
}

impl Sub<f64> for DD {
    type Output = DD;
    #[inline]
    fn sub(self, b: f64) -> DD {
        self + (-b)
    }
}

impl Mul for DD {
    type Output = DD;
    #[inline]
    fn mul(self, b: DD) -> DD {
        if !(self.hi * b.hi).is_finite() {
            return DD::new(self.hi * b.hi);
        }
        let (p1, p2) = two_prod(self.hi, b.hi);
        let p2 = p2 + (self.hi * b.lo + self.lo * b.hi);
        let (hi, lo) = quick_two_sum(p1, p2);
        if hi.is_finite() {
            DD { hi, lo }
        } else {
            DD { hi, lo: 0.0 }
        }
    }
}

impl Mul<f64> for DD {
    type Output = DD;
    #[inline]
    fn mul(self, b: f64) -> DD {
        if !(self.hi * b).is_finite() {
            return DD::new(self.hi * b);
        }
        let (p1, p2) = two_prod(self.hi, b);
        let p2 = p2 + self.lo * b;
        let (hi, lo) = quick_two_sum(p1, p2);
        if hi.is_finite() {
            DD { hi, lo }
        } else {
            DD { hi, lo: 0.0 }
        }
    }
}

impl Div for DD {
    type Output = DD;
    #[inline]
    fn div(self, b: DD) -> DD {
        let q1 = self.hi / b.hi;
        if !q1.is_finite() || q1 == 0.0 {
            return DD::new(q1);
        }
        let r = self - b * q1;
        let q2 = r.hi / b.hi;
        let r = r - b * q2;
        let q3 = r.hi / b.hi;
        let (hi, lo) = quick_two_sum(q1, q2);
        DD { hi, lo } + q3
    }
}

impl Div<f64> for DD {
    type Output = DD;
    #[inline]
    fn div(self, b: f64) -> DD {
        self / DD::new(b)
    }
}

#[cfg(test)]
mod tests {
    use super::DD;

    #[test]
    fn exp_and_ln_invert_each_other_to_double_double_precision() {
        // Below e^-650 the trailing part turns subnormal and the pair degrades towards f64
        // precision (still far below an f64 ulp of the result), so the range stops there.
        for &x in &[-650.0, -3.5, -1e-10, 0.0, 1e-20, 0.5, 1.0, 10.0, 700.0] {
            let y = DD::new(x).exp().ln();
            assert!(
                (y - x).to_f64().abs() <= 1e-29 * x.abs().max(1.0),
                "x = {x}: {y:?}"
            );
        }
        assert_eq!(DD::ONE.exp().hi, core::f64::consts::E);
    }

    #[test]
    fn sinpi_is_exact_at_integers_and_halves() {
        assert_eq!(DD::new(3.0).sinpi().to_f64(), 0.0);
        assert_eq!(DD::new(2.5).sinpi().to_f64(), 1.0);
        assert_eq!(DD::new(-0.5).sinpi().to_f64(), -1.0);
        assert_eq!(DD::new(1.0).cospi().to_f64(), -1.0);
    }
}
