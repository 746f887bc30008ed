//! The element type of the complex dtypes.

use std::cmp::Ordering;

/// A complex number stored as NumPy and C99 store it: the real part, then the imaginary part.
///
/// This is the in-memory element of `complex64` ([`C64`]) and `complex128` ([`C128`]). It holds
/// data and defines NumPy's ordering; the arithmetic and the functions of complex numbers live
/// with the kernels that compute them.
///
/// The order is NumPy's for complex numbers: lexicographic, real parts first, so `sort`,
/// `maximum` and comparisons behave as in NumPy. A NaN in either compared part makes the pair
/// unordered.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Complex<T> {
    /// The real part.
    pub re: T,
    /// The imaginary part.
    pub im: T,
}

/// NumPy's `complex64`: two `float32` parts.
pub type C64 = Complex<f32>;
/// NumPy's `complex128`: two `float64` parts.
pub type C128 = Complex<f64>;

impl<T> Complex<T> {
    /// The number `re + im·i`.
    pub const fn new(re: T, im: T) -> Self {
        Complex { re, im }
    }
}

impl<T: PartialOrd> PartialOrd for Complex<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match self.re.partial_cmp(&other.re)? {
            Ordering::Equal => self.im.partial_cmp(&other.im),
            unequal => Some(unequal),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_lexicographically_as_numpy() {
        let a = C128::new(1.0, 5.0);
        let b = C128::new(2.0, -1.0);
        let c = C128::new(1.0, 6.0);
        assert!(a < b && a < c && c < b);
        assert!(C128::new(f64::NAN, 0.0).partial_cmp(&a).is_none());
        assert!(C128::new(1.0, f64::NAN).partial_cmp(&a).is_none());
        assert_eq!(std::mem::size_of::<C64>(), 8);
        assert_eq!(std::mem::size_of::<C128>(), 16);
    }
}
