//! The kernel of [`Op::Random`](oxtensor_graph::Op::Random): draws with
//! [`oxtensor_random::Generator`] exactly as NumPy's `Generator` (or, for PyTensor's own
//! distributions, as PyTensor's `rng_fn`) draws for the same state, and returns the advanced
//! generator next to the draw.
//!
//! Broadcast parameters are visited in C order over the output's batch shape, one draw per
//! element, which is the order of NumPy's broadcasting loops; vector-valued distributions draw
//! one whole vector per batch element. Values are drawn in `float64`/`int64` and cast to the
//! op's dtype afterwards, as PyTensor does.

use crate::KernelError;
use oxtensor_data::{DType, Tensor, broadcast_shapes};
use oxtensor_graph::random::{Distribution, RNG_WORDS, RandomOp};
use oxtensor_random::{Generator, Pcg64, Pcg64State, RandomError};

const LOW: u128 = u64::MAX as u128;

/// The generator value (a `uint64` vector of [`RNG_WORDS`] words) holding `g`'s state.
pub fn generator_to_tensor(g: &Generator) -> Tensor {
    let s = g.state();
    let words = [
        (s.state >> 64) as u64,
        (s.state & LOW) as u64,
        (s.inc >> 64) as u64,
        (s.inc & LOW) as u64,
        u64::from(s.has_uint32),
        u64::from(s.uinteger),
    ];
    Tensor::from_slice(&words, &[RNG_WORDS]).expect("RNG_WORDS words fill a vector of RNG_WORDS")
}

/// The generator whose state a generator value holds; errors when `t` is not a `uint64`
/// vector of [`RNG_WORDS`] words or its buffered half is not a 32-bit word.
pub fn generator_from_tensor(t: &Tensor) -> Result<Generator, KernelError> {
    if t.dtype() != DType::U64 || t.shape() != [RNG_WORDS] {
        return Err(KernelError::Value(format!(
            "a random generator is a uint64 vector of {RNG_WORDS} words, got {} of shape {:?}",
            t.dtype(),
            t.shape()
        )));
    }
    let w = t.to_vec_as::<u64>();
    let wide = |hi: u64, lo: u64| (u128::from(hi) << 64) | u128::from(lo);
    let uinteger = u32::try_from(w[5]).map_err(|_| {
        KernelError::Value(format!(
            "random generator word 5 (the buffered 32-bit half) is {}, not a 32-bit value",
            w[5]
        ))
    })?;
    Ok(Generator::new(Pcg64::from_state(Pcg64State {
        state: wide(w[0], w[1]),
        inc: wide(w[2], w[3]),
        has_uint32: w[4] != 0,
        uinteger,
    })))
}

/// One parameter, broadcast to the batch shape (followed by its core extents): a single
/// value repeated, or one entry (of `core` values) per batch element in C order.
struct Column<T> {
    values: Vec<T>,
    core: usize,
    repeated: bool,
}

impl<T: Copy> Column<T> {
    fn at(&self, i: usize) -> &[T] {
        let start = if self.repeated { 0 } else { i * self.core };
        &self.values[start..start + self.core]
    }
}

fn column<T: oxtensor_data::Element>(
    p: &Tensor,
    batch: &[usize],
    core_ndims: usize,
) -> Result<Column<T>, KernelError> {
    let split = p.ndim() - core_ndims;
    let core_shape = &p.shape()[split..];
    let core: usize = core_shape.iter().product();
    let batch_numel: usize = p.shape()[..split].iter().product();
    if batch_numel == 1 {
        return Ok(Column {
            values: p.to_vec_as::<T>(),
            core,
            repeated: true,
        });
    }
    let mut target = batch.to_vec();
    target.extend_from_slice(core_shape);
    Ok(Column {
        values: p.broadcast_to(&target)?.to_vec_as::<T>(),
        core,
        repeated: false,
    })
}

