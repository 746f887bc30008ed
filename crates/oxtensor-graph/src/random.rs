//! Random variables as pure graph ops ([`Op::Random`]).
//!
//! The graph stays purely functional: a random generator is a value like any other, a `uint64`
//! vector of [`RNG_WORDS`] words holding NumPy's PCG64 state (see [`RNG_WORDS`] for the
//! layout). A random op takes a generator and returns the *next* generator and a draw, so it
//! is a pure function of its inputs: hash-consing two equal draws from the same generator value
//! into one node is correct (they are the same numbers), and state only advances when a
//! function stores the next generator back into a shared variable (an update).
//!
//! Inputs of a [`RandomOp`] node: `(rng, size, params...)`.
//! * `rng`: the generator vector.
//! * `size`: an integer vector of `size_ndim` extents (NumPy's `size=`), or, when the op has
//!   no size (`size_ndim == None`), an integer vector of length 0 that is ignored; the batch
//!   shape is then the broadcast of the parameters' batch shapes.
//! * `params`: one tensor per parameter of the [`Distribution`]; each has
//!   [`Distribution::param_core_ndims`] trailing core dimensions and leading batch dimensions
//!   that broadcast (NumPy rules, right-aligned) against each other and against `size`.
//!
//! Outputs: `(next_rng, draw)`; the draw's shape is the batch shape followed by the support
//! dimensions ([`Distribution::support_ndim`]), of the op's `dtype`.

use crate::{GraphError, Op, StaticShape, TensorType, Var};
use oxtensor_data::DType;
use smallvec::{SmallVec, smallvec};
use std::fmt;

/// Words in a generator value: `[state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger]`,
/// the 128-bit LCG state and increment of PCG64 split into high and low 64-bit halves, then
/// the flag and value of the buffered 32-bit half (NumPy's `bit_generator.state` dict).
pub const RNG_WORDS: usize = 6;

/// The dtype of a generator value.
pub const RNG_DTYPE: DType = DType::U64;

