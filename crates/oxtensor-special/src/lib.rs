#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]
//! Scalar special functions for oxtensor, with SciPy's semantics.

mod bessel_ik;
mod bessel_j;
mod beta;
mod dd;
mod elementary;
mod erf;
mod exports;
mod gamma;
mod hyp2f1;
mod incbeta;
mod incgamma;
mod owens;
mod psi;

pub use bessel_ik::{i0, i0e, i1, i1e, iv, ive, kn, kv, kve};
pub use bessel_j::{j0, j1, jv};
pub use beta::{beta, betaln};
pub use elementary::{expit, log1mexp, logit, xlog1py, xlogy};
pub use erf::{erfcinv, erfcx, erfinv};
pub use exports::{EXPORTS, EntryF64, Export, c_declarations, f32, find};
pub use gamma::{factorial, gamma, gammaln, gammaln as lgamma, poch};
pub use hyp2f1::hyp2f1;
pub use incbeta::{betainc, betaincinv};
pub use incgamma::{chi2sf, gammainc, gammaincc, gammainccinv, gammaincinv};
pub use owens::owens_t;
pub use psi::{digamma, digamma as psi, polygamma, trigamma};
