"""Random draws (``Op::Random``) with ``jax.random``, the generator threaded as a key.

**JAX draws are not NumPy's streams.** The default mode draws what NumPy's ``Generator``
draws for the same PCG64 state; ``jax.random`` has its own counter-based generator
(threefry) and its own sampling algorithms, so ``mode="JAX"`` gives draws from the same
distribution, with the same parameterisation, shapes and dtypes, but different numbers.

A generator value stays what it is everywhere else in a graph (a ``uint64`` vector of the six
PCG64 state words), so ops that carry generators (``IfElse``, ``Scan`` states, function
inputs and outputs) need nothing special. Each draw:

1. derives a JAX (threefry) key from the six words (``key_of``: the words hashed together),
   so equal generator states give equal keys and the same seed gives the same JAX numbers
   run to run;
2. draws five words from that key (``advance``): one is the key the values are drawn with,
   four become the next generator value (the increment made odd, no buffered bits), a
   valid PCG64 state.

So a shared generator updated by a JAX function (``updates`` or a ``default_update``, as
``RandomStream`` sets) holds after the call a NumPy ``Generator`` in that derived state:
successive calls draw new numbers, ``get_value`` returns a working ``Generator`` (whose NumPy
stream differs from the one the default mode would have reached), and ``set_value`` (or
``RandomStream.seed``) reseeds the JAX draws too. Two draws from the same generator value
(not chained through ``next_rng``) give the same numbers, as in the default mode.

Draws whose shapes JAX needs while tracing (``size``, the count of ``permutation`` or of
``choice`` without replacement) must be known then (constants); otherwise the function fails
at compile time naming the op. Rejection and urn samplers (``vonmises``, ``hypergeometric``)
are ``lax.while_loop``s over whole arrays, so their shapes stay static. Every distribution of
``pt.random`` has a translation; a distribution added later without one fails at compile
time naming the op.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from oxtensor.link.jax.dispatch import is_concrete, op_label, register, static_int

_IMPL = "threefry2x32"
_F = jnp.float64


def _mix(h):
    """SplitMix64's finalizer: a bijection of ``uint64`` that spreads every input bit."""
    h = (h ^ (h >> jnp.uint64(30))) * jnp.uint64(0xBF58476D1CE4E5B9)
    h = (h ^ (h >> jnp.uint64(27))) * jnp.uint64(0x94D049BB133111EB)
    return h ^ (h >> jnp.uint64(31))


def _key_from(word):
    """The threefry key whose data are the two halves of a ``uint64``."""
    halves = jnp.stack([(word >> jnp.uint64(32)).astype(jnp.uint32), word.astype(jnp.uint32)])
    return jax.random.wrap_key_data(halves, impl=_IMPL)


def key_of(words):
    """The JAX key a generator value (the six PCG64 state words) stands for: the words
    hashed together (SplitMix64 steps, cheap to compile, unlike threefry folds)."""
    w = jnp.asarray(words).astype(jnp.uint64)
    h = jnp.uint64(0)
    for i in range(6):
        h = _mix((h ^ w[i]) + jnp.uint64(0x9E3779B97F4A7C15))
    return _key_from(h)


def advance(words):
    """``(draw key, next generator value)`` of a generator value: five threefry words of its
    key, one the key of the draw, four a valid PCG64 state (odd increment, no buffered
    32-bit half) for the next generator value, so NumPy can go on drawing from it."""
    bits = jax.random.bits(key_of(words), (5,), jnp.uint64)
    state = bits[1:].at[3].set(bits[4] | jnp.uint64(1))
    return _key_from(bits[0]), jnp.concatenate([state, jnp.zeros((2,), jnp.uint64)])


def _loc_scale(standard):
    """``loc + scale * z`` with ``z`` from ``standard(key, shape)``."""
    return lambda k, shape, loc, scale: loc + scale * standard(k, shape)


def _normal(k, shape):
    return jax.random.normal(k, shape, _F)


def _uniform(k, shape):
    return jax.random.uniform(k, shape, _F)