/// A distribution a [`RandomOp`] draws from, with PyTensor's parameters in PyTensor's order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Distribution {
    /// `normal(loc, scale)`: `loc + scale * z` (NumPy's ziggurat).
    Normal,
    /// `uniform(low, high)` on `[low, high)`.
    Uniform,
    /// `integers(low, high)` on `[low, high)` (NumPy's Lemire / masked bounded integers).
    Integers,
    /// `exponential(scale)`.
    Exponential,
    /// `gamma(shape, scale)` (the builder turns PyTensor's `rate` into `scale = 1 / rate`).
    Gamma,
    /// `beta(alpha, beta)`.
    Beta,
    /// `lognormal(mean, sigma)`: `exp(normal(mean, sigma))`.
    LogNormal,
    /// `halfnormal(loc, scale)`: `loc + scale * |z|` (SciPy's `halfnorm.rvs`, as PyTensor).
    HalfNormal,
    /// `bernoulli(p)`: `binomial(1, p)` (SciPy's `bernoulli.rvs`, as PyTensor).
    Bernoulli,
    /// `binomial(n, p)`.
    Binomial,
    /// `poisson(lam)`.
    Poisson,
    /// `geometric(p)`: trials until the first success (support 1, 2, ...).
    Geometric,
    /// `negative_binomial(n, p)`.
    NegativeBinomial,
    /// `hypergeometric(ngood, nbad, nsample)`.
    Hypergeometric,
    /// `chisquare(df)`.
    ChiSquare,
    /// `t(df, loc, scale)`: `loc + scale * standard_t(df)`.
    StudentT,
    /// `cauchy(loc, scale)`: `loc + scale * standard_cauchy()`.
    Cauchy,
    /// `halfcauchy(loc, scale)`: `loc + scale * |standard_cauchy()|`.
    HalfCauchy,
    /// `laplace(loc, scale)`.
    Laplace,
    /// `logistic(loc, scale)`.
    Logistic,
    /// `gumbel(loc, scale)`.
    Gumbel,
    /// `weibull(alpha)`.
    Weibull,
    /// `wald(mean, scale)`.
    Wald,
    /// `triangular(left, mode, right)`.
    Triangular,
    /// `vonmises(mu, kappa)`.
    VonMises,
    /// `invgamma(alpha, beta)`: `beta / standard_gamma(alpha)`.
    InvGamma,
    /// `dirichlet(alpha)`: `alpha` has one core dimension, the draw one support dimension.
    Dirichlet,
    /// `multinomial(n, p)`: `p` has one core dimension, the draw one support dimension.
    Multinomial,
    /// `categorical(p)`: `p` has one core dimension; the draw is an index into it.
    Categorical,
    /// `multivariate_normal(mean, cov)`: `mean` has one core dimension, `cov` two; the draw
    /// is `cholesky(cov) @ z + mean` with `z` standard normal (PyTensor's default method).
    MvNormal,
    /// `permutation(x)`: `x` an integer scalar `n` (a shuffled `arange(n)`) or an array (its
    /// rows shuffled, NumPy's `permutation`); the draw has `x`'s dtype. With `size`, `x` (an
    /// array) is broadcast to `(*size, *x.shape)` and each batch element shuffled in C order.
    Permutation,
    /// `choice(a, core_shape, replace=False)`: `a` an integer scalar (choose from `arange(a)`)
    /// or an array (choose its rows); `core_shape` an integer vector, the shape of the sample.
    /// The draw is `(*core_shape, *a.shape[1:])` of `a`'s dtype. No `size`.
    ChoiceWithoutReplacement,
    /// [`Self::ChoiceWithoutReplacement`] with probabilities `p`, one per row of `a`.
    ChoiceWithoutReplacementP,
    /// `pareto(b, scale)`: SciPy's inverse-CDF sampling `scale * (1 - u) ** (-1 / b)` of one
    /// uniform, as PyTensor draws it.
    Pareto,
    /// `truncexpon(b, loc, scale)`: SciPy's inverse-CDF sampling
    /// `-log1p(u * expm1(-b)) * scale + loc` of one uniform.
    TruncExpon,
    /// `gengamma(alpha, p, lambd)`: `standard_gamma(alpha / p) ** (1 / p) * lambd` (SciPy's
    /// `gengamma.rvs(alpha / p, p, scale=lambd)`).
    GenGamma,
    /// `betabinom(n, a, b)`: SciPy's `binomial(n, beta(a, b))`, every beta drawn first, then
    /// every binomial.
    BetaBinom,
    /// [`Self::MvNormal`] with the factor `u * sqrt(s)` of `svd(cov)` (`method="svd"`).
    MvNormalSvd,
    /// [`Self::MvNormal`] with the factor `v * sqrt(w)` of `eigh(cov)` (`method="eigh"`).
    MvNormalEigh,
}

impl Distribution {
    /// Every distribution, in declaration order.
    pub const ALL: [Distribution; 39] = {
        use Distribution as D;
        [
            D::Normal,
            D::Uniform,
            D::Integers,
            D::Exponential,
            D::Gamma,
            D::Beta,
            D::LogNormal,
            D::HalfNormal,
            D::Bernoulli,
            D::Binomial,
            D::Poisson,
            D::Geometric,
            D::NegativeBinomial,
            D::Hypergeometric,
            D::ChiSquare,
            D::StudentT,
            D::Cauchy,
            D::HalfCauchy,
            D::Laplace,
            D::Logistic,
            D::Gumbel,
            D::Weibull,
            D::Wald,
            D::Triangular,
            D::VonMises,
            D::InvGamma,
            D::Dirichlet,
            D::Multinomial,
            D::Categorical,
            D::MvNormal,
            D::Permutation,
            D::ChoiceWithoutReplacement,
            D::ChoiceWithoutReplacementP,
            D::Pareto,
            D::TruncExpon,
            D::GenGamma,
            D::BetaBinom,
            D::MvNormalSvd,
            D::MvNormalEigh,
        ]
    };

