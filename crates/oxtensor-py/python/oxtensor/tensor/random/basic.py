"""The distributions of ``pt.random`` with PyTensor 3's signatures.

Each takes its parameters (broadcast together, NumPy rules), then ``size``, ``rng``, ``dtype``,
``name`` and ``return_next_rng`` as keywords. Values are drawn as NumPy's ``Generator`` (or, for
PyTensor's own distributions, PyTensor's NumPy/SciPy code) draws them for the same generator
state, in ``float64``/``int64``, then cast to ``dtype`` (``floatX`` by default for continuous
distributions, ``int64`` for discrete ones).
"""

from __future__ import annotations

import warnings

import numpy as np

from oxtensor import _core
from oxtensor.configdefaults import config

__all__ = [
    "bernoulli",
    "beta",
    "betabinom",
    "binomial",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "dirichlet",
    "exponential",
    "gamma",
    "gengamma",
    "geometric",
    "gumbel",
    "halfcauchy",
    "halfnormal",
    "hypergeometric",
    "integers",
    "invgamma",
    "laplace",
    "logistic",
    "lognormal",
    "multinomial",
    "multivariate_normal",
    "nbinom",
    "negative_binomial",
    "normal",
    "pareto",
    "permutation",
    "poisson",
    "standard_normal",
    "t",
    "triangular",
    "truncexpon",
    "uniform",
    "vonmises",
    "wald",
    "weibull",
]

_DISCRETE = {
    "integers",
    "bernoulli",
    "binomial",
    "poisson",
    "geometric",
    "nbinom",
    "hypergeometric",
    "multinomial",
    "categorical",
    "betabinom",
}


def _params(params):
    from oxtensor.tensor.basic import as_tensor_variable

    return [p if isinstance(p, _core.TensorVariable) else as_tensor_variable(p) for p in params]


def _draw(dist, params, size, rng, dtype, name, return_next_rng):
    """``(next_rng, draw)`` or ``draw`` of distribution ``dist`` (its PyTensor name)."""
    from oxtensor.tensor.random.variable import shared_rng

    if rng is None:
        warnings.warn(
            "Calling a RandomVariable without an explicit rng draws from a new unseeded "
            "generator; use pt.random.shared_rng.",
            DeprecationWarning,
            stacklevel=3,
        )
        rng = shared_rng()
    if dtype is None:
        dtype = "int64" if dist in _DISCRETE else config.floatX
    elif dtype == "floatX":
        dtype = config.floatX
    if str(np.dtype(dtype)).startswith("float") == (dist in _DISCRETE):
        kind = "integer" if dist in _DISCRETE else "float"
        raise ValueError(f"Cannot draw {dist} values of dtype {dtype}: it needs a {kind} dtype")
    next_rng, out = _core.random_variable(dist, rng, size, _params(params), dtype)
    if name is not None:
        out.name = name
    return (next_rng, out) if return_next_rng else out


def _rv(dist):
    def call(*params, size=None, rng=None, dtype=None, name=None, return_next_rng=False):
        return _draw(dist, params, size, rng, dtype, name, return_next_rng)

    return call


def normal(loc=0.0, scale=1.0, size=None, **kwargs):
    """``loc + scale * z``, z standard normal (``np.random.Generator.normal``)."""
    return _rv("normal")(loc, scale, size=size, **kwargs)


def standard_normal(*, size=None, rng=None, dtype=None, return_next_rng=False):
    """``normal(0, 1)``."""
    return normal(0.0, 1.0, size=size, rng=rng, dtype=dtype, return_next_rng=return_next_rng)


def uniform(low=0.0, high=1.0, size=None, **kwargs):
    """Uniform on ``[low, high)``."""
    return _rv("uniform")(low, high, size=size, **kwargs)


def integers(low, high=None, size=None, **kwargs):
    """Integers on ``[low, high)`` (``[0, low)`` when ``high`` is ``None``), ``int64``."""
    if high is None:
        low, high = 0, low
    return _rv("integers")(low, high, size=size, **kwargs)


def exponential(scale=1.0, size=None, **kwargs):
    """Exponential of mean ``scale``."""
    return _rv("exponential")(scale, size=size, **kwargs)


def gamma(shape, rate=None, scale=None, **kwargs):
    """Gamma of ``shape`` and ``scale`` (or ``rate = 1 / scale``, deprecated in PyTensor)."""
    if rate is not None and scale is not None:
        raise ValueError("Cannot specify both rate and scale")
    if rate is None and scale is None:
        raise ValueError("Must specify scale")
    if rate is not None:
        warnings.warn(
            "Gamma rate argument is deprecated and will stop working, use scale instead",
            FutureWarning,
            stacklevel=2,
        )
        scale = 1.0 / _params([rate])[0]
    size = kwargs.pop("size", None)
    return _rv("gamma")(shape, scale, size=size, **kwargs)