/// The batch shape: `size` when given (every parameter must broadcast to it), else the
/// parameters' broadcast batch shape.
fn batch_shape(r: &RandomOp, size: &Tensor, params: &[&Tensor]) -> Result<Vec<usize>, KernelError> {
    let dist = r.dist;
    let mut joined: Vec<usize> = Vec::new();
    for (k, p) in params.iter().enumerate() {
        let split = p.ndim() - dist.param_core_ndims(k);
        joined = broadcast_shapes(&joined, &p.shape()[..split])
            .map_err(|_| {
                KernelError::Shape(format!(
                    "{}: the parameters do not broadcast together (`{}` has batch shape {:?})",
                    dist.name(),
                    dist.params()[k],
                    &p.shape()[..split]
                ))
            })?
            .to_vec();
    }
    let Some(n) = r.size_ndim else {
        return Ok(joined);
    };
    let dims = size.to_vec_as::<i64>();
    if dims.len() != n {
        return Err(KernelError::Shape(format!(
            "{}: size has {} entries, expected {n}",
            dist.name(),
            dims.len()
        )));
    }
    let size: Vec<usize> = dims
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<_, _>>()
        .map_err(|_| {
            KernelError::Value(format!(
                "{}: size {dims:?} has a negative extent",
                dist.name()
            ))
        })?;
    if broadcast_shapes(&joined, &size).ok().as_deref() != Some(&size[..]) {
        return Err(KernelError::Shape(format!(
            "{}: parameters of batch shape {joined:?} do not broadcast to size {size:?}",
            dist.name()
        )));
    }
    Ok(size)
}

/// `value` when it is `>= 0` (not NaN), else NumPy's error for `argument`.
fn non_negative(argument: &'static str, value: f64) -> Result<f64, RandomError> {
    if value >= 0.0 {
        Ok(value)
    } else {
        Err(RandomError::new(
            argument,
            format!("expected a number >= 0, got {value}"),
        ))
    }
}

fn bad(dist: Distribution, e: RandomError) -> KernelError {
    KernelError::Value(format!("{}: {e}", dist.name()))
}

/// One scalar draw of a continuous distribution from parameters `p`.
fn draw_float(g: &mut Generator, dist: Distribution, p: &[f64]) -> Result<f64, RandomError> {
    use Distribution as D;
    use std::f64::consts::PI;
    Ok(match dist {
        D::Normal => g.normal(p[0], p[1])?,
        D::Uniform => g.uniform(p[0], p[1])?,
        D::Exponential => g.exponential(p[0])?,
        D::Gamma => g.gamma(p[0], p[1])?,
        D::Beta => g.beta(p[0], p[1])?,
        D::LogNormal => g.lognormal(p[0], p[1])?,
        D::HalfNormal => g.halfnormal(p[0], p[1])?,
        D::ChiSquare => g.chisquare(p[0])?,
        D::StudentT => p[1] + non_negative("scale", p[2])? * g.standard_t(p[0])?,
        // SciPy's generic inverse-CDF sampling: one uniform through the quantile function.
        D::Cauchy => p[0] + non_negative("scale", p[1])? * (PI * (g.random() - 0.5)).tan(),
        D::HalfCauchy => p[0] + non_negative("scale", p[1])? * (PI / 2.0 * g.random()).tan(),
        D::Laplace => g.laplace(p[0], p[1])?,
        D::Logistic => g.logistic(p[0], p[1])?,
        D::Gumbel => g.gumbel(p[0], p[1])?,
        D::Weibull => g.weibull(p[0])?,
        D::Wald => g.wald(p[0], p[1])?,
        D::Triangular => g.triangular(p[0], p[1], p[2])?,
        D::VonMises => g.vonmises(p[0], p[1])?,
        // PyTensor: 1 / rng.gamma(alpha, 1 / beta).
        D::InvGamma => 1.0 / g.gamma(p[0], 1.0 / p[1])?,
        D::Integers
        | D::Bernoulli
        | D::Binomial
        | D::Poisson
        | D::Geometric
        | D::NegativeBinomial
        | D::Hypergeometric
        | D::Dirichlet
        | D::Multinomial
        | D::Categorical
        | D::MvNormal
        | D::Permutation
        | D::ChoiceWithoutReplacement
        | D::ChoiceWithoutReplacementP => {
            return Err(RandomError::new(
                "dtype",
                format!("{} is not a scalar continuous distribution", dist.name()),
            ));
        }
    })
}

