//! [`InPlaceDraws`]: the draws of one random node over a batch shape fixed in advance, with
//! its parameter columns, its draws and its scratch kept between calls, so a caller that
//! fills the parameters in place (a staged loop's host call) draws allocating nothing. It runs
//! the interpreter kernel's own loops ([`draw_scalars`], `categoricals`, `betabinom`,
//! `dirichlets`, `multinomials`, [`mvnormal::mv_normal`], and for a permutation or a choice
//! without replacement the generator's `_into` samplers in [`Shuffle`]), so both draw the
//! same values bit for bit and leave the generator in the same state.

use super::scalar::{Draws, draw_scalars, is_scalar};
use super::shuffle::Shuffle;
use super::{
    Column, Narrow, bad, betabinom, categoricals, dirichlets, generator_from_words,
    generator_words, multinomials, mvnormal,
};
use crate::KernelError;
use oxtensor_data::{DType, Element, broadcast_shapes};
use oxtensor_graph::random::{Distribution, RNG_WORDS, RandomOp};

/// Draws of one random node of a scalar distribution, a categorical, a beta-binomial, a
/// Dirichlet, a multinomial, a multivariate normal (any method), a permutation or a choice
/// without replacement (with or without `p`) over a batch shape fixed in advance: a
/// caller fills the parameters in place ([`Self::load_param`]), draws ([`Self::draw`]) and
/// copies the draws out ([`Self::write`]). Drawing again allocates nothing, except a
/// multivariate normal's `svd` or `eigh` factoring of a covariance that changed.
pub struct InPlaceDraws {
    r: RandomOp,
    batch: Vec<usize>,
    /// The values each batch element draws: its support's extent (1 for a scalar draw).
    support: usize,
    floats: Vec<Column<f64>>,
    ints: Vec<Column<i64>>,
    /// Per parameter, its column in `ints` when it is an integer parameter.
    int_slot: Vec<Option<usize>>,
    arrays: bool,
    narrow: Narrow,
    float_out: Vec<f64>,
    int_out: Vec<i64>,
    mv: mvnormal::MvScratch,
    /// A beta-binomial's probabilities, drawn before its binomials.
    probabilities: Vec<f64>,
    /// A permutation's or a choice's sample (its parameters are then read whole, once).
    shuffle: Option<Shuffle>,
}