def chisquare(df, size=None, rng=None, return_next_rng=False):
    """Chi-squared with ``df`` degrees of freedom: ``gamma(df / 2, scale=2)`` as PyTensor."""
    return gamma(
        shape=_params([df])[0] / 2.0, scale=2.0, size=size, rng=rng, return_next_rng=return_next_rng
    )


def beta(alpha, beta, size=None, **kwargs):
    """Beta of ``alpha`` and ``beta``."""
    return _rv("beta")(alpha, beta, size=size, **kwargs)


def lognormal(mean=0.0, sigma=1.0, size=None, **kwargs):
    """``exp(normal(mean, sigma))``."""
    return _rv("lognormal")(mean, sigma, size=size, **kwargs)


def halfnormal(loc=0.0, scale=1.0, size=None, **kwargs):
    """``loc + scale * |z|`` (SciPy's ``halfnorm.rvs``, as PyTensor)."""
    return _rv("halfnormal")(loc, scale, size=size, **kwargs)


def bernoulli(p, size=None, **kwargs):
    """``binomial(1, p)`` (SciPy's ``bernoulli.rvs``, as PyTensor)."""
    return _rv("bernoulli")(p, size=size, **kwargs)


def binomial(n, p, size=None, **kwargs):
    """Successes in ``n`` trials of probability ``p``."""
    return _rv("binomial")(n, p, size=size, **kwargs)


def poisson(lam=1.0, size=None, **kwargs):
    """Poisson of rate ``lam``."""
    return _rv("poisson")(lam, size=size, **kwargs)


def geometric(p, size=None, **kwargs):
    """Trials until the first success (support 1, 2, ...)."""
    return _rv("geometric")(p, size=size, **kwargs)


def negative_binomial(n, p, size=None, **kwargs):
    """Failures before the ``n``-th success."""
    return _rv("nbinom")(n, p, size=size, **kwargs)


nbinom = negative_binomial


def hypergeometric(ngood, nbad, nsample, size=None, **kwargs):
    """Good items among ``nsample`` drawn without replacement."""
    return _rv("hypergeometric")(ngood, nbad, nsample, size=size, **kwargs)


def t(df, loc=0.0, scale=1.0, size=None, **kwargs):
    """Student's t: ``loc + scale * standard_t(df)``."""
    return _rv("t")(df, loc, scale, size=size, **kwargs)


def cauchy(loc=0.0, scale=1.0, size=None, **kwargs):
    """Cauchy, by SciPy's inverse-CDF sampling of one uniform, as PyTensor."""
    return _rv("cauchy")(loc, scale, size=size, **kwargs)


def halfcauchy(loc=0.0, scale=1.0, size=None, **kwargs):
    """Half-Cauchy, by SciPy's inverse-CDF sampling of one uniform, as PyTensor."""
    return _rv("halfcauchy")(loc, scale, size=size, **kwargs)


def laplace(loc=0.0, scale=1.0, size=None, **kwargs):
    """Laplace (double exponential)."""
    return _rv("laplace")(loc, scale, size=size, **kwargs)


def logistic(loc=0, scale=1, size=None, **kwargs):
    """Logistic."""
    return _rv("logistic")(loc, scale, size=size, **kwargs)


def gumbel(loc, scale=1.0, size=None, **kwargs):
    """Gumbel (maximum)."""
    return _rv("gumbel")(loc, scale, size=size, **kwargs)


def weibull(shape, size=None, **kwargs):
    """Weibull of ``shape`` (NumPy's ``weibull(a)``)."""
    return _rv("weibull")(shape, size=size, **kwargs)


def wald(mean=1.0, scale=1.0, size=None, **kwargs):
    """Wald (inverse Gaussian)."""
    return _rv("wald")(mean, scale, size=size, **kwargs)


def triangular(left, mode, right, size=None, **kwargs):
    """Triangular on ``[left, right]`` with peak ``mode``."""
    return _rv("triangular")(left, mode, right, size=size, **kwargs)


def vonmises(mu, kappa, size=None, **kwargs):
    """Von Mises on the circle."""
    return _rv("vonmises")(mu, kappa, size=size, **kwargs)


def invgamma(shape, scale, size=None, **kwargs):
    """Inverse gamma: ``1 / gamma(shape, 1 / scale)`` as PyTensor."""
    return _rv("invgamma")(shape, scale, size=size, **kwargs)


def pareto(b, scale=1.0, size=None, **kwargs):
    """Pareto of shape ``b`` and ``scale``: SciPy's inverse-CDF sampling,
    ``scale * (1 - u) ** (-1 / b)`` of one uniform, as PyTensor."""
    return _rv("pareto")(b, scale, size=size, **kwargs)


