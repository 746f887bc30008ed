//! Element-wise draws of the scalar distributions (one value per batch element, from scalar
//! parameters): [`draw_scalars`] is the one loop that draws them, which the interpreter's
//! kernel runs on columns it builds from tensors and [`ScalarDraws`] on columns a caller
//! fills in place (a staged loop's host call), so both draw the same values bit for bit.
//! [`ScalarDraws`] also draws categoricals (one index per batch element from a row of
//! probabilities) through the kernel's own `categoricals`.

use super::{
    Column, Narrow, array_wording, bad, categoricals, draw_float, draw_int, fill_repeated,
    generator_from_words, generator_words, scipy_degenerate,
};
use crate::KernelError;
use oxtensor_data::{DType, Element, broadcast_shapes};
use oxtensor_graph::random::{Distribution, RNG_WORDS, RandomOp};
use oxtensor_random::Generator;

/// Where [`draw_scalars`] writes: `float64` draws of a continuous distribution or `int64` draws
/// of a discrete one, one per batch element in C order.
pub(super) enum Draws<'a> {
    Float(&'a mut [f64]),
    Int(&'a mut [i64]),
}

/// True for the distributions [`draw_scalars`] draws: scalar draws from scalar parameters,
/// each element on its own (not the vector-valued, categorical, beta-binomial, permutation or
/// choice draws, which the kernel draws in their own ways).
pub(super) fn is_scalar(dist: Distribution) -> bool {
    use Distribution as D;
    dist.support_ndim() == 0
        && (0..dist.params().len()).all(|k| dist.param_core_ndims(k) == 0)
        && !matches!(
            dist,
            D::Categorical
                | D::BetaBinom
                | D::Permutation
                | D::ChoiceWithoutReplacement
                | D::ChoiceWithoutReplacementP
        )
}

/// Draws `out` (one value per batch element) from a scalar distribution whose parameters are
/// `floats` (every parameter as `float64`) and `ints` (the integer ones as `int64`). `arrays`:
/// NumPy sees the parameters as arrays (its wording of errors); `narrow`: which are `float32`.
pub(super) fn draw_scalars(
    g: &mut Generator,
    dist: Distribution,
    floats: &[Column<f64>],
    ints: &[Column<i64>],
    arrays: bool,
    narrow: Narrow,
    out: Draws<'_>,
) -> Result<(), KernelError> {
    let wording = |e| bad(dist, if arrays { array_wording(e) } else { e });
    match out {
        Draws::Int(out) => {
            let mut pf = [0.0; 3];
            let mut pn = [0i64; 3];
            for (i, o) in out.iter_mut().enumerate() {
                for (k, c) in floats.iter().enumerate() {
                    pf[k] = c.at(i)[0];
                }
                for (k, c) in ints.iter().enumerate() {
                    pn[k] = c.at(i)[0];
                }
                *o = draw_int(g, dist, &pf, &pn).map_err(wording)?;
            }
            Ok(())
        }
        Draws::Float(out) => {
            if scipy_degenerate(dist, floats, narrow, out)? {
                return Ok(());
            }
            let mut pf = [0.0; 3];
            if floats.iter().all(|c| c.repeated) {
                for (k, c) in floats.iter().enumerate() {
                    pf[k] = c.values[0];
                }
                return fill_repeated(g, dist, &pf, narrow, out).map_err(wording);
            }
            out.iter_mut().enumerate().try_for_each(|(i, o)| {
                for (k, c) in floats.iter().enumerate() {
                    pf[k] = c.at(i)[0];
                }
                *o = draw_float(g, dist, &pf, narrow).map_err(wording)?;
                Ok(())
            })
        }
    }
}

/// Draws of one random node of a scalar distribution, or of a categorical, over a batch shape
/// fixed in advance,
/// with its parameter columns and draws kept between calls: a staged loop's host call fills
/// the parameters in place ([`Self::load_param`]), draws ([`Self::draw`]) and copies the draws
/// out ([`Self::write`]), allocating nothing per draw. It runs [`draw_scalars`], the loop of
/// the interpreter's kernel, so it draws what the kernel draws.
pub struct ScalarDraws {
    r: RandomOp,
    batch: Vec<usize>,
    floats: Vec<Column<f64>>,
    ints: Vec<Column<i64>>,
    /// Per parameter, its column in `ints` when it is an integer parameter.
    int_slot: Vec<Option<usize>>,
    arrays: bool,
    narrow: Narrow,
    float_out: Vec<f64>,
    int_out: Vec<i64>,
}

impl ScalarDraws {
    /// The draws of `r` over batch shape `batch` from parameters of dtypes and extents
    /// `params`, or `None` when `r` is neither a scalar distribution nor a categorical, a
    /// parameter does not broadcast to `batch`, or (without a `size`) the parameters'
    /// broadcast shape is not `batch`: the kernel then draws (or reports the error).
    pub fn new(r: RandomOp, params: &[(DType, &[usize])], batch: &[usize]) -> Option<ScalarDraws> {
        let dist = r.dist;
        if !(is_scalar(dist) || dist == Distribution::Categorical)
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
            (Vec::new(), vec![0; count])
        } else {
            (vec![0.0; count], Vec::new())
        };
        Some(ScalarDraws {
            r,
            batch: batch.to_vec(),
            floats,
            ints,
            int_slot,
            arrays,
            narrow: Narrow::of_dtypes(params.iter().map(|(d, _)| *d)),
            float_out,
            int_out,
        })
    }

    /// The number of draws: the batch shape's element count.
    pub fn count(&self) -> usize {
        self.batch.iter().product()
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
        if self.r.size_ndim.is_some()
            && (size.len() != self.batch.len()
                || size
                    .iter()
                    .zip(&self.batch)
                    .any(|(&s, &b)| usize::try_from(s).ok() != Some(b)))
        {
            return Err(KernelError::Shape(format!(
                "{}: size {size:?} is not the batch shape {:?} laid out",
                self.r.dist.name(),
                self.batch
            )));
        }
        let mut g = generator_from_words(words)?;
        if self.r.dist == Distribution::Categorical {
            categoricals(
                &mut g,
                &self.floats[0],
                self.narrow.f32[0],
                &mut self.int_out,
            )
            .map_err(|e| bad(self.r.dist, e))?;
            return Ok(generator_words(&g));
        }
        let out = if self.r.dist.is_discrete() {
            Draws::Int(&mut self.int_out)
        } else {
            Draws::Float(&mut self.float_out)
        };
        draw_scalars(
            &mut g,
            self.r.dist,
            &self.floats,
            &self.ints,
            self.arrays,
            self.narrow,
            out,
        )?;
        Ok(generator_words(&g))
    }

    /// Copies the last draws into `out`, converted to its element type as the kernel casts
    /// them to the op's dtype.
    pub fn write<T: Element>(&self, out: &mut [T]) {
        if self.r.dist.is_discrete() {
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