    /// The distribution of PyTensor name `name` (see [`Self::name`]).
    pub fn by_name(name: &str) -> Option<Distribution> {
        Distribution::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The PyTensor name (used when printing and in error messages).
    pub fn name(self) -> &'static str {
        use Distribution as D;
        match self {
            D::Normal => "normal",
            D::Uniform => "uniform",
            D::Integers => "integers",
            D::Exponential => "exponential",
            D::Gamma => "gamma",
            D::Beta => "beta",
            D::LogNormal => "lognormal",
            D::HalfNormal => "halfnormal",
            D::Bernoulli => "bernoulli",
            D::Binomial => "binomial",
            D::Poisson => "poisson",
            D::Geometric => "geometric",
            D::NegativeBinomial => "nbinom",
            D::Hypergeometric => "hypergeometric",
            D::ChiSquare => "chisquare",
            D::StudentT => "t",
            D::Cauchy => "cauchy",
            D::HalfCauchy => "halfcauchy",
            D::Laplace => "laplace",
            D::Logistic => "logistic",
            D::Gumbel => "gumbel",
            D::Weibull => "weibull",
            D::Wald => "wald",
            D::Triangular => "triangular",
            D::VonMises => "vonmises",
            D::InvGamma => "invgamma",
            D::Dirichlet => "dirichlet",
            D::Multinomial => "multinomial",
            D::Categorical => "categorical",
            D::MvNormal => "multivariate_normal",
            D::Permutation => "permutation",
            D::ChoiceWithoutReplacement => "choice_without_replacement",
            D::ChoiceWithoutReplacementP => "choice_without_replacement_p",
            D::Pareto => "pareto",
            D::TruncExpon => "truncexpon",
            D::GenGamma => "gengamma",
            D::BetaBinom => "betabinom",
            D::MvNormalSvd => "multivariate_normal_svd",
            D::MvNormalEigh => "multivariate_normal_eigh",
        }
    }

    /// The parameter names, in input order.
    pub fn params(self) -> &'static [&'static str] {
        use Distribution as D;
        match self {
            D::Normal | D::HalfNormal | D::Cauchy | D::HalfCauchy | D::Laplace => &["loc", "scale"],
            D::Logistic | D::Gumbel => &["loc", "scale"],
            D::Uniform | D::Integers => &["low", "high"],
            D::Exponential => &["scale"],
            D::Gamma => &["shape", "scale"],
            D::Beta => &["alpha", "beta"],
            D::LogNormal => &["mean", "sigma"],
            D::Bernoulli | D::Geometric | D::Categorical => &["p"],
            D::Binomial | D::NegativeBinomial | D::Multinomial => &["n", "p"],
            D::Poisson => &["lam"],
            D::Hypergeometric => &["ngood", "nbad", "nsample"],
            D::ChiSquare => &["df"],
            D::StudentT => &["df", "loc", "scale"],
            D::Weibull => &["alpha"],
            D::Wald => &["mean", "scale"],
            D::Triangular => &["left", "mode", "right"],
            D::VonMises => &["mu", "kappa"],
            D::InvGamma => &["alpha", "beta"],
            D::Dirichlet => &["alpha"],
            D::MvNormal | D::MvNormalSvd | D::MvNormalEigh => &["mean", "cov"],
            D::Pareto => &["b", "scale"],
            D::TruncExpon => &["b", "loc", "scale"],
            D::GenGamma => &["alpha", "p", "lambd"],
            D::BetaBinom => &["n", "a", "b"],
            D::Permutation => &["x"],
            D::ChoiceWithoutReplacement => &["a", "core_shape"],
            D::ChoiceWithoutReplacementP => &["a", "p", "core_shape"],
        }
    }

    /// Core dimensions of parameter `k` (trailing dimensions one draw consumes whole).
    pub fn param_core_ndims(self, k: usize) -> usize {
        match (self, k) {
            (Distribution::Dirichlet, 0)
            | (Distribution::Categorical, 0)
            | (Distribution::Multinomial, 1)
            | (
                Distribution::MvNormal | Distribution::MvNormalSvd | Distribution::MvNormalEigh,
                0,
            ) => 1,
            (
                Distribution::MvNormal | Distribution::MvNormalSvd | Distribution::MvNormalEigh,
                1,
            ) => 2,
            _ => 0,
        }
    }

    /// Dimensions of one draw: 1 for vector-valued distributions (their extent is the last
    /// extent of the parameter [`Self::support_param`] names), 0 otherwise.
    pub fn support_ndim(self) -> usize {
        match self {
            Distribution::Dirichlet | Distribution::Multinomial => 1,
            d if d.is_mv_normal() => 1,
            _ => 0,
        }
    }

    /// The parameter whose last extent is the support extent of a vector-valued draw.
    pub fn support_param(self) -> usize {
        match self {
            Distribution::Multinomial => 1,
            _ => 0,
        }
    }

    /// True for integer-valued distributions (their draws are `int64` by default and their
    /// `dtype` must be an integer type).
    pub fn is_discrete(self) -> bool {
        use Distribution as D;
        matches!(
            self,
            D::Integers
                | D::Bernoulli
                | D::Binomial
                | D::Poisson
                | D::Geometric
                | D::NegativeBinomial
                | D::Hypergeometric
                | D::Multinomial
                | D::Categorical
                | D::BetaBinom
        )
    }

    /// True for `multivariate_normal`, whichever factor of `cov` it uses.
    pub fn is_mv_normal(self) -> bool {
        matches!(
            self,
            Distribution::MvNormal | Distribution::MvNormalSvd | Distribution::MvNormalEigh
        )
    }

    /// True when parameter `k` is read as a 64-bit integer (bounds and counts), not a float.
    pub fn int_param(self, k: usize) -> bool {
        use Distribution as D;
        matches!(
            (self, k),
            (D::Integers, _)
                | (D::Binomial, 0)
                | (D::Hypergeometric, _)
                | (D::Multinomial, 0)
                | (D::BetaBinom, 0)
        )
    }

    /// The default output dtype: `int64` for discrete distributions, `float64` otherwise
    /// (PyTensor's `floatX` is applied by the front end).
    pub fn default_dtype(self) -> DType {
        if self.is_discrete() {
            DType::I64
        } else {
            DType::F64
        }
    }
}

