"""NaN parameters and non-positive-semidefinite covariances draw, warn and raise exactly as
PyTensor 3 (NumPy's ``Generator`` and SciPy underneath): where the reference lets a NaN
through, the draws (usually NaN) are the same and the generator ends in the same state, so
later calls agree too; where it raises, so do we, with the same exception type (and NumPy's
text where NumPy raises)."""

import itertools
import warnings

import numpy as np
import pytensor
import pytensor.tensor as ptt
import pytest

import oxtensor
import oxtensor.tensor as pt

MODES = [None, "FAST_COMPILE", oxtensor.Mode(linker="py", optimizer="fast_run")]
PT_MODE = pytensor.compile.mode.Mode(linker="py", optimizer="fast_run")
NAN = np.nan

# (name, parameters, positions that may hold NaN); every one is PyTensor 3's signature.
DISTRIBUTIONS = [
    ("normal", (0.0, 1.0), (0, 1)),
    ("uniform", (0.0, 1.0), (0, 1)),
    ("exponential", (1.0,), (0,)),
    ("gamma", (2.0, 1.0), (0, 1)),
    ("gamma", (0.5, 1.0), (1,)),
    ("chisquare", (3.0,), (0,)),
    ("beta", (2.0, 3.0), (0, 1)),
    ("beta", (0.5, 0.5), (0, 1)),
    ("lognormal", (0.0, 1.0), (0, 1)),
    ("halfnormal", (0.0, 1.0), (0, 1)),
    ("t", (3.0, 0.0, 1.0), (0, 1, 2)),
    ("cauchy", (0.0, 1.0), (0, 1)),
    ("halfcauchy", (0.0, 1.0), (0, 1)),
    ("laplace", (0.0, 1.0), (0, 1)),
    ("logistic", (0.0, 1.0), (0, 1)),
    ("gumbel", (0.0, 1.0), (0, 1)),
    ("weibull", (2.0,), (0,)),
    ("wald", (1.0, 2.0), (0, 1)),
    ("triangular", (0.0, 0.5, 1.0), (0, 1, 2)),
    ("vonmises", (0.0, 2.0), (0, 1)),
    ("vonmises", (0.0, 1e-9), (0,)),
    ("invgamma", (2.0, 1.0), (0, 1)),
    ("pareto", (2.0, 1.0), (0, 1)),
    ("truncexpon", (2.0, 0.0, 1.0), (0, 1, 2)),
    ("gengamma", (2.0, 1.5, 1.0), (0, 1, 2)),
    ("bernoulli", (0.3,), (0,)),
    ("binomial", (10, 0.3), (1,)),
    ("poisson", (3.0,), (0,)),
    ("geometric", (0.5,), (0,)),
    ("negative_binomial", (3.0, 0.4), (0, 1)),
    ("betabinom", (10, 2.0, 3.0), (1, 2)),
]
CASES = [(name, params, k) for name, params, ks in DISTRIBUTIONS for k in ks]


def with_nan(params, k):
    return tuple(NAN if i == k else p for i, p in enumerate(params))


def draw(module, name, params, **kwargs):
    """``module.random.<name>(*params, **kwargs)``; gamma's second parameter is its scale."""
    if name == "gamma":
        return module.random.gamma(params[0], scale=params[1], **kwargs)
    return getattr(module.random, name)(*params, **kwargs)


