use crate::{C64, C128, DType};
use std::fmt::Debug;

/// A Rust type that is the in-memory representation of one [`DType`].
///
/// Conversions follow NumPy's `astype`: float to integer truncates toward zero (saturating for
/// out-of-range values, where NumPy's result is unspecified), integer to integer wraps, anything
/// to `bool` tests for non-zero, complex to real keeps the real part (NumPy warns and does the
/// same), real to complex has a zero imaginary part.
///
/// # Safety
/// Implementors must be plain data with no padding, of exactly `DTYPE.size()` bytes, such that a
/// tensor's byte storage may be reinterpreted as a slice of `Self`. For `bool` this additionally
/// relies on every byte written into bool storage being 0 or 1, which `Tensor` guarantees by
/// normalising external bool buffers on entry.
pub unsafe trait Element:
    Copy + Send + Sync + PartialOrd + Debug + Default + 'static
{
    /// The dtype this type represents.
    const DTYPE: DType;
    /// Value as `f64` (rounding for 64-bit integers beyond 2^53).
    fn to_f64(self) -> f64;
    /// Value as `i64` (wrapping for `u64`, truncating for floats).
    fn to_i64(self) -> i64;
    /// Value as `u64` (wrapping for negative integers, truncating for floats).
    fn to_u64(self) -> u64;
    /// Truth value: non-zero (NaN is true, as in NumPy).
    fn to_bool(self) -> bool;
    /// From an `f64`, with `as` semantics.
    fn from_f64(v: f64) -> Self;
    /// From an `i64`, wrapping.
    fn from_i64(v: i64) -> Self;
    /// From a `u64`, wrapping.
    fn from_u64(v: u64) -> Self;
    /// From a truth value (0 or 1).
    fn from_bool(v: bool) -> Self;
    /// Value as the real and imaginary parts of a `complex128` (zero imaginary part for the
    /// real dtypes).
    #[inline]
    fn to_c128(self) -> C128 {
        C128::new(self.to_f64(), 0.0)
    }
    /// From a `complex128`: the real dtypes keep the real part, with `as` semantics.
    #[inline]
    fn from_c128(v: C128) -> Self {
        Self::from_f64(v.re)
    }

    /// Converts any element to this type with NumPy `astype` semantics.
    #[inline]
    fn cast_from<S: Element>(s: S) -> Self {
        match S::DTYPE {
            DType::C64 | DType::C128 => Self::from_c128(s.to_c128()),
            DType::F32 | DType::F64 => Self::from_f64(s.to_f64()),
            DType::Bool => Self::from_bool(s.to_bool()),
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => Self::from_u64(s.to_u64()),
            DType::I8 | DType::I16 | DType::I32 | DType::I64 => Self::from_i64(s.to_i64()),
        }
    }
}

macro_rules! numeric_element {
    ($t:ty, $dt:ident, $zero:expr) => {
        // SAFETY: a primitive number type with no padding and the dtype's exact size.
        unsafe impl Element for $t {
            const DTYPE: DType = DType::$dt;
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn to_i64(self) -> i64 {
                self as i64
            }
            #[inline]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline]
            #[allow(clippy::float_cmp)]
            fn to_bool(self) -> bool {
                self != $zero
            }
            #[inline]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline]
            fn from_u64(v: u64) -> Self {
                v as $t
            }
            #[inline]
            fn from_bool(v: bool) -> Self {
                (v as u8) as $t
            }
        }
    };
}

numeric_element!(i8, I8, 0);
numeric_element!(i16, I16, 0);
numeric_element!(i32, I32, 0);
numeric_element!(i64, I64, 0);
numeric_element!(u8, U8, 0);
numeric_element!(u16, U16, 0);
numeric_element!(u32, U32, 0);
numeric_element!(u64, U64, 0);
numeric_element!(f32, F32, 0.0);
numeric_element!(f64, F64, 0.0);

// SAFETY: `bool` is one byte; storage holding bools only ever contains 0 or 1 (see the trait).
unsafe impl Element for bool {
    const DTYPE: DType = DType::Bool;
    #[inline]
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    #[inline]
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline]
    fn to_u64(self) -> u64 {
        self as u64
    }
    #[inline]
    fn to_bool(self) -> bool {
        self
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    #[inline]
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    #[inline]
    fn from_u64(v: u64) -> Self {
        v != 0
    }
    #[inline]
    fn from_bool(v: bool) -> Self {
        v
    }
}

macro_rules! complex_element {
    ($t:ty, $part:ty, $dt:ident) => {
        // SAFETY: `Complex` is `repr(C)` with two fields of the same float type, so it has no
        // padding and is exactly twice the part's size, which is `DType::size` of the dtype.
        unsafe impl Element for $t {
            const DTYPE: DType = DType::$dt;
            #[inline]
            fn to_f64(self) -> f64 {
                self.re as f64
            }
            #[inline]
            fn to_i64(self) -> i64 {
                self.re as i64
            }
            #[inline]
            fn to_u64(self) -> u64 {
                self.re as u64
            }
            #[inline]
            fn to_bool(self) -> bool {
                self.re != 0.0 || self.im != 0.0
            }
            #[inline]
            fn from_f64(v: f64) -> Self {
                <$t>::new(v as $part, 0.0)
            }
            #[inline]
            fn from_i64(v: i64) -> Self {
                <$t>::new(v as $part, 0.0)
            }
            #[inline]
            fn from_u64(v: u64) -> Self {
                <$t>::new(v as $part, 0.0)
            }
            #[inline]
            fn from_bool(v: bool) -> Self {
                <$t>::new(u8::from(v) as $part, 0.0)
            }
            #[inline]
            fn to_c128(self) -> C128 {
                C128::new(self.re as f64, self.im as f64)
            }
            #[inline]
            fn from_c128(v: C128) -> Self {
                <$t>::new(v.re as $part, v.im as $part)
            }
        }
    };
}

complex_element!(C64, f32, C64);
complex_element!(C128, f64, C128);

/// Runs `$body` with the type alias `$T` bound to the Rust type of the runtime dtype `$dt`.
///
/// This is how dtype-erased code reaches generic kernels:
/// `dispatch_dtype!(t.dtype(), T => sum_kernel::<T>(&t))`.
#[macro_export]
macro_rules! dispatch_dtype {
    ($dt:expr, $T:ident => $body:expr) => {
        match $dt {
            $crate::DType::Bool => {
                type $T = bool;
                $body
            }
            $crate::DType::I8 => {
                type $T = i8;
                $body
            }
            $crate::DType::I16 => {
                type $T = i16;
                $body
            }
            $crate::DType::I32 => {
                type $T = i32;
                $body
            }
            $crate::DType::I64 => {
                type $T = i64;
                $body
            }
            $crate::DType::U8 => {
                type $T = u8;
                $body
            }
            $crate::DType::U16 => {
                type $T = u16;
                $body
            }
            $crate::DType::U32 => {
                type $T = u32;
                $body
            }
            $crate::DType::U64 => {
                type $T = u64;
                $body
            }
            $crate::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::DType::F64 => {
                type $T = f64;
                $body
            }
            $crate::DType::C64 => {
                type $T = $crate::C64;
                $body
            }
            $crate::DType::C128 => {
                type $T = $crate::C128;
                $body
            }
        }
    };
}
