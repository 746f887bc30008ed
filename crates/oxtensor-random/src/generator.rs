//! `Generator`: NumPy's `np.random.Generator` over [`Pcg64`], the owner of every distribution
//! method (they live in the sibling modules, one `impl Generator` block per family).

use crate::pcg64::{Pcg64, Pcg64State};
use crate::seed_sequence::SeedSequence;
use crate::ziggurat;

/// A random generator drawing the same streams as `np.random.default_rng(seed)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generator {
    pub(crate) bitgen: Pcg64,
}

/// `np.random.default_rng(seed)` for an integer seed.
pub fn default_rng(seed: u128) -> Generator {
    Generator::new(Pcg64::seed_from_u128(seed))
}

impl Generator {
    /// A generator over the given bit generator (`np.random.Generator(PCG64(...))`).
    pub fn new(bitgen: Pcg64) -> Self {
        Self { bitgen }
    }

    /// A generator seeded from a [`SeedSequence`] (`default_rng(SeedSequence(...))`).
    pub fn from_seed_sequence(seq: &SeedSequence) -> Self {
        Self::new(Pcg64::from_seed_sequence(seq))
    }

    /// The underlying bit generator.
    pub fn bit_generator(&self) -> &Pcg64 {
        &self.bitgen
    }

    /// The underlying bit generator, mutable (to advance or read raw words).
    pub fn bit_generator_mut(&mut self) -> &mut Pcg64 {
        &mut self.bitgen
    }

    /// The bit generator's full state (NumPy's `rng.bit_generator.state`).
    pub fn state(&self) -> Pcg64State {
        self.bitgen.state()
    }

    /// Restores a state saved with [`state`](Self::state) (NumPy's
    /// `rng.bit_generator.state = ...`).
    pub fn set_state(&mut self, state: Pcg64State) {
        self.bitgen = Pcg64::from_state(state);
    }

    /// `random()`: a double uniform on `[0, 1)`.
    #[inline]
    pub fn random(&mut self) -> f64 {
        self.bitgen.next_f64()
    }

    /// `random(dtype=float32)`: a float uniform on `[0, 1)`.
    pub fn random_f32(&mut self) -> f32 {
        self.bitgen.next_f32()
    }

    /// `standard_normal()`: ziggurat draw of N(0, 1).
    #[inline]
    pub fn standard_normal(&mut self) -> f64 {
        ziggurat::standard_normal(&mut self.bitgen)
    }

    /// `standard_normal(dtype=float32)`.
    pub fn standard_normal_f32(&mut self) -> f32 {
        ziggurat::standard_normal_f32(&mut self.bitgen)
    }

    /// `standard_exponential()` (method "zig"): Exp(1).
    #[inline]
    pub fn standard_exponential(&mut self) -> f64 {
        ziggurat::standard_exponential(&mut self.bitgen)
    }

    /// `standard_exponential(dtype=float32)` (method "zig").
    pub fn standard_exponential_f32(&mut self) -> f32 {
        ziggurat::standard_exponential_f32(&mut self.bitgen)
    }

    /// Fills `out` with `low + range * random()`, NumPy's `uniform(low, low + range)` draws
    /// in order (the caller checks the range). The loop works on a local copy of the bit
    /// generator, so its state stays in registers.
    pub fn fill_uniform(&mut self, low: f64, range: f64, out: &mut [f64]) {
        let mut bitgen = self.bitgen.clone();
        for o in out.iter_mut() {
            *o = low + range * bitgen.next_f64();
        }
        self.bitgen = bitgen;
    }

    /// Fills `out` with `loc + scale * standard_normal()`, NumPy's `normal(loc, scale)` draws
    /// in order (the caller checks `scale`).
    pub fn fill_normal(&mut self, loc: f64, scale: f64, out: &mut [f64]) {
        let mut bitgen = self.bitgen.clone();
        for o in out.iter_mut() {
            *o = loc + scale * ziggurat::standard_normal(&mut bitgen);
        }
        self.bitgen = bitgen;
    }

    /// Fills `out` with `scale * standard_exponential()`, NumPy's `exponential(scale)` draws
    /// in order (the caller checks `scale`).
    pub fn fill_exponential(&mut self, scale: f64, out: &mut [f64]) {
        let mut bitgen = self.bitgen.clone();
        for o in out.iter_mut() {
            *o = scale * ziggurat::standard_exponential(&mut bitgen);
        }
        self.bitgen = bitgen;
    }
}