def reference(name, params, seed, size, calls):
    """PyTensor's draws (a compiled function with the generator update, Python linker), or
    the exception it raises."""
    rng = pytensor.shared(np.random.default_rng(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nr, x = draw(ptt, name, params, size=size, rng=rng, return_next_rng=True)
        f = pytensor.function([], x, updates={rng: nr}, mode=PT_MODE)
        try:
            out = [f() for _ in range(calls)]
        except (ValueError, OverflowError) as e:
            return e, None
    return out, rng.get_value().bit_generator.state


def ours(name, params, seed, size, calls, mode):
    rng = oxtensor.shared(np.random.default_rng(seed))
    nr, x = draw(pt, name, params, size=size, rng=rng, return_next_rng=True)
    f = oxtensor.function([], x, updates={rng: nr}, mode=mode)
    return [f() for _ in range(calls)], rng


def assert_same_draws(got, want, what):
    for a, b in zip(got, want, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype, (what, a, b)
        assert np.array_equal(np.isnan(a), np.isnan(b)), (what, a, b)
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=0, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=[f"{n}-{p}-nan{k}" for n, p, k in CASES])
def test_nan_parameter_draws_or_raises_as_pytensor(case, mode):
    name, params, k = case
    params = with_nan(params, k)
    want, state = reference(name, params, 17, (5,), 2)
    if isinstance(want, Exception):
        rng = oxtensor.shared(np.random.default_rng(17))
        before = rng.get_value().bit_generator.state
        f = oxtensor.function([], draw(pt, name, params, size=(5,), rng=rng), mode=mode)
        with pytest.raises(type(want)) as got:
            f()
        if not str(want).startswith("Domain error"):  # NumPy's text (SciPy's is generic)
            assert str(want).lower() in str(got.value).lower(), (str(got.value), str(want))
        assert rng.get_value().bit_generator.state == before
        return
    got, rng = ours(name, params, 17, (5,), 2, mode)
    # Two calls: the second starts where the NaN draws left the generator.
    assert_same_draws(got, want, f"{name}{params}")
    assert rng.get_value().bit_generator.state == state


@pytest.mark.parametrize("mode", MODES)
def test_nan_entries_of_array_parameters(mode):
    """A NaN in one entry: that entry's draws are NaN, the others are PyTensor's, the
    generator moves as PyTensor's."""
    cases = [
        ("normal", (np.array([0.0, NAN, 1.0]), np.array([[1.0], [NAN]]))),
        ("gamma", (np.array([2.0, NAN, 0.5]), np.array([1.0, 2.0, NAN]))),
        ("beta", (np.array([0.5, NAN, 2.0]), 0.5)),
        ("vonmises", (np.array([0.0, NAN, 1.0]), np.array([2.0, 3.0, NAN]))),
        ("wald", (np.array([1.0, NAN]), 2.0)),
        ("t", (np.array([3.0, 4.0]), np.array([NAN, 0.0]), 1.0)),
        ("dirichlet", (np.array([[NAN, 1.0], [0.05, 0.02], [0.05, NAN]]),)),
    ]
    for name, params in cases:
        want, state = reference(name, params, 3, None, 2)
        assert not isinstance(want, Exception), (name, want)
        got, rng = ours(name, params, 3, None, 2, mode)
        assert_same_draws(got, want, name)
        assert rng.get_value().bit_generator.state == state, name


def test_nan_draws_then_numpy_stream():
    """After NaN draws the shared generator continues NumPy's stream: a later normal draw from
    it equals NumPy's after the same calls."""
    rng = oxtensor.shared(np.random.default_rng(8))
    nr, x = pt.random.gamma(NAN, scale=1.0, size=100, rng=rng, return_next_rng=True)
    f = oxtensor.function([], x, updates={rng: nr})
    assert np.isnan(f()).all()
    g = np.random.default_rng(8)
    assert np.isnan(g.gamma(NAN, 1.0, size=100)).all()
    np.testing.assert_array_equal(rng.get_value().normal(size=50), g.normal(size=50))


@pytest.mark.parametrize("mode", MODES)
def test_negative_zero_is_rejected_where_numpy_checks_the_sign_bit(mode):
    rng = oxtensor.shared(np.random.default_rng(0))
    f = oxtensor.function([], pt.random.normal(0.0, -0.0, rng=rng), mode=mode)
    with pytest.raises(ValueError, match="scale < 0"):
        f()
    with pytest.raises(ValueError, match="scale < 0"):
        np.random.default_rng(0).normal(0.0, -0.0)
    # SciPy's check (scale >= 0) accepts -0.0, as PyTensor's halfnormal does.
    g = oxtensor.function([], pt.random.halfnormal(1.0, -0.0, size=3, rng=rng), mode=mode)
    np.testing.assert_array_equal(g(), [1.0, 1.0, 1.0])


INDEFINITE = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 3.0]])
COVS = {
    "indefinite": INDEFINITE,
    "negative": -np.eye(2),
    "singular": np.ones((2, 2)),
    "nonsymmetric": np.array([[2.0, 1.0], [0.0, 2.0]]),
    "nan_lower": np.array([[1.0, 0.0], [NAN, 1.0]]),
    "nan_upper": np.array([[1.0, NAN], [0.0, 1.0]]),
    "nan_diagonal": np.array([[NAN, 0.0], [0.0, 1.0]]),
    "inf": np.array([[1.0, np.inf], [np.inf, 1.0]]),
    "inf_diagonal": np.array([[np.inf, 0.0], [0.0, 1.0]]),
}


def mv_reference(method, cov, seed):
    rng = pytensor.shared(np.random.default_rng(seed))
    nr, x = ptt.random.multivariate_normal(
        np.zeros(len(cov)), cov, size=(4,), method=method, rng=rng, return_next_rng=True
    )
    f = pytensor.function([], x, updates={rng: nr}, mode=PT_MODE)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            out = f()
        except np.linalg.LinAlgError as e:
            return e, None, []
    return out, rng.get_value().bit_generator.state, [(x.category, str(x.message)) for x in w]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["cholesky", "svd", "eigh"])