def _gamma(k, a, shape):
    """Standard gamma draws of shape ``a``: Marsaglia and Tsang (2000), one normal and one
    uniform per attempt, every element retried until accepted (a while loop over the whole
    array: XLA compiles it in about half of ``jax.random.gamma``'s time); ``a < 1`` draws
    ``gamma(a + 1) * u ** (1 / a)``. An ``a`` that is negative or NaN gives NaN."""
    a = jnp.broadcast_to(jnp.asarray(a, _F), shape)
    valid = a >= 0
    boost = a < 1
    d = jnp.where(valid, jnp.where(boost, a + 1, a), 1.0) - 1 / 3
    c = 1 / jnp.sqrt(9 * d)

    def body(state):
        key, done, value = state
        key, k1, k2 = jax.random.split(key, 3)
        x = jax.random.normal(k1, shape, _F)
        v = (1 + c * x) ** 3
        log_u = jnp.log(jax.random.uniform(k2, shape, _F))
        ok = (v > 0) & (log_u < 0.5 * x * x + d - d * v + d * jnp.log(jnp.where(v > 0, v, 1.0)))
        return key, done | ok, jnp.where(ok & ~done, d * v, value)

    k_loop, k_boost = jax.random.split(k)
    init = (k_loop, ~valid, jnp.full(shape, jnp.nan, _F))
    _, _, g = jax.lax.while_loop(lambda s: ~jnp.all(s[1]), body, init)
    u = jax.random.uniform(k_boost, shape, _F)
    return jnp.where(boost & valid, g * u ** (1 / jnp.where(valid, a, 1.0)), g)


def _beta(k, a, b, shape):
    k1, k2 = jax.random.split(k)
    x, y = _gamma(k1, a, shape), _gamma(k2, b, shape)
    return x / (x + y)


def _student_t(k, df, shape):
    k1, k2 = jax.random.split(k)
    return jax.random.normal(k1, shape, _F) / jnp.sqrt(2 * _gamma(k2, df / 2, shape) / df)


def _binomial(k, n, p, shape):
    return jnp.round(jax.random.binomial(k, n.astype(_F), p, shape, _F))


def _wald(k, shape, mean, scale):
    # The transformation-with-rejection of Michael, Schucany and Haas (1976): one normal and
    # one uniform per draw, no loop.
    k1, k2 = jax.random.split(k)
    y = jax.random.normal(k1, shape, _F) ** 2
    my = mean * y
    x = mean + mean * my / (2 * scale) - mean / (2 * scale) * jnp.sqrt(4 * scale * my + my * my)
    u = jax.random.uniform(k2, shape, _F)
    return jnp.where(u <= mean / (mean + x), x, mean * mean / x)


def _vonmises(k, shape, mu, kappa):
    # Best and Fisher (1979) as NumPy runs it: rejection sampling, every element retried until
    # accepted (a while loop over the whole array, static shapes). Below kappa = 1e-8 the
    # circle is uniform, above 1e6 a normal of variance 1 / kappa; the loop runs those
    # elements with kappa = 1 and their values are replaced.
    tiny, huge = kappa < 1e-8, kappa > 1e6
    kap = jnp.where(tiny | huge, 1.0, kappa)
    tau = 1 + jnp.sqrt(1 + 4 * kap * kap)
    rho = (tau - jnp.sqrt(2 * tau)) / (2 * kap)
    r = jnp.where(kap < 1e-5, 1 / kap + kap, (1 + rho * rho) / (2 * rho))

    def attempt(key):
        k1, k2 = jax.random.split(key)
        z = jnp.cos(jnp.pi * jax.random.uniform(k1, shape, _F))
        f = (1 + r * z) / (r + z)
        c = kap * (r - f)
        u2 = jax.random.uniform(k2, shape, _F)
        ok = (c * (2 - c) - u2 >= 0) | (jnp.log(c / u2) + 1 - c >= 0)
        return ok, f

    def body(state):
        key, done, value = state
        key, sub = jax.random.split(key)
        ok, candidate = attempt(sub)
        return key, done | ok, jnp.where(ok & ~done, candidate, value)

    k_loop, k_sign, k_other = jax.random.split(k, 3)
    init = (k_loop, ~(kappa >= 0), jnp.full(shape, jnp.nan, _F))
    _, _, f = jax.lax.while_loop(lambda s: ~jnp.all(s[1]), body, init)
    sign = jnp.where(jax.random.uniform(k_sign, shape, _F) < 0.5, -1.0, 1.0)
    theta = sign * jnp.arccos(f)
    theta = jnp.where(tiny, jnp.pi * (2 * jax.random.uniform(k_other, shape, _F) - 1), theta)
    theta = jnp.where(huge, jax.random.normal(k_other, shape, _F) / jnp.sqrt(jnp.where(huge, kappa, 1.0)), theta)
    return jnp.mod(mu + theta + jnp.pi, 2 * jnp.pi) - jnp.pi


def _hypergeometric(k, shape, ngood, nbad, nsample):
    # The urn drawn one item at a time, every element at once: a while loop as long as the
    # largest sample, each element stopping at its own ``nsample``.
    good, total = ngood.astype(_F), (ngood + nbad).astype(_F)

    def body(state):
        i, key, good, total, count = state
        key, sub = jax.random.split(key)
        active = i < nsample
        picked = active & (jax.random.uniform(sub, shape, _F) * total < good)
        return i + 1, key, good - picked, total - active, count + picked

    init = (jnp.int64(0), k, good, total, jnp.zeros(shape, jnp.int64))
    last = jnp.max(nsample, initial=0)
    return jax.lax.while_loop(lambda s: s[0] < last, body, init)[4]