def permutation(x, size=None, rng=None, return_next_rng=False):
    """A shuffled ``arange(x)`` for an integer ``x``, or the rows of array ``x`` shuffled, of
    ``x``'s dtype (so ``permutation(10)`` is ``int8``, as in PyTensor). With ``size``, ``x`` is
    broadcast to ``(*size, *x.shape)`` and each batch element shuffled."""
    from oxtensor.tensor.random.variable import shared_rng

    if rng is None:
        rng = shared_rng()
    (x,) = _params([x])
    next_rng, out = _core.random_variable("permutation", rng, size, [x], x.dtype)
    return (next_rng, out) if return_next_rng else out


def dirichlet(alphas, size=None, **kwargs):
    """Dirichlet: one probability vector per batch element."""
    return _rv("dirichlet")(alphas, size=size, **kwargs)


def multinomial(n, p, size=None, **kwargs):
    """Counts of ``n`` draws over the categories of ``p`` (last axis)."""
    return _rv("multinomial")(n, p, size=size, **kwargs)


def multivariate_normal(mean, cov, size=None, method="cholesky", **kwargs):
    """``A @ z + mean`` with ``z`` standard normal, all normals drawn first, as PyTensor:
    ``A = cholesky(cov)`` (``method="cholesky"``, the default), ``u * sqrt(s)`` of
    ``svd(cov)`` (``"svd"``) or ``v * sqrt(w)`` of ``eigh(cov)`` (``"eigh"``)."""
    if method not in ("cholesky", "svd", "eigh"):
        raise ValueError(
            f"Unknown method {method}. The method must be one of 'cholesky', 'svd', or 'eigh'."
        )
    dist = "multivariate_normal" if method == "cholesky" else f"multivariate_normal_{method}"
    return _rv(dist)(mean, cov, size=size, **kwargs)


def betabinom(n, a, b, size=None, **kwargs):
    """Beta-binomial: ``binomial(n, beta(a, b))``, SciPy's ``betabinom.rvs`` as PyTensor draws it
    (every beta first, then every binomial)."""
    return _rv("betabinom")(n, a, b, size=size, **kwargs)


def gengamma(alpha=1.0, p=1.0, lambd=1.0, size=None, **kwargs):
    """Generalized gamma: ``lambd * standard_gamma(alpha / p) ** (1 / p)``, SciPy's
    ``gengamma.rvs(alpha / p, p, scale=lambd)`` as PyTensor draws it."""
    return _rv("gengamma")(alpha, p, lambd, size=size, **kwargs)


def truncexpon(b, loc=0.0, scale=1.0, size=None, **kwargs):
    """Exponential truncated to ``[loc, loc + b * scale]``: SciPy's inverse-CDF sampling
    ``loc + scale * -log1p(u * expm1(-b))`` of one uniform, as PyTensor."""
    return _rv("truncexpon")(b, loc, scale, size=size, **kwargs)


def choice(a, size=None, replace=True, p=None, rng=None, return_next_rng=False):
    """Entries of ``a`` (or of ``arange(a)`` for an integer ``a``) drawn along its first axis:
    ``integers(0, len(a))`` or, with probabilities ``p``, ``categorical(p)`` indices, as PyTensor
    draws ``choice`` with replacement (or of a single value); without replacement, NumPy's
    ``Generator.choice(a, size, replace=False, p=p)``."""
    (a,) = _params([a])
    if not replace and size is not None:
        return _choice_without_replacement(a, size, p, rng, return_next_rng)
    count = a if a.ndim == 0 else a.shape[0]
    if p is None:
        next_rng, idx = integers(0, count, size=size, rng=rng, return_next_rng=True)
    else:
        (p,) = _params([p])
        next_rng, idx = categorical(p, size=size, rng=rng, return_next_rng=True)
    out = idx if a.ndim == 0 else a[idx]
    return (next_rng, out) if return_next_rng else out


def _choice_without_replacement(a, size, p, rng, return_next_rng):
    """``choice(a, size, replace=False, p=p)``: one op drawing the whole sample, whose shape
    ``size`` is its core shape (the draws are not independent), as PyTensor."""
    from oxtensor.tensor.basic import as_tensor_variable
    from oxtensor.tensor.random.variable import shared_rng

    if rng is None:
        rng = shared_rng()
    if isinstance(size, int | np.integer):
        size = (size,)
    core_shape = size if isinstance(size, _core.TensorVariable) else as_tensor_variable(
        np.asarray(size, dtype="int64") if all(isinstance(s, int | np.integer) for s in size)
        else size
    )
    core_shape = core_shape.astype("int64")
    if p is None:
        name, params = "choice_without_replacement", [a, core_shape]
    else:
        (p,) = _params([p])
        name, params = "choice_without_replacement_p", [a, p, core_shape]
    next_rng, out = _core.random_variable(name, rng, None, params, a.dtype)
    return (next_rng, out) if return_next_rng else out


def categorical(p, size=None, **kwargs):
    """An index drawn with the probabilities ``p`` (last axis): one uniform searched in
    ``cumsum(p)``, as PyTensor."""
    return _rv("categorical")(p, size=size, **kwargs)
