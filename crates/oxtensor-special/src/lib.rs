#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]
//! Scalar special functions for oxtensor, with SciPy's semantics.

mod dd;
mod gamma;
mod psi;

pub use gamma::{factorial, gamma, gammaln, poch};
pub use psi::{digamma, polygamma, trigamma};