/// Fills `out` with draws of a continuous distribution whose parameters `p` are the same for
/// every element: the hot distributions check their parameters once and run a tight loop
/// (the same arithmetic as the generator's methods); the others draw one by one.
fn fill_repeated(
    g: &mut Generator,
    dist: Distribution,
    p: &[f64],
    out: &mut [f64],
) -> Result<(), RandomError> {
    match dist {
        Distribution::Normal => {
            let (loc, scale) = (p[0], non_negative("scale", p[1])?);
            out.iter_mut()
                .for_each(|o| *o = loc + scale * g.standard_normal());
        }
        Distribution::Uniform => {
            // Validated by one call (the finite range check), then NumPy's `low + range * u`.
            let (low, range) = (p[0], p[1] - p[0]);
            if let Some((first, rest)) = out.split_first_mut() {
                *first = g.uniform(p[0], p[1])?;
                rest.iter_mut().for_each(|o| *o = low + range * g.random());
            }
        }
        Distribution::Exponential => {
            let scale = non_negative("scale", p[0])?;
            out.iter_mut()
                .for_each(|o| *o = scale * g.standard_exponential());
        }
        _ => {
            for o in out.iter_mut() {
                *o = draw_float(g, dist, p)?;
            }
        }
    }
    Ok(())
}

/// One scalar draw of a discrete distribution from parameters `p` (as floats) and `n` (as
/// integers, for the parameters [`Distribution::int_param`] names).
fn draw_int(
    g: &mut Generator,
    dist: Distribution,
    p: &[f64],
    n: &[i64],
) -> Result<i64, RandomError> {
    use Distribution as D;
    match dist {
        D::Integers => g.integers(n[0], n[1], false),
        D::Bernoulli => g.binomial(1, p[0]),
        D::Binomial => g.binomial(n[0], p[1]),
        D::Poisson => g.poisson(p[0]),
        D::Geometric => g.geometric(p[0]),
        D::NegativeBinomial => g.negative_binomial(p[0], p[1]),
        D::Hypergeometric => g.hypergeometric(n[0], n[1], n[2]),
        _ => Err(RandomError::new(
            "dtype",
            format!("{} is not a scalar discrete distribution", dist.name()),
        )),
    }
}

/// `cumsum(p)` searched for `u` (NumPy's `searchsorted(side='left')`): the first index whose
/// cumulative probability reaches `u`.
fn categorical(g: &mut Generator, p: &[f64]) -> i64 {
    let u = g.random();
    let mut acc = 0.0;
    for (i, &pi) in p.iter().enumerate() {
        acc += pi;
        if acc >= u {
            return i as i64;
        }
    }
    p.len() as i64
}

/// The lower Cholesky factor of the `n`x`n` row-major `a`, or `None` when `a` is not
/// positive definite.
fn cholesky(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let dot: f64 = (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum();
            let v = a[i * n + j] - dot;
            if i == j {
                if v <= 0.0 || v.is_nan() {
                    return None;
                }
                l[i * n + i] = v.sqrt();
            } else {
                l[i * n + j] = v / l[j * n + j];
            }
        }
    }
    Some(l)
}

/// PyTensor's `multivariate_normal` (method `cholesky`): every standard normal first
/// (`rng.normal(size=(*batch, n))`), then `cholesky(cov) @ z + mean` per batch element.
fn mv_normal(
    g: &mut Generator,
    mean: &Column<f64>,
    cov: &Column<f64>,
    count: usize,
    n: usize,
    shape: &[usize],
) -> Result<Tensor, KernelError> {
    let z: Vec<f64> = (0..count * n).map(|_| g.standard_normal()).collect();
    let mut out = vec![0.0; count * n];
    let mut factor: Option<(usize, Vec<f64>)> = None;
    for b in 0..count {
        let key = if cov.repeated { 0 } else { b };
        if factor.as_ref().is_none_or(|(k, _)| *k != key) {
            let l = cholesky(cov.at(b), n).ok_or_else(|| {
                KernelError::Value(
                    "multivariate_normal: cov is not positive definite (Matrix is not positive definite)"
                        .into(),
                )
            })?;
            factor = Some((key, l));
        }
        let Some((_, l)) = factor.as_ref() else {
            continue;
        };
        let (zb, mb) = (&z[b * n..(b + 1) * n], mean.at(b));
        for i in 0..n {
            let acc: f64 = (0..=i).map(|j| l[i * n + j] * zb[j]).sum();
            out[b * n + i] = acc + mb[i];
        }
    }
    Ok(Tensor::from_slice(&out, shape)?)
}