@pytest.mark.parametrize("cov", list(COVS), ids=list(COVS))
def test_mvnormal_bad_covariance_as_pytensor(cov, method, mode):
    c = COVS[cov]
    want, state, warned = mv_reference(method, c, 5)
    rng = oxtensor.shared(np.random.default_rng(5))
    nr, x = pt.random.multivariate_normal(
        np.zeros(len(c)), c, size=(4,), method=method, rng=rng, return_next_rng=True
    )
    f = oxtensor.function([], x, updates={rng: nr}, mode=mode)
    if isinstance(want, Exception):
        with pytest.raises(np.linalg.LinAlgError, match=str(want)):
            f()
        return
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = f()
    assert [(x.category, str(x.message)) for x in w] == warned
    assert rng.get_value().bit_generator.state == state
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    if method == "cholesky":
        np.testing.assert_allclose(got, want, rtol=1e-13, equal_nan=True)
        return
    # svd/eigh: PyTensor's factor up to the column signs of the decomposition.
    z = np.random.default_rng(5).normal(size=(4, len(c)))
    if method == "svd":
        u, s, _ = np.linalg.svd(c)
        a = u * np.sqrt(s)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w_, v = np.linalg.eigh(c)
            a = v * np.sqrt(w_)
    signs = [np.array(d) for d in itertools.product([1.0, -1.0], repeat=len(c))]
    # (a zero singular value or eigenvalue is ~1e-16 in either decomposition: its column,
    # scaled by its square root, is noise of ~1e-8)
    atol = 1e-7 if cov == "singular" else 1e-12
    assert any(
        np.allclose(got, z @ (a * d).T, rtol=1e-12, atol=atol, equal_nan=True) for d in signs
    ), (got, want)


def test_mvnormal_eigh_warning_is_pytensors():
    rng = oxtensor.shared(np.random.default_rng(1))
    f = oxtensor.function([], pt.random.multivariate_normal(np.zeros(3), INDEFINITE, method="eigh", rng=rng))
    with pytest.warns(RuntimeWarning, match="invalid value encountered in sqrt"):
        assert np.isnan(f()).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            f()
    # A positive-definite covariance warns nothing.
    g = oxtensor.function([], pt.random.multivariate_normal(np.zeros(2), np.eye(2), method="eigh", rng=rng))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isfinite(g()).all()


ZERO_SCALE = [
    ("halfnormal", (1.0, 0.0)),
    ("cauchy", (1.0, 0.0)),
    ("halfcauchy", (1.0, 0.0)),
    ("gumbel", (1.0, 0.0)),
    ("t", (3.0, 1.0, 0.0)),
    ("pareto", (2.0, 0.0)),
    ("truncexpon", (2.0, 1.0, 0.0)),
    ("gengamma", (2.0, 1.5, 0.0)),
    ("halfnormal", (np.array([1.0, 2.0]), np.array([0.0, 1.0]))),
    ("pareto", (np.array([1.0, 2.0]), np.array([0.0, 1.0]))),
    ("halfnormal", (1.0, -0.0)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", ZERO_SCALE, ids=[f"{n}-{p}" for n, p in ZERO_SCALE])
def test_zero_scale_of_scipy_distributions_as_pytensor(case, mode):
    """SciPy's ``rvs`` returns ``loc`` without drawing when every scale is 0 (the generator
    does not move); with some scales 0 it draws as usual."""
    name, params = case
    size = None if isinstance(params[0], np.ndarray) else (3,)
    want, state = reference(name, params, 11, size, 2)
    assert not isinstance(want, Exception), want
    got, rng = ours(name, params, 11, size, 2, mode)
    assert_same_draws(got, want, name)
    assert rng.get_value().bit_generator.state == state


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["cholesky", "svd", "eigh"])
def test_mvnormal_nan_mean_as_pytensor(method, mode):
    """A NaN in the mean gives NaN in that component only; the normals are drawn as usual."""
    mean = np.array([NAN, 1.0])
    cov = np.array([[2.0, 0.0], [0.0, 1.0]])
    prng = pytensor.shared(np.random.default_rng(6))
    pn, px = ptt.random.multivariate_normal(mean, cov, size=(3,), method=method, rng=prng, return_next_rng=True)
    want = pytensor.function([], px, updates={prng: pn}, mode=PT_MODE)()
    rng = oxtensor.shared(np.random.default_rng(6))
    nr, x = pt.random.multivariate_normal(mean, cov, size=(3,), method=method, rng=rng, return_next_rng=True)
    got = oxtensor.function([], x, updates={rng: nr}, mode=mode)()
    assert np.isnan(got[:, 0]).all() and np.isnan(want[:, 0]).all()
    np.testing.assert_allclose(np.abs(got[:, 1]), np.abs(want[:, 1]), rtol=1e-13)
    assert rng.get_value().bit_generator.state == prng.get_value().bit_generator.state


@pytest.mark.parametrize("mode", MODES)
def test_multinomial_nan_probability_raises_as_numpy(mode):
    rng = oxtensor.shared(np.random.default_rng(0))
    f = oxtensor.function([], pt.random.multinomial(5, np.array([NAN, 0.5]), rng=rng), mode=mode)
    with pytest.raises(ValueError, match="pvals < 0, pvals > 1 or pvals contains NaNs"):
        f()
    with pytest.raises(ValueError, match="pvals < 0, pvals > 1 or pvals contains NaNs"):
        np.random.default_rng(0).multinomial(5, [NAN, 0.5])