/// A random op: draws from `dist` with the generator input and returns the next generator and
/// the draw (see the module docs for inputs and outputs).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct RandomOp {
    /// What to draw from.
    pub dist: Distribution,
    /// The dtype of the draw (values are drawn as NumPy draws them, in `float64` or `int64`,
    /// then cast, as PyTensor does).
    pub dtype: DType,
    /// The length of the `size` input, or `None` when the draw's batch shape is the
    /// parameters' broadcast shape.
    pub size_ndim: Option<usize>,
}

impl fmt::Display for RandomOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.dist.name();
        let mut chars = name.chars();
        let head: String = chars
            .next()
            .map(|c| c.to_uppercase().collect())
            .unwrap_or_default();
        write!(f, "{head}{}RV{{dtype={}}}", chars.as_str(), self.dtype)
    }
}

/// Checks that `rng` is a generator value (a `uint64` vector of [`RNG_WORDS`] words).
pub fn check_rng(op: &Op, rng: &Var) -> Result<(), GraphError> {
    if rng.dtype() != RNG_DTYPE {
        return Err(GraphError::dtype(
            op,
            rng,
            format!("uint64 (a random generator: {RNG_WORDS} PCG64 state words)"),
        ));
    }
    if rng.ndim() != 1 {
        return Err(GraphError::rank(op, rng, "1 (a random generator vector)"));
    }
    if let Some(n) = rng.ty().shape[0]
        && n != RNG_WORDS
    {
        return Err(GraphError::shape(
            op,
            format!(
                "{} has {n} words, a random generator has {RNG_WORDS}",
                rng.describe()
            ),
        ));
    }
    Ok(())
}

/// The static broadcast of `shapes` (NumPy rules, right-aligned): a known extent other than 1
/// wins over an unknown one, since anything else would fail at run time.
fn broadcast(op: &Op, shapes: &[(StaticShape, &Var)]) -> Result<StaticShape, GraphError> {
    let ndim = shapes.iter().map(|(s, _)| s.len()).max().unwrap_or(0);
    (0..ndim)
        .map(|d| {
            let extents = shapes.iter().filter_map(|(s, v)| {
                let k = (d + s.len()).checked_sub(ndim)?;
                Some((s[k], *v))
            });
            crate::infer::broadcast_dim(op, extents, |w, m, v, n| {
                format!(
                    "the parameters do not broadcast: {} has extent {m} and {} has extent {n} in dimension {d} of the batch shape",
                    w.describe(),
                    v.describe()
                )
            })
        })
        .collect()
}