/// The extents of an integer vector (a size or sample shape) as `usize`, or an error naming
/// `what` for a negative one.
fn extents(dist: Distribution, what: &str, v: &Tensor) -> Result<Vec<usize>, KernelError> {
    let dims = v.to_vec_as::<i64>();
    dims.iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<_, _>>()
        .map_err(|_| {
            KernelError::Value(format!(
                "{}: {what} {dims:?} has a negative extent",
                dist.name()
            ))
        })
}

/// `permutation(x)`: NumPy's shuffled `arange(n)` for an integer scalar `n`; for an array, its
/// rows in the order that same shuffle of their positions gives (NumPy shuffles a copy in
/// place with the same swaps). With a batch shape (`size`), `x` is broadcast to it and each
/// batch element shuffled in C order, as PyTensor loops over `rng.permutation`.
fn permutation(
    mut g: Generator,
    r: &RandomOp,
    size: &Tensor,
    x: &Tensor,
) -> Result<Vec<Tensor>, KernelError> {
    let dist = r.dist;
    let batch = match r.size_ndim {
        Some(_) => extents(dist, "size", size)?,
        None => Vec::new(),
    };
    let out = if x.ndim() == 0 {
        if !batch.is_empty() {
            return Err(KernelError::Value(
                "permutation: an integer n takes no size".into(),
            ));
        }
        let n = x.item::<i64>().unwrap_or(0);
        let n = usize::try_from(n)
            .map_err(|_| KernelError::Value(format!("permutation: n must be >= 0, got {n}")))?;
        let perm = g.permutation(n);
        Tensor::from_slice(&perm, &[n])?.cast(r.dtype)
    } else {
        let mut shape = batch.clone();
        shape.extend_from_slice(x.shape());
        let count: usize = batch.iter().product();
        let rows = x.shape()[0];
        let rest: usize = x.shape()[1..].iter().product();
        // One gather over the batch elements' rows stacked: element b's row i is row
        // b * rows + perm_b[i].
        let mut idx = Vec::with_capacity(count * rows);
        for b in 0..count {
            idx.extend(
                g.permutation(rows)
                    .into_iter()
                    .map(|i| (b * rows) as i64 + i),
            );
        }
        let stacked = x.broadcast_to(&shape)?.reshape(&[count * rows, rest])?;
        let idx = Tensor::from_slice(&idx, &[idx.len()])?;
        super::index::take(&stacked, &idx, 0)?
            .reshape(&shape)?
            .cast(r.dtype)
    };
    Ok(vec![generator_to_tensor(&g), out])
}

/// `choice(a, core_shape, replace=False[, p])`: NumPy's `Generator.choice` indices (of
/// `arange(a)` for an integer `a`, else of `a`'s rows), shaped `core_shape`, then the rows
/// they select.
fn choice(mut g: Generator, r: &RandomOp, inputs: &[&Tensor]) -> Result<Vec<Tensor>, KernelError> {
    let dist = r.dist;
    let a = inputs[2];
    let core_shape = extents(dist, "core_shape", inputs[inputs.len() - 1])?;
    let count: usize = core_shape.iter().product();
    let pop_size = match a.ndim() {
        0 => {
            let n = a.item::<i64>().unwrap_or(0);
            usize::try_from(n).map_err(|_| {
                KernelError::Value(format!(
                    "choice: a must be >= 0 (a population size), got {n}"
                ))
            })?
        }
        _ => a.shape()[0],
    };
    let idx = if dist == Distribution::ChoiceWithoutReplacementP {
        let p = inputs[3];
        if p.shape() != [pop_size] {
            return Err(KernelError::Shape(format!(
                "choice: a and p must have same size ({pop_size} and {:?})",
                p.shape()
            )));
        }
        g.choice_without_replacement_p(&p.to_vec_as::<f64>(), count)
    } else {
        g.choice_without_replacement(pop_size, count)
    }
    .map_err(|e| bad(dist, e))?;
    let idx = Tensor::from_slice(&idx, &core_shape)?;
    let out = if a.ndim() == 0 {
        idx
    } else {
        super::index::take(a, &idx, 0)?
    };
    Ok(vec![generator_to_tensor(&g), out.cast(r.dtype)])
}

