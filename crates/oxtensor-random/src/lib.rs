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
//! ```
//! use oxtensor_random::default_rng;
//!
//! // np.random.default_rng(42): .random(), .standard_normal(), .integers(0, 10)
//! let mut rng = default_rng(42);
//! assert_eq!(rng.random(), 0.7739560485559633);
//! assert_eq!(rng.standard_normal(), -1.0399841062404955);
//! assert_eq!(rng.integers(0, 10, false), Ok(4));
//! ```
//!
//! # Stream identity with NumPy
//!
//! Every method draws the same words in the same order as NumPy 2.x's `Generator` and follows
//! its arithmetic step by step, so the results are the same bits. This is checked against
//! fixtures written by NumPy 2.4.6 with `tests/fixtures/make_fixtures.py`: 232 cases of
//! 20–2000 draws (`tests/draws.rs`) and 23 digests of 200 000 draws that reach the rare
//! branches (`tests/bulk.rs`); every case also checks the generator state afterwards. On this
//! platform (x86-64 Linux, glibc) **every case is bitwise identical**.
//!
//! Draws that go through `exp`, `log`, `log1p`, `expm1`, `pow`, `cos`, `acos` call the
//! platform's C math library, as NumPy does, so on another C library they may differ by an ulp
//! (and, very rarely, an accept/reject step may then go the other way). The tests therefore
//! allow these tolerances:
//!
//! | methods | algorithm | test tolerance |
//! |---|---|---|
//! | seeding, `next_u64`, `next_u32`, `next_f64`, `next_f32`, `advance`, `jumped` | SeedSequence, PCG64 XSL-RR | bitwise |
//! | `random`, `random_f32`, `uniform` | 53/24-bit uniform | bitwise |
//! | `standard_normal(_f32)`, `normal`, `halfnormal`, `standard_cauchy` | ziggurat (256 layers) | bitwise |
//! | `standard_exponential(_f32)`, `exponential` | ziggurat (256 layers) | bitwise |
//! | `integers`, `integers_i32` (Lemire; masked), `interval`, `permutation`, `shuffle` | bounded integers | bitwise |
//! | `bernoulli` | `random() < p` (not a NumPy method) | bitwise |
//! | `standard_gamma(_f32)`, `gamma`, `chisquare`, `standard_t` | Marsaglia–Tsang; Stuart for shape < 1 | 2 ulp |
//! | `beta`, `dirichlet` | Jöhnk (a, b <= 1), gamma ratio; stick-breaking for alpha < 0.1 | 2 ulp |
//! | `lognormal`, `laplace`, `logistic`, `gumbel`, `pareto`, `weibull`, `wald`, `triangular`, `vonmises` | transformations | 2 ulp |
//! | `geometric`, `poisson`, `binomial`, `negative_binomial`, `hypergeometric`, `multinomial` | search/inversion, PTRS, BTPE, HRUA | exact integers |
//!
//! Parameters are checked as NumPy checks them, NaN and `-0.0` included (see
//! [`RandomError`]): a NaN that NumPy lets through draws NumPy's values (usually NaN) from the
//! same words, so the stream continues identically (`tests/nan.rs`, `fixtures/nan.txt`).
//!
//! `halfnormal` is SciPy's `halfnorm.rvs` (`loc + scale * |z|`), which PyTensor uses.
//! `bernoulli` compares one uniform with `p`; SciPy's `bernoulli.rvs` (PyTensor's) draws
//! `binomial(1, p)` instead, which [`Generator::binomial`] reproduces.
//!
//! The ziggurat tables are NumPy's own layer widths, measured from NumPy's draws by
//! `scripts/gen_ziggurat.py`: NumPy's tables differ from the exact ziggurat by about 1e-15, so
//! exact tables would not reproduce its streams (see that script). `log(k!)` for k < 126 comes
//! from `scripts/gen_logfact.py` (mpmath).
//!
//! Not provided: seeding from OS entropy (`default_rng()` without a seed), NumPy's other
//! bit generators and the legacy `RandomState` streams, and the distributions outside this list
//! (`f`, `noncentral_*`, `logseries`, `zipf`, `power`, `rayleigh`, `multivariate_normal`, ...).

mod bounded;
mod choice;
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
pub use choice::{ChoiceScratch, check_probabilities};
pub use discrete::POISSON_LAM_MAX;
pub use error::{
    RandomError, Result, non_negative as check_non_negative, positive as check_positive,
};
pub use generator::{Generator, default_rng};
pub use pcg64::{PCG64_JUMP, PCG64_MULTIPLIER, Pcg64, Pcg64State};
pub use seed_sequence::{DEFAULT_POOL_SIZE, SeedSequence, int_words, u128_words};
