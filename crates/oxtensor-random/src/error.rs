//! The error type of this crate: a parameter outside the domain a distribution accepts.
//!
//! The checks are NumPy's constraint checks (`numpy/random/_common.pyx`), NaN included: where
//! NumPy lets a NaN through (`CONS_NON_NEGATIVE` rejects only non-NaN values with the sign bit
//! set, `-0.0` included; `CONS_POSITIVE` rejects `value <= 0`, which a NaN is not), the
//! distribution draws what NumPy draws, usually NaN, consuming the same words; where NumPy
//! rejects a NaN (`CONS_BOUNDED_0_1`, Poisson's `lam`, `CONS_POSITIVE_NOT_NAN`, ...) so does
//! this crate. Each message starts with the text of NumPy's `ValueError` for the same argument
//! (`scale < 0`, `p < 0, p > 1 or p is NaN`, ...), then says what was expected and what was
//! given.

use std::fmt;

/// A distribution or generator parameter that NumPy would reject with `ValueError`.
///
/// It names the argument and says what was expected, so callers can pass the message on.
#[derive(Debug, Clone, PartialEq)]
pub struct RandomError {
    /// The argument name as NumPy spells it (`scale`, `p`, `alpha`, ...).
    pub argument: &'static str,
    /// What the argument must satisfy, and what it was.
    pub message: String,
}

impl RandomError {
    /// An error for `argument` with a message saying what was expected.
    pub fn new(argument: &'static str, message: impl Into<String>) -> Self {
        Self {
            argument,
            message: message.into(),
        }
    }
}

impl fmt::Display for RandomError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid `{}`: {}", self.argument, self.message)
    }
}

impl std::error::Error for RandomError {}

/// Result of a fallible draw.
pub type Result<T> = std::result::Result<T, RandomError>;

/// NumPy's `CONS_NON_NEGATIVE`: an error when `value` is not NaN and has its sign bit set
/// (so `-0.0` is rejected and NaN passes, as in NumPy).
pub fn non_negative(argument: &'static str, value: f64) -> Result<()> {
    if value.is_nan() || value.is_sign_positive() {
        Ok(())
    } else {
        Err(RandomError::new(
            argument,
            format!("{argument} < 0 (expected a number >= 0, got {value})"),
        ))
    }
}

/// NumPy's `CONS_POSITIVE`: an error when `value <= 0` (NaN passes, as in NumPy).
pub fn positive(argument: &'static str, value: f64) -> Result<()> {
    if value > 0.0 || value.is_nan() {
        Ok(())
    } else {
        Err(RandomError::new(
            argument,
            format!("{argument} <= 0 (expected a number > 0, got {value})"),
        ))
    }
}

/// Checks that `value` lies in `[0, 1]` (NumPy's `CONS_BOUNDED_0_1`, which rejects NaN).
pub(crate) fn probability(argument: &'static str, value: f64) -> Result<()> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(RandomError::new(
            argument,
            format!(
                "{argument} < 0, {argument} > 1 or {argument} is NaN (expected a probability in [0, 1], got {value})"
            ),
        ))
    }
}

/// NumPy's `CONS_POSITIVE_NOT_NAN`: an error when `value` is NaN or `value <= 0`.
pub(crate) fn positive_not_nan(argument: &'static str, value: f64) -> Result<()> {
    if value.is_nan() {
        return Err(RandomError::new(
            argument,
            format!("{argument} must not be NaN (expected a number > 0, got {value})"),
        ));
    }
    positive(argument, value)
}

/// Checks that `value` is finite (NaN is not).
pub(crate) fn finite(argument: &'static str, value: f64) -> Result<()> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(RandomError::new(
            argument,
            format!(
                "{argument} range exceeds valid bounds (expected a finite number, got {value})"
            ),
        ))
    }
}
