use faer::traits::RealField;
use oxtensor_data::Element;
use std::fmt::Debug;
use std::ops::Neg;

/// The floating-point element types the kernels run on (`f32` and `f64`).
///
/// Combines faer's field trait (for its factorisations) with oxtensor's [`Element`] (for
/// reading and writing tensors) and the few elementary functions the kernels need.
pub trait Real:
    RealField + Element + Copy + Send + Sync + Neg<Output = Self> + PartialOrd + Debug
{
    /// Converts from `f64` (rounding for `f32`).
    fn lit(x: f64) -> Self;
    /// Converts to `f64` (exact).
    fn as_f64(self) -> f64;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// True unless NaN or infinite.
    fn is_finite(self) -> bool;
    /// Not a number.
    fn nan() -> Self;
    /// Machine epsilon.
    fn eps() -> Self;
    /// `self * a + b` with one rounding (a fused multiply-add where the CPU has one).
    fn mul_add(self, a: Self, b: Self) -> Self;
}

macro_rules! impl_real {
    ($t:ty) => {
        impl Real for $t {
            fn lit(x: f64) -> Self {
                x as $t
            }
            fn as_f64(self) -> f64 {
                self as f64
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            fn nan() -> Self {
                <$t>::NAN
            }
            fn eps() -> Self {
                <$t>::EPSILON
            }
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                <$t>::mul_add(self, a, b)
            }
        }
    };
}

impl_real!(f32);
impl_real!(f64);