def _nbinom(k, shape, n, p):
    k1, k2 = jax.random.split(k)
    lam = _gamma(k1, n, shape) * (1 - p) / p
    return jax.random.poisson(k2, lam, shape, jnp.int64)


def _betabinom(k, shape, n, a, b):
    k1, k2 = jax.random.split(k)
    return _binomial(k2, n, _beta(k1, a, b, shape), shape)


#: Distributions whose parameters are all scalars per draw: ``fn(key, shape, *params)``,
#: the parameters broadcast to ``shape`` (``size`` or their common shape).
UNIVARIATE = {
    "normal": _loc_scale(_normal),
    "uniform": lambda k, s, low, high: low + (high - low) * _uniform(k, s),
    "integers": lambda k, s, low, high: jax.random.randint(k, s, low, high, jnp.int64),
    "exponential": lambda k, s, scale: scale * jax.random.exponential(k, s, _F),
    "gamma": lambda k, s, a, scale: scale * _gamma(k, a, s),
    "beta": lambda k, s, a, b: _beta(k, a, b, s),
    "lognormal": lambda k, s, mean, sigma: jnp.exp(mean + sigma * _normal(k, s)),
    "halfnormal": _loc_scale(lambda k, s: jnp.abs(_normal(k, s))),
    "bernoulli": lambda k, s, p: jax.random.bernoulli(k, p, s),
    "binomial": lambda k, s, n, p: _binomial(k, n, p, s),
    "poisson": lambda k, s, lam: jax.random.poisson(k, lam, s, jnp.int64),
    "geometric": lambda k, s, p: jax.random.geometric(k, p, s, jnp.int64),
    "nbinom": _nbinom,
    "hypergeometric": _hypergeometric,
    "betabinom": _betabinom,
    "t": lambda k, s, df, loc, scale: loc + scale * _student_t(k, df, s),
    "cauchy": _loc_scale(lambda k, s: jax.random.cauchy(k, s, _F)),
    "halfcauchy": _loc_scale(lambda k, s: jnp.abs(jax.random.cauchy(k, s, _F))),
    "laplace": _loc_scale(lambda k, s: jax.random.laplace(k, s, _F)),
    "logistic": _loc_scale(lambda k, s: jax.random.logistic(k, s, _F)),
    "gumbel": _loc_scale(lambda k, s: jax.random.gumbel(k, s, _F)),
    "weibull": lambda k, s, a: jax.random.weibull_min(k, 1.0, a, s, _F),
    "wald": _wald,
    "triangular": lambda k, s, left, mode, right: jax.random.triangular(k, left, mode, right, s, _F),
    "vonmises": _vonmises,
    "invgamma": lambda k, s, a, scale: scale / _gamma(k, a, s),
    "pareto": lambda k, s, b, scale: scale * (1 - _uniform(k, s)) ** (-1 / b),
    "gengamma": lambda k, s, alpha, p, lambd: lambd * _gamma(k, alpha / p, s) ** (1 / p),
    "truncexpon": lambda k, s, b, loc, scale: loc - scale * jnp.log1p(_uniform(k, s) * jnp.expm1(-b)),
}


def _factor(method):
    """``A`` with ``A @ A.T == cov`` as PyTensor's ``multivariate_normal(method=...)`` takes it."""

    def cholesky(cov):
        return jnp.linalg.cholesky(cov)

    def svd(cov):
        u, s, _ = jnp.linalg.svd(cov)
        return u * jnp.sqrt(s)[..., None, :]

    def eigh(cov):
        w, v = jnp.linalg.eigh(cov)
        return v * jnp.sqrt(jnp.clip(w, 0, None))[..., None, :]

    return {"cholesky": cholesky, "svd": svd, "eigh": eigh}[method]


def _mvnormal(method):
    factor = _factor(method)

    def draw(k, batch, mean, cov):
        d = mean.shape[-1]
        mean = jnp.broadcast_to(mean, batch + (d,)).astype(_F)
        cov = jnp.broadcast_to(cov, batch + (d, d)).astype(_F)
        z = jax.random.normal(k, batch + (d,), _F)
        return mean + jnp.einsum("...ij,...j->...i", factor(cov), z)

    return draw


def _dirichlet(k, batch, alphas):
    a = jnp.broadcast_to(alphas, batch + alphas.shape[-1:]).astype(_F)
    g = _gamma(k, a, a.shape)
    return g / g.sum(axis=-1, keepdims=True)


def _multinomial(k, batch, n, p):
    p = jnp.broadcast_to(p, batch + p.shape[-1:]).astype(_F)
    n = jnp.broadcast_to(n, batch).astype(_F)
    return jnp.round(jax.random.multinomial(k, n, p, shape=p.shape, dtype=_F))