impl InPlaceDraws {
    /// The draws of `r` over batch shape `batch` (the draw's shape without its support
    /// dimension) from parameters of dtypes and extents `params`, or `None` when `r` is not a
    /// distribution it draws, a parameter does not broadcast to `batch`, a multivariate
    /// normal's covariance is not square over its mean, or (without a `size`) the
    /// parameters' broadcast batch shape is not `batch`: the kernel then draws (or reports the
    /// error).
    ///
    /// A permutation or a choice has no support dimension the graph tells apart: `batch` is
    /// then its whole draw's shape, which [`Shuffle::new`] splits into a permutation's `size`
    /// and the rows of `x` (a choice has no batch shape).
    pub fn new(r: RandomOp, params: &[(DType, &[usize])], batch: &[usize]) -> Option<InPlaceDraws> {
        let dist = r.dist;
        if matches!(
            dist,
            Distribution::Permutation
                | Distribution::ChoiceWithoutReplacement
                | Distribution::ChoiceWithoutReplacementP
        ) {
            return Self::shuffle(r, params, batch);
        }
        let vector = matches!(dist, Distribution::Dirichlet | Distribution::Multinomial)
            || dist.is_mv_normal();
        if !(is_scalar(dist)
            || matches!(dist, Distribution::Categorical | Distribution::BetaBinom)
            || vector)
            || params.len() != dist.params().len()
            || params.len() > 3
        {
            return None;
        }
        // Each parameter's batch extents and the element count of its core (a categorical's
        // row of probabilities; 1 for a scalar parameter).
        let split: Vec<(&[usize], usize)> = params
            .iter()
            .enumerate()
            .map(|(k, (_, shape))| {
                let at = shape.len().checked_sub(dist.param_core_ndims(k))?;
                Some((&shape[..at], shape[at..].iter().product()))
            })
            .collect::<Option<_>>()?;
        let support = if vector {
            split[dist.support_param()].1
        } else {
            1
        };
        if dist.is_mv_normal() && split[1].1 != support * support {
            return None;
        }
        let mut joined: Vec<usize> = Vec::new();
        for (shape, _) in &split {
            joined = broadcast_shapes(&joined, shape).ok()?.to_vec();
        }
        match r.size_ndim {
            None if joined != batch => return None,
            Some(n) if n != batch.len() || broadcast_shapes(&joined, batch).ok()?[..] != *batch => {
                return None;
            }
            _ => {}
        }
        let count: usize = batch.iter().product();
        let col = |(shape, core): (&[usize], usize)| {
            let repeated = shape.iter().product::<usize>() == 1;
            let len = if repeated { core } else { count * core };
            (repeated, len, core)
        };
        let floats = split
            .iter()
            .map(|&s| {
                let (repeated, len, core) = col(s);
                Column {
                    values: vec![0.0; len],
                    core,
                    repeated,
                }
            })
            .collect();
        let mut ints = Vec::new();
        let mut int_slot = Vec::new();
        for (k, &s) in split.iter().enumerate() {
            if dist.int_param(k) {
                let (repeated, len, core) = col(s);
                int_slot.push(Some(ints.len()));
                ints.push(Column {
                    values: vec![0; len],
                    core,
                    repeated,
                });
            } else {
                int_slot.push(None);
            }
        }
        let arrays =
            r.size_ndim.is_some_and(|n| n > 0) || params.iter().any(|(_, s)| !s.is_empty());
        let (float_out, int_out) = if dist.is_discrete() {
            (Vec::new(), vec![0; count * support])
        } else {
            (vec![0.0; count * support], Vec::new())
        };
        Some(InPlaceDraws {
            r,
            batch: batch.to_vec(),
            support,
            floats,
            ints,
            int_slot,
            arrays,
            narrow: Narrow::of_dtypes(params.iter().map(|(d, _)| *d)),
            float_out,
            int_out,
            mv: mvnormal::MvScratch::default(),
            probabilities: Vec::new(),
            shuffle: None,
        })
    }

    /// [`Self::new`] for a permutation or a choice drawing a sample of extents `shape`: each
    /// parameter is one column of all its values (also held as integers when its dtype is
    /// an integer one, so they are copied exactly).
    fn shuffle(r: RandomOp, params: &[(DType, &[usize])], shape: &[usize]) -> Option<InPlaceDraws> {
        let (shuffle, batch) = Shuffle::new(r, params, shape)?;
        let mut floats = Vec::new();
        let mut ints = Vec::new();
        let mut int_slot = Vec::new();
        for &(dtype, extents) in params {
            let len: usize = extents.iter().product();
            floats.push(Column {
                values: vec![0.0; len],
                core: len,
                repeated: true,
            });
            if dtype.is_int() {
                int_slot.push(Some(ints.len()));
                ints.push(Column {
                    values: vec![0; len],
                    core: len,
                    repeated: true,
                });
            } else {
                int_slot.push(None);
            }
        }
        Some(InPlaceDraws {
            r,
            batch,
            support: shuffle.support(),
            floats,
            ints,
            int_slot,
            arrays: false,
            narrow: Narrow::default(),
            float_out: Vec::new(),
            int_out: Vec::new(),
            mv: mvnormal::MvScratch::default(),
            probabilities: Vec::new(),
            shuffle: Some(shuffle),
        })
    }

    /// True for a permutation or a choice, whose parameters are read whole and once (their
    /// extents are those given to [`Self::new`]), not broadcast to the batch shape.
    pub fn reads_whole_params(&self) -> bool {
        self.shuffle.is_some()
    }

    /// The number of values drawn: the batch shape's element count times the support's
    /// extent (in C order over the batch shape and then the support).
    pub fn count(&self) -> usize {
        self.batch.iter().product::<usize>() * self.support
    }

    /// How many values parameter `k` takes: its core's elements (1 for a scalar parameter)
    /// when one core serves every batch element, else a core per batch element, in C order
    /// over the batch shape and then the core.
    pub fn param_len(&self, k: usize) -> usize {
        self.floats.get(k).map_or(0, |c| c.values.len())
    }