/// Output types of a random node: `(next_rng, draw)`.
pub fn infer(
    r: &RandomOp,
    op: &Op,
    inputs: &[Var],
) -> Result<SmallVec<[TensorType; 1]>, GraphError> {
    let dist = r.dist;
    let n_params = dist.params().len();
    if inputs.len() != 2 + n_params {
        return Err(GraphError::Arity {
            op: op.to_string(),
            expected: format!("{} (rng, size, {})", 2 + n_params, dist.params().join(", ")),
            got: inputs.len(),
        });
    }
    check_rng(op, &inputs[0])?;
    match dist {
        Distribution::Permutation => return permutation_types(r, op, inputs),
        Distribution::ChoiceWithoutReplacement | Distribution::ChoiceWithoutReplacementP => {
            return choice_types(r, op, inputs);
        }
        _ => {}
    }
    if dist.is_discrete() != r.dtype.is_int() {
        let want = if dist.is_discrete() {
            "an integer"
        } else {
            "a float"
        };
        return Err(GraphError::invalid(
            op,
            format!("{} draws need {want} dtype, got {}", dist.name(), r.dtype),
        ));
    }
    let size = &inputs[1];
    if size.ndim() != 1 || !size.dtype().is_int() {
        return Err(GraphError::dtype(op, size, "an integer vector (size)"));
    }
    let size_len = r.size_ndim.unwrap_or(0);
    if let Some(n) = size.ty().shape[0]
        && n != size_len
    {
        return Err(GraphError::shape(
            op,
            format!("{} has length {n}, expected {size_len}", size.describe()),
        ));
    }
    let mut batches: Vec<(StaticShape, &Var)> = Vec::with_capacity(n_params);
    for (k, p) in inputs[2..].iter().enumerate() {
        let core = dist.param_core_ndims(k);
        if p.ndim() < core {
            return Err(GraphError::rank(
                op,
                p,
                format!(
                    "at least {core} (`{}` of {})",
                    dist.params()[k],
                    dist.name()
                ),
            ));
        }
        batches.push((p.ty().shape[..p.ndim() - core].into(), p));
    }
    let batch: StaticShape = match r.size_ndim {
        Some(n) => {
            let entries = crate::infer::const_entries(size);
            let static_size: StaticShape = (0..n)
                .map(|d| {
                    entries
                        .as_ref()
                        .and_then(|e| e[d])
                        .and_then(|v| usize::try_from(v).ok())
                })
                .collect();
            for (b, p) in &batches {
                if b.len() > n {
                    return Err(GraphError::shape(
                        op,
                        format!(
                            "{} has {} batch dimensions, more than size's {n}",
                            p.describe(),
                            b.len()
                        ),
                    ));
                }
            }
            let mut all = batches.clone();
            all.push((static_size.clone(), size));
            let joined = broadcast(op, &all)?;
            // `size` decides the shape; a parameter may only stretch to it.
            static_size
                .iter()
                .zip(&joined)
                .map(|(s, j)| s.or(*j))
                .collect()
        }
        None => broadcast(op, &batches)?,
    };
    if dist.is_mv_normal() {
        let (mean, cov) = (&inputs[2], &inputs[3]);
        let n = mean.ty().shape[mean.ndim() - 1];
        let tail = &cov.ty().shape[cov.ndim() - 2..];
        for c in tail.iter().flatten() {
            if let Some(n) = n
                && *c != n
            {
                return Err(GraphError::shape(
                    op,
                    format!(
                        "cov {} must be {n}x{n} to match mean {}",
                        cov.describe(),
                        mean.describe()
                    ),
                ));
            }
        }
    }
    let mut draw = batch;
    if dist.support_ndim() == 1 {
        let p = &inputs[2 + dist.support_param()];
        draw.push(p.ty().shape[p.ndim() - 1]);
    }
    Ok(smallvec![
        TensorType::new(RNG_DTYPE, &[Some(RNG_WORDS)]),
        TensorType {
            dtype: r.dtype,
            shape: draw,
        }
    ])
}

