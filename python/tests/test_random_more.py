"""The rest of ``pt.random``: betabinom, gengamma, truncexpon, choice and the svd/eigh methods of
multivariate_normal drawn as PyTensor draws them (through NumPy/SciPy) for the same seed, and
goodness-of-fit and moment checks of the discrete distributions against SciPy."""

import warnings

import numpy as np
import pytest
import pytensor
import pytensor.tensor as ptt
import scipy.stats as st

import oxtensor
import oxtensor.tensor as pt

# PyTensor drawing through NumPy/SciPy (its Python linker).
PT_NUMPY = pytensor.compile.mode.Mode(linker="py", optimizer="fast_run")

MODES = [None, "FAST_COMPILE"]

# Programs written once for both libraries: ``(module, rng) -> (next_rng, draw)``.
PROGRAMS = [
    lambda m, r: m.random.betabinom(10, 2.0, 3.0, size=(4, 5), rng=r, return_next_rng=True),
    lambda m, r: m.random.betabinom(
        np.array([5, 50]), np.array([[0.5], [4.0]]), 1.5, rng=r, return_next_rng=True
    ),
    lambda m, r: m.random.gengamma(2.0, 1.5, 3.0, size=20, rng=r, return_next_rng=True),
    lambda m, r: m.random.gengamma(
        np.array([0.5, 2.0, 7.0]), np.array([[1.0], [2.5]]), 0.5, rng=r, return_next_rng=True
    ),
    lambda m, r: m.random.truncexpon(2.0, 1.0, 3.0, size=(3, 7), rng=r, return_next_rng=True),
    lambda m, r: m.random.truncexpon(
        np.array([0.5, 5.0]), np.array([[0.0], [10.0]]), rng=r, return_next_rng=True
    ),
    lambda m, r: m.random.choice(10, rng=r, return_next_rng=True),
    lambda m, r: m.random.choice(10, size=(3, 4), rng=r, return_next_rng=True),
    lambda m, r: m.random.choice(
        np.array([1.5, -2.0, 3.25, 7.0]), size=9, rng=r, return_next_rng=True
    ),
    lambda m, r: m.random.choice(
        np.arange(12.0).reshape(4, 3), size=5, rng=r, return_next_rng=True
    ),
    lambda m, r: m.random.choice(
        5, size=(2, 6), p=np.array([0.1, 0.2, 0.3, 0.25, 0.15]), rng=r, return_next_rng=True
    ),
    lambda m, r: m.random.choice(
        np.array([4, 8, 15]), replace=False, p=np.array([0.2, 0.5, 0.3]), rng=r,
        return_next_rng=True,
    ),
    # Without replacement: NumPy's Generator.choice(replace=False) in one op.
    lambda m, r: m.random.choice(10, size=(2, 3), replace=False, rng=r, return_next_rng=True),
    lambda m, r: m.random.choice(20000, size=500, replace=False, rng=r, return_next_rng=True),
    lambda m, r: m.random.choice(
        np.array([1.5, 2.5, 3.5, 4.5, 5.5]), size=3, replace=False,
        p=np.array([0.1, 0.2, 0.3, 0.25, 0.15]), rng=r, return_next_rng=True,
    ),
    lambda m, r: m.random.choice(
        np.arange(12.0).reshape(4, 3), size=2, replace=False, rng=r, return_next_rng=True
    ),
    # permutation batched by size, and of a matrix's rows.
    lambda m, r: m.random.permutation(np.arange(5.0), size=(2, 3), rng=r, return_next_rng=True),
    lambda m, r: m.random.permutation(
        np.arange(12).reshape(4, 3), rng=r, return_next_rng=True
    ),
]


