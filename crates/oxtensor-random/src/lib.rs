#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]
//! NumPy-compatible random numbers, the numeric foundation of oxtensor's random variables
//! (PyTensor's `pt.random`).
//!
//! * [`SeedSequence`] — NumPy's seed mixing, so the same seed gives the same state.
//! * [`Pcg64`] — NumPy's default bit generator, with its 32-bit buffering, `advance` and
//!   `jumped`, and a plain [`Pcg64State`] that round-trips with `bit_generator.state`.
//! * [`Generator`] / [`default_rng`] — NumPy's `Generator` distributions, drawing the same
//!   words in the same order as NumPy 2.x.
//!
//! # Stream identity with NumPy
//!
//! Checked against fixtures written by NumPy 2.4 (`tests/fixtures/make_fixtures.py`).
//! "Bitwise" means every draw has the same bits. Distributions that go through `exp`, `log`,
//! `pow`, `cos`, `acos` call the platform's C math library here, as NumPy does; on glibc they are
//! bitwise identical too, elsewhere a result may differ by an ulp or two (and, very rarely, an
//! accept/reject decision may flip), so their tests allow the tolerance shown.
//!
//! | method | algorithm | test tolerance |
//! |---|---|---|
//! | `next_u64`, `next_u32`, `next_f64`, `next_f32`, `advance`, `jumped`, seeding | PCG64 XSL-RR | bitwise |
//! | `random`, `random_f32`, `uniform` | 53/24-bit uniform | bitwise |
//! | `standard_normal(_f32)`, `normal`, `halfnormal`, `standard_cauchy` | ziggurat | bitwise |
//! | `standard_exponential(_f32)`, `exponential` | ziggurat | bitwise |
//! | `integers`, `integers_i32` (Lemire and masked), `permutation`, `shuffle` | bounded ints | bitwise |
//! | `bernoulli` | `random() < p` | bitwise (not a NumPy method) |
//! | `standard_gamma(_f32)`, `gamma`, `chisquare`, `beta`, `standard_t`, `dirichlet` | Marsaglia–Tsang, Jöhnk | 2 ulp |
//! | `lognormal`, `laplace`, `logistic`, `gumbel`, `pareto`, `weibull`, `wald`, `triangular`, `vonmises` | transforms | 2 ulp |
//! | `geometric`, `poisson`, `binomial`, `negative_binomial`, `hypergeometric`, `multinomial` | search/inversion, PTRS, BTPE, HRUA | exact integers |
//!
//! The ziggurat tables are NumPy's own layer widths, measured from NumPy's draws by
//! `scripts/gen_ziggurat.py` (NumPy's tables differ from the exact ziggurat by ~1e-15, so exact
//! tables would not reproduce its streams); see that script for how.

mod bounded;
mod continuous;
mod discrete;
mod error;
mod gamma;
mod generator;
mod multivariate;
mod pcg64;
mod seed_sequence;
pub mod special;
mod ziggurat;

pub use bounded::BoundedMethod;
pub use discrete::POISSON_LAM_MAX;
pub use error::{RandomError, Result};
pub use generator::{Generator, default_rng};
pub use pcg64::{PCG64_JUMP, PCG64_MULTIPLIER, Pcg64, Pcg64State};
pub use seed_sequence::{DEFAULT_POOL_SIZE, SeedSequence, int_words, u128_words};
