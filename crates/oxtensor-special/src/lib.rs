#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]
//! Scalar special functions for oxtensor, with SciPy's semantics.

mod beta;
mod dd;
mod erf;
mod gamma;
mod incgamma;
mod psi;

pub use beta::{beta, betaln};
pub use erf::{erfcinv, erfcx, erfinv};
pub use gamma::{factorial, gamma, gammaln, poch};
pub use incgamma::{chi2sf, gammainc, gammaincc, gammainccinv, gammaincinv};
pub use psi::{digamma, polygamma, trigamma};
