//! Random variables: generators as graph values and the draws built on them.
//!
//! A generator is a `uint64` vector holding NumPy's PCG64 state
//! ([`RNG_WORDS`](oxtensor_graph::random::RNG_WORDS) words); a draw takes one and returns the
//! next one with the values, so graphs stay pure. Keep a generator in a shared variable and
//! store the next generator back with an update to advance it on each call:
//!
//! ```
//! use oxtensor::random::{self, shared_rng};
//! use oxtensor::{function, ops, Var};
//!
//! let rng = shared_rng(42, Some("rng"));
//! let size = ops::random::size_vector(Some(&[Var::int_constant(3)])).unwrap();
//! let (next, x) = random::standard_normal(&rng, Some(&size)).unwrap();
//! let f = function(&[], &[x]).updates(&[(rng.clone(), next)]).build().unwrap();
//! let first = f.call(&[]).unwrap();
//! // np.random.default_rng(42).standard_normal(3)[0]
//! assert_eq!(first[0].to_vec_as::<f64>()[0], 0.30471707975443135);
//! let second = f.call(&[]).unwrap();
//! assert_ne!(first[0].to_vec_as::<f64>(), second[0].to_vec_as::<f64>());
//! ```

use crate::Error;
use oxtensor_data::Tensor;
use oxtensor_graph::Var;

pub use oxtensor_graph::build::random::{
    Draw, integers, normal, random_variable, size_vector, standard_normal, uniform,
};
pub use oxtensor_graph::random::{Distribution, RNG_DTYPE, RNG_WORDS, RandomOp};
pub use oxtensor_random::{Generator, Pcg64, Pcg64State, SeedSequence, default_rng};
pub use oxtensor_runtime::kernels::random::{generator_from_tensor, generator_to_tensor};

/// A shared generator variable seeded like `np.random.default_rng(seed)`.
#[track_caller]
pub fn shared_rng(seed: u128, name: Option<&str>) -> Var {
    crate::shared(generator_to_tensor(&default_rng(seed)), name)
}

/// The generator a shared generator variable currently holds.
pub fn get_generator(v: &Var) -> Result<Generator, Error> {
    let t: Tensor = crate::get_value(v)?;
    generator_from_tensor(&t).map_err(|e| Error::Update(format!("{}: {e}", v.describe())))
}

/// Stores generator `g`'s state in the shared generator variable `v`.
pub fn set_generator(v: &Var, g: &Generator) -> Result<(), Error> {
    crate::set_value(v, generator_to_tensor(g))
}