/// The extents of an integer vector `v` known when the graph is built (`None` for the others).
fn static_extents(v: &Var, n: usize) -> StaticShape {
    let entries = crate::infer::const_entries(v);
    (0..n)
        .map(|d| {
            entries
                .as_ref()
                .and_then(|e| e[d])
                .and_then(|v| usize::try_from(v).ok())
        })
        .collect()
}

/// Output types of `permutation(x)`: a vector of length `n` for an integer scalar `n`, else
/// `(*size, *x.shape)`, of the op's dtype.
fn permutation_types(
    r: &RandomOp,
    op: &Op,
    inputs: &[Var],
) -> Result<SmallVec<[TensorType; 1]>, GraphError> {
    let (size, x) = (&inputs[1], &inputs[2]);
    let batch_ndim = r.size_ndim.unwrap_or(0);
    let mut shape = static_extents(size, batch_ndim);
    if x.ndim() == 0 {
        if !x.dtype().is_int() {
            return Err(GraphError::dtype(op, x, "an integer (the length n)"));
        }
        if batch_ndim > 0 {
            return Err(GraphError::invalid(
                op,
                "permutation of an integer n does not take a size (give an array to shuffle)",
            ));
        }
        shape.push(x.const_int().and_then(|n| usize::try_from(n).ok()));
    } else {
        shape.extend(x.ty().shape.iter().copied());
    }
    Ok(smallvec![
        TensorType::new(RNG_DTYPE, &[Some(RNG_WORDS)]),
        TensorType {
            dtype: r.dtype,
            shape,
        },
    ])
}

/// Output types of `choice(a, core_shape, replace=False)` (with or without `p`): the sample
/// shape `core_shape`, then `a`'s extents after the first, of the op's dtype.
fn choice_types(
    r: &RandomOp,
    op: &Op,
    inputs: &[Var],
) -> Result<SmallVec<[TensorType; 1]>, GraphError> {
    let a = &inputs[2];
    let core_shape = &inputs[inputs.len() - 1];
    if r.size_ndim.is_some_and(|n| n > 0) {
        return Err(GraphError::invalid(
            op,
            "choice without replacement takes its sample shape as core_shape, not size",
        ));
    }
    if a.ndim() == 0 && !a.dtype().is_int() {
        return Err(GraphError::dtype(op, a, "an integer (the population size)"));
    }
    if inputs.len() == 5 && inputs[3].ndim() != 1 {
        return Err(GraphError::rank(op, &inputs[3], "1 (the probabilities p)"));
    }
    if core_shape.ndim() != 1 || !core_shape.dtype().is_int() {
        return Err(GraphError::dtype(
            op,
            core_shape,
            "an integer vector (the sample shape)",
        ));
    }
    let Some(k) = core_shape.ty().shape[0] else {
        return Err(GraphError::shape(
            op,
            format!(
                "the sample shape {} must have a length known when the graph is built",
                core_shape.describe()
            ),
        ));
    };
    let mut shape = static_extents(core_shape, k);
    if a.ndim() > 0 {
        shape.extend(a.ty().shape[1..].iter().copied());
    }
    Ok(smallvec![
        TensorType::new(RNG_DTYPE, &[Some(RNG_WORDS)]),
        TensorType {
            dtype: r.dtype,
            shape,
        },
    ])
}

/// Symbolic extents of `(next_rng, draw)`: static extents as constants, the others as
/// `Shape_i` of the output itself.
pub fn shape(outputs: &[Var]) -> Result<Vec<Vec<Var>>, GraphError> {
    outputs
        .iter()
        .map(|o| {
            (0..o.ndim())
                .map(|d| match o.ty().shape[d] {
                    Some(n) => Ok(Var::int_constant(n as i64)),
                    None => Var::apply1(Op::ShapeI(d), std::slice::from_ref(o)),
                })
                .collect()
        })
        .collect()
}
