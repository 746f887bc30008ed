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

mod in_place;
mod mvnormal;
mod scalar;
mod shuffle;

pub use in_place::InPlaceDraws;

const LOW: u128 = u64::MAX as u128;

/// The words of a generator value (see [`generator_to_tensor`]) holding `g`'s state.
pub fn generator_words(g: &Generator) -> [u64; RNG_WORDS] {
    let s = g.state();
    [
        (s.state >> 64) as u64,
        (s.state & LOW) as u64,
        (s.inc >> 64) as u64,
        (s.inc & LOW) as u64,
        u64::from(s.has_uint32),
        u64::from(s.uinteger),
    ]
}

/// The generator value (a `uint64` vector of [`RNG_WORDS`] words) holding `g`'s state.
pub fn generator_to_tensor(g: &Generator) -> Tensor {
    Tensor::from_slice(&generator_words(g), &[RNG_WORDS])
        .expect("RNG_WORDS words fill a vector of RNG_WORDS")
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
    generator_from_words(&t.to_vec_as::<u64>())
}

/// The generator whose state the words of a generator value hold; errors when there are not
/// [`RNG_WORDS`] of them or the buffered half is not a 32-bit word.
pub fn generator_from_words(w: &[u64]) -> Result<Generator, KernelError> {
    let &[s_hi, s_lo, i_hi, i_lo, has, half] = w else {
        return Err(KernelError::Value(format!(
            "a random generator is {RNG_WORDS} words, got {}",
            w.len()
        )));
    };
    let wide = |hi: u64, lo: u64| (u128::from(hi) << 64) | u128::from(lo);
    let uinteger = u32::try_from(half).map_err(|_| {
        KernelError::Value(format!(
            "random generator word 5 (the buffered 32-bit half) is {half}, not a 32-bit value"
        ))
    })?;
    Ok(Generator::new(Pcg64::from_state(Pcg64State {
        state: wide(s_hi, s_lo),
        inc: wide(i_hi, i_lo),
        has_uint32: has != 0,
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

/// `value` when it is `>= 0` (not NaN), else the error for `argument`: SciPy's check of a
/// `scale` (`scale >= 0`, which a NaN fails), for the distributions PyTensor draws through
/// SciPy. (NumPy's own checks, which let NaN through, are in `oxtensor_random`.)
fn non_negative(argument: &'static str, value: f64) -> Result<f64, RandomError> {
    if value >= 0.0 {
        Ok(value)
    } else {
        Err(RandomError::new(
            argument,
            format!("{argument} < 0 (expected a number >= 0, got {value})"),
        ))
    }
}

/// `value` when it is `> 0` (not NaN), else the error for `argument` in NumPy's words: SciPy's
/// check of a shape parameter (`b > 0`, `a > 0`, ...), which a NaN fails.
fn positive(argument: &'static str, value: f64) -> Result<f64, RandomError> {
    if value > 0.0 {
        Ok(value)
    } else {
        Err(RandomError::new(
            argument,
            format!("{argument} <= 0 (expected a number > 0, got {value})"),
        ))
    }
}

/// A parameter error as the kernel's error: the distribution, the argument, NumPy's message
/// and what was expected (the interpreter adds the variable's name and creation site).
fn bad(dist: Distribution, e: RandomError) -> KernelError {
    KernelError::Value(format!("{}: {e}", dist.name()))
}

/// Whether NumPy sees the parameters of a scalar distribution as arrays when PyTensor calls it:
/// PyTensor expands every parameter to `size`'s rank when a `size` is given, and a parameter
/// that is not 0-d is an array anyway. NumPy then checks with `check_array_constraint`,
/// whose words differ from the scalar `check_constraint`'s ([`array_wording`]).
fn numpy_sees_arrays(r: &RandomOp, params: &[&Tensor]) -> bool {
    r.size_ndim.is_some_and(|n| n > 0) || params.iter().any(|p| p.ndim() > 0)
}

/// NumPy's message for an array parameter where `e` has the scalar one: "contains NaNs" for
/// "is NaN", and Poisson's array check tests "value too large" first, which a NaN `lam` fails.
fn array_wording(mut e: RandomError) -> RandomError {
    let arg = e.argument;
    if arg == "lam"
        && e.message.starts_with("lam < 0 or lam is NaN")
        && e.message.ends_with("got NaN)")
    {
        e.message = format!(
            "lam value too large (expected lam <= {}, got NaN)",
            oxtensor_random::POISSON_LAM_MAX
        );
        return e;
    }
    e.message = e
        .message
        .replace(&format!("{arg} is NaN"), &format!("{arg} contains NaNs"));
    e
}

/// Which parameters are `float32`. SciPy (which PyTensor's `pareto`, `truncexpon` and
/// `gengamma` call) computes `-1 / b`, `expm1(-b)`, `alpha / p` and `1 / p` in the parameters'
/// dtype (NumPy 2's promotion: a Python float with a `float32` array stays `float32`), so
/// these kernels round those intermediates the same way to draw the same values.
#[derive(Copy, Clone, Default)]
struct Narrow {
    f32: [bool; 3],
}

impl Narrow {
    /// The dtypes of `params`.
    fn of(params: &[&Tensor]) -> Narrow {
        Narrow::of_dtypes(params.iter().map(|p| p.dtype()))
    }

    /// The same from the parameters' dtypes.
    fn of_dtypes(dtypes: impl Iterator<Item = DType>) -> Narrow {
        let mut n = Narrow::default();
        for (k, d) in dtypes.take(3).enumerate() {
            n.f32[k] = d == DType::F32;
        }
        n
    }

    /// `a / b` computed in `float32` when every parameter of `which` is `float32`.
    fn div(self, which: &[usize], a: f64, b: f64) -> f64 {
        if which.iter().all(|&k| self.f32[k]) {
            f64::from(a as f32 / b as f32)
        } else {
            a / b
        }
    }
}

/// For the distributions PyTensor draws through SciPy's `rvs`: the position of the `scale`
/// parameter and of `loc` (`None`: a `loc` of 0).
#[inline]
fn scipy_scale(dist: Distribution) -> Option<(usize, Option<usize>)> {
    use Distribution as D;
    match dist {
        D::HalfNormal | D::Cauchy | D::HalfCauchy | D::Gumbel => Some((1, Some(0))),
        D::StudentT | D::TruncExpon => Some((2, Some(1))),
        D::Pareto => Some((1, None)),
        D::GenGamma => Some((2, None)),
        _ => None,
    }
}

/// SciPy's checks of one element's parameters (`_argcheck` and `scale >= 0`, which a NaN
/// fails) for a distribution [`scipy_scale`] names; the others have nothing to check here.
fn check_scipy(dist: Distribution, p: &[f64], narrow: Narrow) -> Result<(), RandomError> {
    use Distribution as D;
    let Some((scale, _)) = scipy_scale(dist) else {
        return Ok(());
    };
    match dist {
        D::StudentT => {
            positive("df", p[0])?;
        }
        D::Pareto | D::TruncExpon => {
            positive("b", p[0])?;
        }
        D::GenGamma => {
            let c = p[1];
            if c == 0.0 || c.is_nan() {
                return Err(RandomError::new(
                    "p",
                    format!("p == 0 (expected a nonzero number, got {c})"),
                ));
            }
            positive("alpha / p", narrow.div(&[0, 1], p[0], c))?;
        }
        _ => {}
    }
    let name = if dist == D::GenGamma {
        "lambd"
    } else {
        "scale"
    };
    non_negative(name, p[scale])?;
    Ok(())
}

/// SciPy's `rvs` when every `scale` is 0: after checking every element, `loc` (broadcast)
/// into `out` (one per batch element), drawing nothing, so the generator does not move.
/// `false` (and `out` untouched) when SciPy would draw.
fn scipy_degenerate(
    dist: Distribution,
    floats: &[Column<f64>],
    narrow: Narrow,
    out: &mut [f64],
) -> Result<bool, KernelError> {
    let Some((scale, loc)) = scipy_scale(dist) else {
        return Ok(false);
    };
    let count = out.len();
    if count == 0 || !(0..count).all(|i| floats[scale].at(i)[0] == 0.0) {
        return Ok(false);
    }
    let mut p = [0.0; 3];
    for i in 0..count {
        for (k, c) in floats.iter().enumerate() {
            p[k] = c.at(i)[0];
        }
        check_scipy(dist, &p, narrow).map_err(|e| bad(dist, e))?;
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = loc.map_or(0.0, |k| floats[k].at(i)[0]);
    }
    Ok(true)
}

/// One scalar draw of a continuous distribution from parameters `p`.
fn draw_float(
    g: &mut Generator,
    dist: Distribution,
    p: &[f64],
    narrow: Narrow,
) -> Result<f64, RandomError> {
    use Distribution as D;
    use std::f64::consts::PI;
    if scipy_scale(dist).is_some() {
        check_scipy(dist, p, narrow)?;
    }
    Ok(match dist {
        D::Normal => g.normal(p[0], p[1])?,
        D::Uniform => g.uniform(p[0], p[1])?,
        D::Exponential => g.exponential(p[0])?,
        D::Gamma => g.gamma(p[0], p[1])?,
        D::Beta => g.beta(p[0], p[1])?,
        D::LogNormal => g.lognormal(p[0], p[1])?,
        // SciPy's `halfnorm.rvs` (checked above: a NaN scale is an error there).
        D::HalfNormal => g.halfnormal(p[0], p[1])?,
        D::ChiSquare => g.chisquare(p[0])?,
        D::StudentT => p[1] + p[2] * g.standard_t(p[0])?,
        // SciPy's generic inverse-CDF sampling: one uniform through the quantile function.
        D::Cauchy => p[0] + p[1] * (PI * (g.random() - 0.5)).tan(),
        D::HalfCauchy => p[0] + p[1] * (PI / 2.0 * g.random()).tan(),
        D::Laplace => g.laplace(p[0], p[1])?,
        D::Logistic => g.logistic(p[0], p[1])?,
        D::Gumbel => g.gumbel(p[0], p[1])?,
        D::Weibull => g.weibull(p[0])?,
        D::Wald => g.wald(p[0], p[1])?,
        D::Triangular => g.triangular(p[0], p[1], p[2])?,
        D::VonMises => g.vonmises(p[0], p[1])?,
        // PyTensor: 1 / rng.gamma(shape, 1 / scale), with NumPy's checks of `shape` and of
        // `1 / scale` (a NaN passes both; a zero shape or scale draws inf or 0).
        D::InvGamma => 1.0 / g.gamma(p[0], 1.0 / p[1])?,
        D::Pareto => (1.0 - g.random()).powf(narrow.div(&[0], -1.0, p[0])) * p[1],
        D::TruncExpon => {
            let b = p[0];
            let tail = if narrow.f32[0] {
                f64::from((-(b as f32)).exp_m1())
            } else {
                (-b).exp_m1()
            };
            -(g.random() * tail).ln_1p() * p[2] + p[1]
        }
        D::GenGamma => {
            let shape = narrow.div(&[0, 1], p[0], p[1]);
            g.gamma(shape, 1.0)?.powf(narrow.div(&[1], 1.0, p[1])) * p[2]
        }
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
        | D::ChoiceWithoutReplacementP
        | D::BetaBinom
        | D::MvNormalSvd
        | D::MvNormalEigh => {
            return Err(RandomError::new(
                "dtype",
                format!("{} is not a scalar continuous distribution", dist.name()),
            ));
        }
    })
}

/// Fills `out` with draws of a continuous distribution whose parameters `p` are the same for
/// every element: the hot distributions check their parameters once and run the generator's
/// bulk loops (the same arithmetic as its methods, with the state in registers); the others
/// draw one by one.
fn fill_repeated(
    g: &mut Generator,
    dist: Distribution,
    p: &[f64],
    narrow: Narrow,
    out: &mut [f64],
) -> Result<(), RandomError> {
    match dist {
        Distribution::Normal => {
            oxtensor_random::check_non_negative("scale", p[1])?;
            g.fill_normal(p[0], p[1], out);
        }
        Distribution::Uniform => {
            // Validated by one call (the finite range check), then NumPy's `low + range * u`.
            if let Some((first, rest)) = out.split_first_mut() {
                *first = g.uniform(p[0], p[1])?;
                g.fill_uniform(p[0], p[1] - p[0], rest);
            }
        }
        Distribution::Exponential => {
            oxtensor_random::check_non_negative("scale", p[0])?;
            g.fill_exponential(p[0], out);
        }
        _ => {
            for o in out.iter_mut() {
                *o = draw_float(g, dist, p, narrow)?;
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

/// Categorical draws into `out`, one per batch element: `p` must hold probabilities summing to
/// 1 (NumPy's `choice` checks and messages, with `sqrt(eps)` of `p`'s dtype as the tolerance;
/// `f32`: `p` is `float32`). Every row is checked before the first draw.
fn categoricals(
    g: &mut Generator,
    p: &Column<f64>,
    f32: bool,
    out: &mut [i64],
) -> Result<(), RandomError> {
    let atol = if f32 {
        f64::from(f32::EPSILON).sqrt()
    } else {
        f64::EPSILON.sqrt()
    };
    let rows = if p.repeated { 1 } else { out.len() };
    for i in 0..rows {
        oxtensor_random::check_probabilities(p.at(i), atol)?;
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = categorical(g, p.at(i));
    }
    Ok(())
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

/// `dirichlet(alpha)` for each of `count` batch elements into `out` (a point of `alpha`'s core
/// length per batch element, C order).
fn dirichlets(
    g: &mut Generator,
    alpha: &Column<f64>,
    count: usize,
    out: &mut [f64],
) -> Result<(), RandomError> {
    let k = alpha.core;
    for i in 0..count {
        g.dirichlet_into(alpha.at(i), &mut out[i * k..(i + 1) * k])?;
    }
    Ok(())
}

/// `multinomial(n, p)` for each of `count` batch elements into `out` (counts of `p`'s core
/// length per batch element, C order).
fn multinomials(
    g: &mut Generator,
    n: &Column<i64>,
    p: &Column<f64>,
    count: usize,
    out: &mut [i64],
) -> Result<(), RandomError> {
    let k = p.core;
    for i in 0..count {
        g.multinomial_into(n.at(i)[0], p.at(i), &mut out[i * k..(i + 1) * k])?;
    }
    Ok(())
}

/// `multivariate_normal`'s covariance core must be `n`x`n` for a mean of `n` entries.
fn mv_cov_matches(cov: &Column<f64>, n: usize) -> Result<(), KernelError> {
    if cov.core != n * n {
        return Err(KernelError::Shape(format!(
            "multivariate_normal: cov must be {n}x{n} to match mean's {n} entries, got {} entries",
            cov.core
        )));
    }
    Ok(())
}

/// `beta(a, b)` for every batch element, then `binomial(n, p)` for each (SciPy's
/// `betabinom.rvs` as PyTensor calls it), after checking every parameter, into `out` (one per
/// batch element), with the probabilities in `p` (kept by [`InPlaceDraws`] between calls).
fn betabinom(
    g: &mut Generator,
    (n, a, b): (&Column<i64>, &Column<f64>, &Column<f64>),
    p: &mut Vec<f64>,
    out: &mut [i64],
) -> Result<(), RandomError> {
    let count = out.len();
    for i in 0..count {
        let k = n.at(i)[0];
        if k < 0 {
            return Err(RandomError::new(
                "n",
                format!("n < 0 (expected n >= 0, got {k})"),
            ));
        }
        positive("a", a.at(i)[0])?;
        positive("b", b.at(i)[0])?;
    }
    p.clear();
    for i in 0..count {
        p.push(g.beta(a.at(i)[0], b.at(i)[0])?);
    }
    for (i, (o, &pi)) in out.iter_mut().zip(p.iter()).enumerate() {
        *o = g.binomial(n.at(i)[0], pi)?;
    }
    Ok(())
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
            if dist == Distribution::Dirichlet {
                let mut out = vec![0.0; count * support];
                dirichlets(&mut g, &floats[0], count, &mut out).map_err(|e| bad(dist, e))?;
                Tensor::from_slice(&out, &shape)?
            } else {
                let mut out = vec![0i64; count * support];
                multinomials(&mut g, &ints[0], &floats[1], count, &mut out)
                    .map_err(|e| bad(dist, e))?;
                Tensor::from_slice(&out, &shape)?
            }
        }
        _ if dist.is_mv_normal() => {
            let n = floats[0].core;
            mv_cov_matches(&floats[1], n)?;
            shape.push(n);
            let mut out = vec![0.0; count * n];
            let mut scratch = mvnormal::MvScratch::default();
            let params = [&floats[0], &floats[1]];
            mvnormal::mv_normal(&mut g, dist, params, count, n, &mut scratch, &mut out)?;
            Tensor::from_slice(&out, &shape)?
        }
        Distribution::Categorical => {
            let mut out = vec![0i64; count];
            categoricals(
                &mut g,
                &floats[0],
                params[0].dtype() == DType::F32,
                &mut out,
            )
            .map_err(|e| bad(dist, e))?;
            Tensor::from_slice(&out, &shape)?
        }
        Distribution::BetaBinom => {
            let mut out = vec![0i64; count];
            let params = (&ints[0], &floats[1], &floats[2]);
            betabinom(&mut g, params, &mut Vec::new(), &mut out).map_err(|e| bad(dist, e))?;
            Tensor::from_slice(&out, &shape)?
        }
        _ => {
            let arrays = numpy_sees_arrays(r, params);
            let narrow = Narrow::of(params);
            if dist.is_discrete() {
                let mut out = vec![0i64; count];
                let draws = scalar::Draws::Int(&mut out);
                scalar::draw_scalars(&mut g, dist, &floats, &ints, arrays, narrow, draws)?;
                Tensor::from_slice(&out, &shape)?
            } else {
                let mut result = Ok(());
                let t = Tensor::build::<f64>(&shape, |out| {
                    let draws = scalar::Draws::Float(out);
                    result =
                        scalar::draw_scalars(&mut g, dist, &floats, &ints, arrays, narrow, draws);
                })?;
                result?;
                t
            }
        }
    };
    Ok(vec![generator_to_tensor(&g), draw.cast(r.dtype)])
}