def _run(lib, mod, program, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rng = lib.shared(np.random.default_rng(seed))
        next_rng, x = program(mod, rng)
        mode = None if lib is oxtensor else PT_NUMPY
        f = lib.function([], x, updates={rng: next_rng}, mode=mode)
        return f(), f(), rng.get_value().bit_generator.state


@pytest.mark.parametrize("k", range(len(PROGRAMS)))
def test_same_draws_as_pytensor(k):
    a1, a2, ga = _run(oxtensor, pt, PROGRAMS[k], 500 + k)
    b1, b2, gb = _run(pytensor, ptt, PROGRAMS[k], 500 + k)
    assert a1.dtype == b1.dtype and a1.shape == b1.shape
    if a1.dtype.kind == "f":
        # pow/log1p/expm1 of NumPy's SIMD loops and of the C library differ by an ulp.
        np.testing.assert_allclose(a1, b1, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(a2, b2, rtol=1e-13, atol=1e-14)
    else:
        np.testing.assert_array_equal(a1, b1)
        np.testing.assert_array_equal(a2, b2)
    assert ga == gb


@pytest.mark.parametrize("mode", MODES)
def test_betabinom_same_numbers_as_numpy(mode):
    rng = oxtensor.shared(np.random.default_rng(3))
    x = oxtensor.function([], pt.random.betabinom(7, 0.8, 1.9, size=50, rng=rng), mode=mode)()
    g = np.random.default_rng(3)
    np.testing.assert_array_equal(x, g.binomial(7, g.beta(0.8, 1.9, 50), 50))


@pytest.mark.parametrize("method", ["svd", "eigh"])
def test_multivariate_normal_factored_methods(method):
    mean = np.array([1.0, -2.0, 0.5])
    cov = np.array([[2.0, 0.6, 0.2], [0.6, 1.0, -0.3], [0.2, -0.3, 0.5]])
    rng = oxtensor.shared(np.random.default_rng(11))
    next_rng, x = pt.random.multivariate_normal(
        mean, cov, size=(20000,), method=method, rng=rng, return_next_rng=True
    )
    f = oxtensor.function([], x, updates={rng: next_rng})
    draws = f()
    assert draws.shape == (20000, 3) and draws.dtype == np.float64
    # The factor is unique only up to the signs of its columns, so the draws match NumPy's in
    # distribution: the same count of normals consumed, then the mean and covariance.
    g = np.random.default_rng(11)
    g.normal(size=(20000, 3))
    assert rng.get_value().bit_generator.state == g.bit_generator.state
    np.testing.assert_allclose(draws.mean(axis=0), mean, atol=0.04)
    np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.06)
    # Batched parameters without size: one factor per batch element.
    covs = np.stack([np.eye(2), [[1.0, 0.9], [0.9, 1.0]]])
    y = oxtensor.function(
        [], pt.random.multivariate_normal(np.zeros(2), covs, method=method, rng=rng)
    )()
    assert y.shape == (2, 2)


def test_multivariate_normal_factored_matches_pytensor_up_to_signs():
    """With a diagonal covariance the factor's columns are the scaled unit vectors, so the
    draws agree with PyTensor's up to the sign of each coordinate."""
    mean, cov = np.array([0.5, -1.0]), np.diag([4.0, 0.25])
    for method in ["svd", "eigh"]:
        out = []
        for lib, mod in [(oxtensor, pt), (pytensor, ptt)]:
            rng = lib.shared(np.random.default_rng(9))
            x = mod.random.multivariate_normal(mean, cov, size=6, method=method, rng=rng)
            m = None if lib is oxtensor else PT_NUMPY
            out.append(lib.function([], x, mode=m)())
        np.testing.assert_allclose(np.abs(out[0] - mean), np.abs(out[1] - mean), rtol=1e-12)


def test_unknown_mvnormal_method():
    rng = oxtensor.shared(np.random.default_rng(0))
    with pytest.raises(ValueError, match="Unknown method"):
        pt.random.multivariate_normal(np.zeros(2), np.eye(2), method="qr", rng=rng)


def test_choice_without_replacement_errors_as_numpy():
    rng = oxtensor.shared(np.random.default_rng(0))
    f = oxtensor.function([], pt.random.choice(3, size=4, replace=False, rng=rng))
    with pytest.raises(Exception, match="larger sample"):
        f()
    g = oxtensor.function(
        [], pt.random.choice(2, size=1, replace=False, p=np.array([0.5, 0.7]), rng=rng)
    )
    with pytest.raises(Exception, match="sum to 1"):
        g()


def test_owner_outputs_are_next_rng_and_draw():
    rng = oxtensor.shared(np.random.default_rng(4))
    x = pt.random.normal(size=3, rng=rng)
    next_rng, draw_ = x.owner.outputs
    assert draw_ is x or draw_.type == x.type
    assert next_rng.dtype == "uint64"
    assert x.owner.inputs[0] is rng or x.owner.inputs[0].name == rng.name
    f = oxtensor.function([], x, updates={rng: x.owner.outputs[0]})
    first, second = f(), f()
    g = np.random.default_rng(4)
    np.testing.assert_array_equal(first, g.normal(size=3))
    np.testing.assert_array_equal(second, g.normal(size=3))
    assert rng.owner is None


def draw(seed, build):
    rng = oxtensor.shared(np.random.default_rng(seed))
    return oxtensor.function([], build(rng))()


def chi2_pvalue(x, pmf, support):
    """Chi-squared p-value of integer draws ``x`` against ``pmf`` on ``support``, pooling the
    cells whose expected count is below 5 into their neighbours' tail."""
    expected = pmf(support) * x.size
    observed = np.array([(x == k).sum() for k in support], dtype=float)
    keep = expected >= 5
    tail_obs = x.size - observed[keep].sum()
    tail_exp = x.size - expected[keep].sum()
    obs, exp = observed[keep], expected[keep]
    if tail_exp >= 5:
        obs, exp = np.append(obs, tail_obs), np.append(exp, tail_exp)
    else:
        obs[-1] += tail_obs
        exp[-1] += tail_exp
    return st.chisquare(obs, exp).pvalue


N = 20000

DISCRETE = [
    # (oxtensor draw, SciPy distribution, support checked cell by cell)
    (lambda r: pt.random.geometric(0.3, size=N, rng=r), st.geom(0.3), np.arange(1, 30)),
    (
        lambda r: pt.random.negative_binomial(3.0, 0.4, size=N, rng=r),
        st.nbinom(3.0, 0.4),
        np.arange(0, 40),
    ),
    (
        lambda r: pt.random.negative_binomial(0.7, 0.05, size=N, rng=r),
        st.nbinom(0.7, 0.05),
        np.arange(0, 120),
    ),
    (
        lambda r: pt.random.hypergeometric(10, 7, 5, size=N, rng=r),
        st.hypergeom(17, 10, 5),
        np.arange(0, 6),
    ),
    (
        lambda r: pt.random.hypergeometric(600, 700, 500, size=N, rng=r),
        st.hypergeom(1300, 600, 500),
        np.arange(180, 290),
    ),
    (
        lambda r: pt.random.betabinom(12, 0.7, 2.5, size=N, rng=r),
        st.betabinom(12, 0.7, 2.5),
        np.arange(0, 13),
    ),
    (
        lambda r: pt.random.categorical(np.array([0.1, 0.05, 0.45, 0.4]), size=N, rng=r),
        st.rv_discrete(values=(np.arange(4), [0.1, 0.05, 0.45, 0.4])),
        np.arange(0, 4),
    ),
]


@pytest.mark.parametrize("k", range(len(DISCRETE)))
def test_discrete_goodness_of_fit_and_moments(k):
    build, dist, support = DISCRETE[k]
    x = draw(700 + k, build)
    assert x.shape == (N,) and x.dtype == np.int64
    assert chi2_pvalue(x, dist.pmf, support) > 1e-3
    # Moments within five standard errors (of the mean and of the variance).
    mean, var = dist.mean(), dist.var()
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / N)
    kurt = dist.stats(moments="k") + 3.0
    assert abs(x.var() - var) < 5 * var * np.sqrt((kurt - 1.0) / N)


def test_multinomial_goodness_of_fit_and_moments():
    p = np.array([0.2, 0.5, 0.25, 0.05])
    x = draw(801, lambda r: pt.random.multinomial(15, p, size=N, rng=r))
    assert x.shape == (N, 4) and (x.sum(axis=1) == 15).all()
    # Each count is binomial(15, p_i); their covariance is -15 p_i p_j.
    for i, pi in enumerate(p):
        assert chi2_pvalue(x[:, i], st.binom(15, pi).pmf, np.arange(16)) > 1e-3
    np.testing.assert_allclose(x.mean(axis=0), 15 * p, atol=5 * np.sqrt(15 * 0.25 / N))
    expected_cov = 15 * (np.diag(p) - np.outer(p, p))
    np.testing.assert_allclose(np.cov(x.T), expected_cov, atol=0.08)