    /// Sets parameter `k` to `values` ([`Self::param_len`] of them, converted as the kernel
    /// converts a parameter tensor's elements); missing values leave the old ones.
    pub fn load_param<S: Element>(&mut self, k: usize, values: impl Iterator<Item = S>) {
        let slot = self.int_slot.get(k).copied().flatten();
        let Some(floats) = self.floats.get_mut(k) else {
            return;
        };
        match slot.and_then(|j| self.ints.get_mut(j)) {
            Some(ints) => {
                for ((f, n), v) in floats.values.iter_mut().zip(&mut ints.values).zip(values) {
                    *f = f64::cast_from(v);
                    *n = i64::cast_from(v);
                }
            }
            None => {
                for (f, v) in floats.values.iter_mut().zip(values) {
                    *f = f64::cast_from(v);
                }
            }
        }
    }

    /// Draws from the generator whose state `words` holds (a generator value's words), with
    /// `size` the draw's `size` input (checked against the batch shape); returns the next
    /// generator's words. Errors as the kernel does, or when `size` is not the batch shape.
    pub fn draw(&mut self, words: &[u64], size: &[i64]) -> Result<[u64; RNG_WORDS], KernelError> {
        let dist = self.r.dist;
        if self.r.size_ndim.is_some()
            && (size.len() != self.batch.len()
                || size
                    .iter()
                    .zip(&self.batch)
                    .any(|(&s, &b)| usize::try_from(s).ok() != Some(b)))
        {
            return Err(KernelError::Shape(format!(
                "{}: size {size:?} is not the batch shape {:?} laid out",
                dist.name(),
                self.batch
            )));
        }
        let mut g = generator_from_words(words)?;
        let count: usize = self.batch.iter().product();
        if let Some(shuffle) = &mut self.shuffle {
            shuffle.draw(&mut g, &self.floats, &self.ints, &self.int_slot)?;
            return Ok(generator_words(&g));
        }
        match dist {
            Distribution::Categorical => {
                categoricals(
                    &mut g,
                    &self.floats[0],
                    self.narrow.f32[0],
                    &mut self.int_out,
                )
                .map_err(|e| bad(dist, e))?;
            }
            Distribution::Dirichlet => {
                dirichlets(&mut g, &self.floats[0], count, &mut self.float_out)
                    .map_err(|e| bad(dist, e))?;
            }
            Distribution::Multinomial => {
                let (n, p) = (&self.ints[0], &self.floats[1]);
                multinomials(&mut g, n, p, count, &mut self.int_out).map_err(|e| bad(dist, e))?;
            }
            Distribution::BetaBinom => {
                let params = (&self.ints[0], &self.floats[1], &self.floats[2]);
                let (p, out) = (&mut self.probabilities, &mut self.int_out);
                betabinom(&mut g, params, p, out).map_err(|e| bad(dist, e))?;
            }
            _ if dist.is_mv_normal() => {
                let params = [&self.floats[0], &self.floats[1]];
                let (n, out) = (self.support, &mut self.float_out);
                mvnormal::mv_normal(&mut g, dist, params, count, n, &mut self.mv, out)?;
            }
            _ => {
                let out = if dist.is_discrete() {
                    Draws::Int(&mut self.int_out)
                } else {
                    Draws::Float(&mut self.float_out)
                };
                let (floats, ints) = (&self.floats, &self.ints);
                draw_scalars(&mut g, dist, floats, ints, self.arrays, self.narrow, out)?;
            }
        }
        Ok(generator_words(&g))
    }

    /// Copies the last draws into `out`, converted to its element type as the kernel casts
    /// them to the op's dtype.
    pub fn write<T: Element>(&self, out: &mut [T]) {
        if let Some(shuffle) = &self.shuffle {
            let int_values = self.int_slot.first().copied().flatten();
            let int_values = int_values.and_then(|j| self.ints.get(j));
            let floats = self.floats.first().map_or(&[][..], |c| c.values.as_slice());
            shuffle.write(out, floats, int_values.map(|c| c.values.as_slice()));
        } else if self.r.dist.is_discrete() {
            for (o, &v) in out.iter_mut().zip(&self.int_out) {
                *o = T::cast_from(v);
            }
        } else {
            for (o, &v) in out.iter_mut().zip(&self.float_out) {
                *o = T::cast_from(v);
            }
        }
    }
}