/// Computes a random node: `(next_rng, draw)`.
pub fn random(r: &RandomOp, inputs: &[&Tensor]) -> Result<Vec<Tensor>, KernelError> {
    let dist = r.dist;
    let n_params = dist.params().len();
    if inputs.len() != 2 + n_params {
        return Err(KernelError::Value(format!(
            "{}: expected {} inputs (rng, size, {}), got {}",
            dist.name(),
            2 + n_params,
            dist.params().join(", "),
            inputs.len()
        )));
    }
    let mut g = generator_from_tensor(inputs[0])?;
    match dist {
        Distribution::Permutation => return permutation(g, r, inputs[1], inputs[2]),
        Distribution::ChoiceWithoutReplacement | Distribution::ChoiceWithoutReplacementP => {
            return choice(g, r, inputs);
        }
        _ => {}
    }
    let params = &inputs[2..];
    let batch = batch_shape(r, inputs[1], params)?;
    let count: usize = batch.iter().product();
    let floats: Vec<Column<f64>> = params
        .iter()
        .enumerate()
        .map(|(k, p)| column(p, &batch, dist.param_core_ndims(k)))
        .collect::<Result<_, _>>()?;
    let ints: Vec<Column<i64>> = params
        .iter()
        .enumerate()
        .filter(|(k, _)| dist.int_param(*k))
        .map(|(k, p)| column(p, &batch, dist.param_core_ndims(k)))
        .collect::<Result<_, _>>()?;
    let mut shape = batch.clone();
    let draw = match dist {
        Distribution::Dirichlet | Distribution::Multinomial => {
            let support = floats[dist.support_param()].core;
            shape.push(support);
            let mut out_f = Vec::new();
            let mut out_i = Vec::new();
            for i in 0..count {
                if dist == Distribution::Dirichlet {
                    out_f.extend(g.dirichlet(floats[0].at(i)).map_err(|e| bad(dist, e))?);
                } else {
                    let n = ints[0].at(i)[0];
                    out_i.extend(
                        g.multinomial(n, floats[1].at(i))
                            .map_err(|e| bad(dist, e))?,
                    );
                }
            }
            if dist == Distribution::Dirichlet {
                Tensor::from_slice(&out_f, &shape)?
            } else {
                Tensor::from_slice(&out_i, &shape)?
            }
        }
        Distribution::MvNormal => {
            let n = floats[0].core;
            if floats[1].core != n * n {
                return Err(KernelError::Shape(format!(
                    "multivariate_normal: cov must be {n}x{n} to match mean's {n} entries, got {} entries",
                    floats[1].core
                )));
            }
            shape.push(n);
            mv_normal(&mut g, &floats[0], &floats[1], count, n, &shape)?
        }
        Distribution::Categorical => {
            let out: Vec<i64> = (0..count)
                .map(|i| categorical(&mut g, floats[0].at(i)))
                .collect();
            Tensor::from_slice(&out, &shape)?
        }
        _ if dist.is_discrete() => {
            let mut pf = [0.0; 3];
            let mut pn = [0i64; 3];
            let mut out = Vec::with_capacity(count);
            for i in 0..count {
                for (k, c) in floats.iter().enumerate() {
                    pf[k] = c.at(i)[0];
                }
                for (k, c) in ints.iter().enumerate() {
                    pn[k] = c.at(i)[0];
                }
                out.push(draw_int(&mut g, dist, &pf, &pn).map_err(|e| bad(dist, e))?);
            }
            Tensor::from_slice(&out, &shape)?
        }
        _ => {
            let mut result = Ok(());
            let t = Tensor::build::<f64>(&shape, |out| {
                result = if floats.iter().all(|c| c.repeated) {
                    let p: Vec<f64> = floats.iter().map(|c| c.values[0]).collect();
                    fill_repeated(&mut g, dist, &p, out)
                } else {
                    let mut pf = [0.0; 3];
                    out.iter_mut().enumerate().try_for_each(|(i, o)| {
                        for (k, c) in floats.iter().enumerate() {
                            pf[k] = c.at(i)[0];
                        }
                        *o = draw_float(&mut g, dist, &pf)?;
                        Ok(())
                    })
                };
            })?;
            result.map_err(|e| bad(dist, e))?;
            t
        }
    };
    Ok(vec![generator_to_tensor(&g), draw.cast(r.dtype)])
}
