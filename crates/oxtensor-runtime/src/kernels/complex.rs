//! Complex arithmetic with NumPy's semantics: the reference definition of every elementwise
//! function of `complex64` and `complex128` values, one value at a time.
//!
//! Arithmetic (`+`, `-`, `*`, `/`) runs in the dtype's own precision, as NumPy's loops do;
//! division uses Smith's scaling, as NumPy does, so it neither overflows nor underflows for
//! representable quotients. Transcendental functions are evaluated in `complex128` (by
//! `num-complex`, whose branch cuts are C99's and NumPy's) and rounded for `complex64`.
//! Comparisons, `maximum`, `minimum` and `clip` use NumPy's lexicographic order (real parts
//! first), which is the `PartialOrd` of [`oxtensor_data::Complex`].

use super::layout::strided::Accumulate;
use super::reduce::Num;
use super::scalar::Arith;
use num_complex::Complex64 as Nc;
use oxtensor_data::{C64, C128, Complex, Element};

/// A complex dtype's element: what the elementwise kernel needs beyond [`Arith`].
pub trait ComplexFloat: Arith {
    /// Evaluates a `complex128` function at this value and rounds the result to `Self`.
    #[inline(always)]
    fn via_c128(self, f: impl Fn(C128) -> C128) -> Self {
        Self::from_c128(f(self.to_c128()))
    }
    /// `a / b`.
    fn div(self, b: Self) -> Self;
    /// The real part, as `f64`.
    fn re64(self) -> f64;
    /// The imaginary part, as `f64`.
    fn im64(self) -> f64;
    /// The complex conjugate.
    fn conj(self) -> Self;
}