def _categorical(k, batch, p):
    logits = jnp.log(jnp.broadcast_to(p, batch + p.shape[-1:]).astype(_F))
    return jax.random.categorical(k, logits, axis=-1)


#: Distributions with vector or matrix parameters: ``fn(key, batch, *params)``, the core
#: dimensions of each parameter given by ``CORE_NDIMS``.
MULTIVARIATE = {
    "multivariate_normal": _mvnormal("cholesky"),
    "multivariate_normal_svd": _mvnormal("svd"),
    "multivariate_normal_eigh": _mvnormal("eigh"),
    "dirichlet": _dirichlet,
    "multinomial": _multinomial,
    "categorical": _categorical,
}

#: The core dimensions of each parameter of the multivariate distributions.
CORE_NDIMS = {
    "multivariate_normal": (1, 2),
    "multivariate_normal_svd": (1, 2),
    "multivariate_normal_eigh": (1, 2),
    "dirichlet": (1,),
    "multinomial": (0, 1),
    "categorical": (1,),
}


def _batch_shape(op, size, params, core):
    """The batch shape of a draw: ``size`` when given (a value known while tracing), else the
    parameters' batch shapes broadcast together."""
    if size is not None:
        if not is_concrete(size):
            raise NotImplementedError(
                f"JAX needs the size of {op_label(op)} while tracing, but it depends on input values"
            )
        return tuple(int(s) for s in np.asarray(size).reshape(-1))
    shapes = [p.shape[: p.ndim - c] for p, c in zip(params, core)]
    return tuple(np.broadcast_shapes(*shapes)) if shapes else ()


def _permutation(op, k, size, x):
    """``permutation(x)``: a shuffled ``arange(x)`` for a scalar ``x`` (known while tracing),
    else ``x`` shuffled along its first axis, once per batch element of ``size``."""
    if x.ndim == 0:
        if size is not None:
            raise NotImplementedError(f"no JAX translation for op {op_label(op)} of a scalar with a size")
        return jax.random.permutation(k, static_int(x, "length", op))
    batch = _batch_shape(op, size, [], ())
    if not batch:
        return jax.random.permutation(k, jnp.asarray(x), axis=0)
    whole = jnp.broadcast_to(x, batch + x.shape).reshape((-1,) + x.shape)
    keys = jax.random.split(k, whole.shape[0])
    shuffled = jax.vmap(lambda kk, xx: jax.random.permutation(kk, xx, axis=0))(keys, whole)
    return shuffled.reshape(batch + x.shape)


def _choice(op, k, a, p, core_shape):
    """``choice(a, core_shape, replace=False, p=p)`` of ``a``'s first axis (``arange(a)`` for a
    scalar ``a``, known while tracing)."""
    if not is_concrete(core_shape):
        raise NotImplementedError(
            f"JAX needs the sample shape of {op_label(op)} while tracing, but it depends on input values"
        )
    shape = tuple(int(s) for s in np.asarray(core_shape).reshape(-1))
    pool = static_int(a, "population", op) if np.ndim(a) == 0 else jnp.asarray(a)
    probs = None if p is None else jnp.asarray(p, _F)
    return jax.random.choice(k, pool, shape, replace=False, p=probs)


def _draw_fn(op):
    """``fn(op, key, size, params)``: the values of one draw of ``op``'s distribution."""
    dist = op["dist"]
    if dist in UNIVARIATE:
        sample = UNIVARIATE[dist]

        def univariate(op, k, size, params):
            params = [jnp.asarray(p) for p in params]
            shape = _batch_shape(op, size, params, [0] * len(params))
            return sample(k, shape, *[jnp.broadcast_to(p, shape) for p in params])

        return univariate
    if dist in MULTIVARIATE:
        sample, core = MULTIVARIATE[dist], CORE_NDIMS[dist]

        def multivariate(op, k, size, params):
            params = [jnp.asarray(p) for p in params]
            return sample(k, _batch_shape(op, size, params, core), *params)

        return multivariate
    if dist == "permutation":
        return lambda op, k, size, params: _permutation(op, k, size, *params)
    if dist == "choice_without_replacement":
        return lambda op, k, size, params: _choice(op, k, params[0], None, params[1])
    if dist == "choice_without_replacement_p":
        return lambda op, k, size, params: _choice(op, k, *params)
    raise NotImplementedError(f"no JAX translation for op {op_label(op)}: jax.random has no sampler for it")


@register("Random")
def _random(op, node, doc):
    draw = _draw_fn(op)
    has_size = op["size_ndim"] is not None
    dtype = np.dtype(op["dtype"])

    def run(words, size, *params):
        size = size if has_size else None
        draw_key, next_words = advance(words)
        values = draw(op, draw_key, size, params)
        return next_words, jnp.asarray(values).astype(dtype)

    return run