/// `a / b` by Smith's method, as NumPy's complex division: scaling by the larger part of the
/// divisor keeps intermediate products in range. A zero divisor divides each part of `a` by
/// the matching (signed-zero) part's magnitude, giving NumPy's infinities and NaNs.
macro_rules! smith_div {
    ($a:expr, $b:expr) => {{
        let (a, b) = ($a, $b);
        let (abs_br, abs_bi) = (b.re.abs(), b.im.abs());
        if abs_br >= abs_bi {
            if abs_br == 0.0 && abs_bi == 0.0 {
                Complex::new(a.re / abs_br, a.im / abs_bi)
            } else {
                let rat = b.im / b.re;
                let scl = 1.0 / (b.re + b.im * rat);
                Complex::new((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl)
            }
        } else {
            let rat = b.re / b.im;
            let scl = 1.0 / (b.im + b.re * rat);
            Complex::new((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl)
        }
    }};
}

/// True when either part is NaN.
#[inline(always)]
#[allow(clippy::eq_op)]
fn has_nan<T: Element + PartialEq>(z: T) -> bool {
    z != z
}

macro_rules! complex_arith {
    ($c:ty, $part:ty) => {
        impl Arith for $c {
            #[inline(always)]
            fn add(self, b: Self) -> Self {
                Complex::new(self.re + b.re, self.im + b.im)
            }
            #[inline(always)]
            fn sub(self, b: Self) -> Self {
                Complex::new(self.re - b.re, self.im - b.im)
            }
            #[inline(always)]
            fn mul(self, b: Self) -> Self {
                Complex::new(
                    self.re * b.re - self.im * b.im,
                    self.re * b.im + self.im * b.re,
                )
            }
            /// Not defined for complex numbers (the graph rejects it): NaN.
            #[inline]
            fn floor_div(self, _b: Self) -> Self {
                Complex::new(<$part>::NAN, <$part>::NAN)
            }
            /// Not defined for complex numbers (the graph rejects it): NaN.
            #[inline]
            fn modulo(self, _b: Self) -> Self {
                Complex::new(<$part>::NAN, <$part>::NAN)
            }
            #[inline]
            fn power(self, b: Self) -> Self {
                Self::from_c128(power(self.to_c128(), b.to_c128()))
            }
            #[inline(always)]
            fn neg(self) -> Self {
                Complex::new(-self.re, -self.im)
            }
            #[inline]
            fn absolute(self) -> Self {
                Complex::new(self.re.hypot(self.im), 0.0)
            }
            #[inline]
            fn sign(self) -> Self {
                let r = self.re.hypot(self.im);
                if r == 0.0 {
                    Complex::new(0.0, 0.0)
                } else {
                    Complex::new(self.re / r, self.im / r)
                }
            }
            #[inline(always)]
            fn square(self) -> Self {
                Arith::mul(self, self)
            }
            #[inline]
            fn np_maximum(self, b: Self) -> Self {
                if has_nan(self) || (!has_nan(b) && self > b) {
                    self
                } else {
                    b
                }
            }
            #[inline]
            fn np_minimum(self, b: Self) -> Self {
                if has_nan(self) || (!has_nan(b) && self < b) {
                    self
                } else {
                    b
                }
            }
            #[inline]
            fn clip(self, lo: Self, hi: Self) -> Self {
                self.np_maximum(lo).np_minimum(hi)
            }
            #[inline(always)]
            fn below_zero(self) -> bool {
                false
            }
        }

        impl ComplexFloat for $c {
            #[inline]
            fn div(self, b: Self) -> Self {
                smith_div!(self, b)
            }
            #[inline(always)]
            fn re64(self) -> f64 {
                f64::from(self.re)
            }
            #[inline(always)]
            fn im64(self) -> f64 {
                f64::from(self.im)
            }
            #[inline(always)]
            fn conj(self) -> Self {
                Complex::new(self.re, -self.im)
            }
        }

        impl Accumulate for $c {
            #[inline]
            fn accumulate(self, other: Self) -> Self {
                self.add(other)
            }
        }

        impl super::reduce::Arith for $c {
            const ZERO: Self = Complex::new(0.0, 0.0);
            const ONE: Self = Complex::new(1.0, 0.0);
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                Arith::add(self, other)
            }
            #[inline(always)]
            fn mul(self, other: Self) -> Self {
                Arith::mul(self, other)
            }
        }

        impl Num for $c {
            type SumAcc = C128;
            type Out = $c;
            const LOWEST: Self = Complex::new(<$part>::NEG_INFINITY, <$part>::NEG_INFINITY);
            const HIGHEST: Self = Complex::new(<$part>::INFINITY, <$part>::INFINITY);
            #[inline(always)]
            fn sum_acc(self) -> C128 {
                self.to_c128()
            }
            #[inline(always)]
            fn prod_acc(self) -> $c {
                self
            }
            #[inline(always)]
            fn sum_out(acc: C128) -> $c {
                <$c>::from_c128(acc)
            }
        }
    };
}

complex_arith!(C64, f32);
complex_arith!(C128, f64);

/// Converts to `num-complex`'s type, for its transcendental functions.
#[inline(always)]
fn nc(z: C128) -> Nc {
    Nc::new(z.re, z.im)
}

/// Converts back from `num-complex`'s type.
#[inline(always)]
fn ox(z: Nc) -> C128 {
    C128::new(z.re, z.im)
}

/// `a ** b` as NumPy's `nc_pow`: exact repeated multiplication for small integer exponents
/// (so `z ** 2 == z * z`), `1` for a zero exponent, `0` for a zero base with a positive real
/// exponent, and `exp(b·log a)` otherwise.
pub fn power(a: C128, b: C128) -> C128 {
    if b.re == 0.0 && b.im == 0.0 {
        return C128::new(1.0, 0.0);
    }
    if a.re == 0.0 && a.im == 0.0 {
        return if b.re > 0.0 && b.im == 0.0 {
            C128::new(0.0, 0.0)
        } else {
            C128::new(f64::NAN, f64::NAN)
        };
    }
    if b.im == 0.0 && b.re == b.re.trunc() && b.re.abs() <= 100.0 {
        let n = b.re.abs() as u32;
        let (mut acc, mut base, mut k) = (C128::new(1.0, 0.0), a, n);
        while k > 0 {
            if k & 1 == 1 {
                acc = acc.mul(base);
            }
            base = base.mul(base);
            k >>= 1;
        }
        return if b.re < 0.0 {
            C128::new(1.0, 0.0).div(acc)
        } else {
            acc
        };
    }
    ox(nc(a).powc(nc(b)))
}

/// `eᶻ − 1`, accurate near zero (NumPy's `nc_expm1`).
pub fn expm1(z: C128) -> C128 {
    let half = (z.im / 2.0).sin();
    C128::new(
        z.re.exp_m1() * z.im.cos() - 2.0 * half * half,
        z.re.exp() * z.im.sin(),
    )
}

/// `log(1 + z)` (NumPy's `nc_log1p`).
pub fn log1p(z: C128) -> C128 {
    let re = z.re + 1.0;
    C128::new(re.hypot(z.im).ln(), z.im.atan2(re))
}

/// The complex functions of one argument that the elementwise kernel computes, by the
/// [`oxtensor_graph::ScalarOp`] that names them; `None` for an op that is not one of them.
pub fn unary(op: oxtensor_graph::ScalarOp) -> Option<fn(C128) -> C128> {
    use oxtensor_graph::ScalarOp::*;
    Some(match op {
        Sqrt => |z| ox(nc(z).sqrt()),
        Reciprocal => |z| C128::new(1.0, 0.0).div(z),
        Exp => |z| ox(nc(z).exp()),
        Exp2 => |z| ox(nc(z).exp2()),
        Expm1 => expm1,
        Log => |z| ox(nc(z).ln()),
        Log2 => |z| ox(nc(z).log2()),
        Log10 => |z| ox(nc(z).log10()),
        Log1p => log1p,
        Sin => |z| ox(nc(z).sin()),
        Cos => |z| ox(nc(z).cos()),
        Tan => |z| ox(nc(z).tan()),
        Arcsin => |z| ox(nc(z).asin()),
        Arccos => |z| ox(nc(z).acos()),
        Arctan => |z| ox(nc(z).atan()),
        Sinh => |z| ox(nc(z).sinh()),
        Cosh => |z| ox(nc(z).cosh()),
        Tanh => |z| ox(nc(z).tanh()),
        Arcsinh => |z| ox(nc(z).asinh()),
        Arccosh => |z| ox(nc(z).acosh()),
        Arctanh => |z| ox(nc(z).atanh()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn division_scales_like_numpy() {
        let big = C128::new(1e300, 1e300);
        let q = big.div(big);
        assert_eq!(q, C128::new(1.0, 0.0));
        let z = C128::new(1.0, 2.0).div(C128::new(0.0, 0.0));
        assert!(z.re.is_infinite() && z.im.is_infinite());
    }

    #[test]
    fn integer_powers_multiply_exactly() {
        let z = C128::new(1.5, -0.25);
        assert_eq!(power(z, C128::new(2.0, 0.0)), z.mul(z));
        assert_eq!(power(z, C128::new(0.0, 0.0)), C128::new(1.0, 0.0));
        let inv = power(z, C128::new(-1.0, 0.0));
        let one = inv.mul(z);
        assert!((one.re - 1.0).abs() < 1e-15 && one.im.abs() < 1e-15);
    }

    #[test]
    fn maximum_is_lexicographic_and_propagates_nan() {
        let a = C64::new(1.0, 5.0);
        let b = C64::new(1.0, 6.0);
        assert_eq!(a.np_maximum(b), b);
        assert_eq!(a.np_minimum(b), a);
        let n = C64::new(0.0, f32::NAN);
        assert!(has_nan(a.np_maximum(n)) && has_nan(n.np_minimum(a)));
    }
}
