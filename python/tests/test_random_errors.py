"""Random variables, finishing touches: bad parameters raise NumPy's error (type and message)
naming the variable; every distribution, also those PyTensor draws through SciPy, is one random
node whose ``owner.outputs`` are ``[next_rng, draw]``."""

import warnings

import numpy as np
import pytensor
import pytensor.tensor as ptt
import pytest

import oxtensor
import oxtensor.tensor as pt

MODES = [None, "FAST_COMPILE", oxtensor.Mode(linker="py", optimizer="fast_run")]

# (oxtensor draw from generator r, the NumPy call with the same parameters)
NUMPY_ERRORS = [
    (lambda r: pt.random.normal(0.0, -1.0, rng=r), lambda g: g.normal(0.0, -1.0)),
    (lambda r: pt.random.normal(np.zeros(3), [1.0, -2.0, 1.0], rng=r), lambda g: g.normal(np.zeros(3), [1.0, -2.0, 1.0])),
    (lambda r: pt.random.exponential(-1.0, rng=r), lambda g: g.exponential(-1.0)),
    (lambda r: pt.random.gamma(-1.0, scale=1.0, rng=r), lambda g: g.gamma(-1.0, 1.0)),
    (lambda r: pt.random.gamma(1.0, scale=-1.0, rng=r), lambda g: g.gamma(1.0, -1.0)),
    (lambda r: pt.random.beta(0.0, 1.0, rng=r), lambda g: g.beta(0.0, 1.0)),
    (lambda r: pt.random.lognormal(0.0, -1.0, rng=r), lambda g: g.lognormal(0.0, -1.0)),
    (lambda r: pt.random.laplace(0.0, -1.0, rng=r), lambda g: g.laplace(0.0, -1.0)),
    (lambda r: pt.random.logistic(0.0, -1.0, rng=r), lambda g: g.logistic(0.0, -1.0)),
    (lambda r: pt.random.gumbel(0.0, -1.0, rng=r), lambda g: g.gumbel(0.0, -1.0)),
    (lambda r: pt.random.weibull(-1.0, rng=r), lambda g: g.weibull(-1.0)),
    (lambda r: pt.random.wald(0.0, 1.0, rng=r), lambda g: g.wald(0.0, 1.0)),
    (lambda r: pt.random.wald(1.0, 0.0, rng=r), lambda g: g.wald(1.0, 0.0)),
    (lambda r: pt.random.triangular(2.0, 1.0, 3.0, rng=r), lambda g: g.triangular(2.0, 1.0, 3.0)),
    (lambda r: pt.random.triangular(0.0, 4.0, 3.0, rng=r), lambda g: g.triangular(0.0, 4.0, 3.0)),
    (lambda r: pt.random.vonmises(0.0, -1.0, rng=r), lambda g: g.vonmises(0.0, -1.0)),
    (lambda r: pt.random.binomial(-1, 0.5, rng=r), lambda g: g.binomial(-1, 0.5)),
    (lambda r: pt.random.binomial(3, 1.5, rng=r), lambda g: g.binomial(3, 1.5)),
    (lambda r: pt.random.bernoulli(-0.5, rng=r), lambda g: g.binomial(1, -0.5)),
    (lambda r: pt.random.poisson(-1.0, rng=r), lambda g: g.poisson(-1.0)),
    (lambda r: pt.random.geometric(0.0, rng=r), lambda g: g.geometric(0.0)),
    (lambda r: pt.random.negative_binomial(0.0, 0.5, rng=r), lambda g: g.negative_binomial(0.0, 0.5)),
    (lambda r: pt.random.negative_binomial(1.0, 1.5, rng=r), lambda g: g.negative_binomial(1.0, 1.5)),
    (lambda r: pt.random.hypergeometric(1, 1, 5, rng=r), lambda g: g.hypergeometric(1, 1, 5)),
    (lambda r: pt.random.hypergeometric(1, 1, -1, rng=r), lambda g: g.hypergeometric(1, 1, -1)),
    (lambda r: pt.random.integers(5, 5, rng=r), lambda g: g.integers(5, 5)),
    (lambda r: pt.random.uniform(0.0, np.inf, rng=r), lambda g: g.uniform(0.0, np.inf)),
    (lambda r: pt.random.uniform(-1e308, 1e308, rng=r), lambda g: g.uniform(-1e308, 1e308)),
    (lambda r: pt.random.dirichlet([1.0, -1.0], rng=r), lambda g: g.dirichlet([1.0, -1.0])),
    # (chisquare is PyTensor's gamma(df / 2, scale=2), which accepts df == 0 as NumPy's gamma does)
    (lambda r: pt.random.chisquare(-1.0, rng=r), lambda g: g.gamma(-0.5, 2.0)),
    (lambda r: pt.random.multinomial(-1, [0.5, 0.5], rng=r), lambda g: g.multinomial(-1, [0.5, 0.5])),
    (lambda r: pt.random.multinomial(3, [1.5, -0.5], rng=r), lambda g: g.multinomial(3, [1.5, -0.5])),
    (lambda r: pt.random.multinomial(3, [0.7, 0.7, 0.1], rng=r), lambda g: g.multinomial(3, [0.7, 0.7, 0.1])),
    # categorical and choice with probabilities: NumPy's choice checks.
    (lambda r: pt.random.categorical([0.5, 0.2, 0.2], rng=r), lambda g: g.choice(3, p=[0.5, 0.2, 0.2])),
    (lambda r: pt.random.categorical([1.5, -0.7, 0.2], rng=r), lambda g: g.choice(3, p=[1.5, -0.7, 0.2])),
    (lambda r: pt.random.choice(3, size=2, p=np.array([0.5, 0.2, 0.2]), rng=r), lambda g: g.choice(3, 2, p=[0.5, 0.2, 0.2])),
    (lambda r: pt.random.choice(3, size=2, replace=False, p=np.array([0.5, 0.2, 0.2]), rng=r), lambda g: g.choice(3, 2, replace=False, p=[0.5, 0.2, 0.2])),
    (lambda r: pt.random.choice(3, size=5, replace=False, rng=r), lambda g: g.choice(3, 5, replace=False)),
    (
        lambda r: pt.random.multivariate_normal(np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]]), rng=r),
        lambda g: g.multivariate_normal(np.zeros(2), [[1.0, 2.0], [2.0, 1.0]], method="cholesky"),
    ),
]


def numpy_error(call):
    with pytest.raises(Exception) as info:
        call(np.random.default_rng(0))
    return info.value


@pytest.mark.parametrize("k", range(len(NUMPY_ERRORS)))
@pytest.mark.parametrize("mode", MODES)
def test_bad_parameters_raise_numpys_error(k, mode):
    ours, numpys = NUMPY_ERRORS[k]
    want = numpy_error(numpys)
    # NumPy's first sentence (choice appends "See Notes section of docstring ...").
    text = str(want).split(". ")[0]
    rng = oxtensor.shared(np.random.default_rng(0))
    x = ours(rng)
    f = oxtensor.function([], x, mode=mode)
    with pytest.raises(type(want)) as got:
        f()
    assert text in str(got.value), (str(got.value), text)
    # Named, the message names the variable.
    x.name = "theta"
    g = oxtensor.function([], x, mode=mode)
    with pytest.raises(type(want), match="'theta'"):
        g()


# PyTensor's SciPy-drawn distributions: SciPy's ``ValueError`` ("Domain error in arguments"),
# ours says which argument and what was expected.
SCIPY_ERRORS = [
    (lambda r: pt.random.pareto(0.0, 1.0, rng=r), "b <= 0"),
    (lambda r: pt.random.pareto(1.0, -1.0, rng=r), "scale < 0"),
    (lambda r: pt.random.truncexpon(-1.0, rng=r), "b <= 0"),
    (lambda r: pt.random.gengamma(1.0, 0.0, 1.0, rng=r), "p == 0"),
    (lambda r: pt.random.gengamma(-1.0, 1.0, 1.0, rng=r), "alpha / p <= 0"),
    (lambda r: pt.random.betabinom(-1, 1.0, 1.0, rng=r), "n < 0"),
    (lambda r: pt.random.betabinom(3, 0.0, 1.0, rng=r), "a <= 0"),
    # PyTensor draws 1 / gamma(shape, 1 / scale): NumPy checks the reciprocal of `scale`.
    (lambda r: pt.random.invgamma(1.0, -1.0, rng=r), "scale < 0"),
    (lambda r: pt.random.halfcauchy(0.0, -1.0, rng=r), "scale < 0"),
    (lambda r: pt.random.t(3.0, 0.0, -1.0, rng=r), "scale < 0"),
]


@pytest.mark.parametrize("k", range(len(SCIPY_ERRORS)))
def test_bad_parameters_of_scipy_distributions(k):
    build, text = SCIPY_ERRORS[k]
    rng = oxtensor.shared(np.random.default_rng(0))
    f = oxtensor.function([], build(rng))
    with pytest.raises(ValueError, match=text):
        f()


def test_unnamed_errors_name_the_distribution_and_argument():
    rng = oxtensor.shared(np.random.default_rng(0))
    f = oxtensor.function([], pt.random.normal(0.0, -1.0, rng=rng))
    with pytest.raises(ValueError, match=r"normal: invalid `scale`: scale < 0 \(expected a number >= 0, got -1"):
        f()
    # A failing call stores no update: the generator did not move.
    before = rng.get_value().bit_generator.state
    nr, x = pt.random.normal(0.0, -1.0, rng=rng, return_next_rng=True)
    g = oxtensor.function([], x, updates={rng: nr})
    with pytest.raises(ValueError):
        g()
    assert rng.get_value().bit_generator.state == before


def test_mvnormal_non_pd_is_numpys_linalg_error():
    rng = oxtensor.shared(np.random.default_rng(0))
    f = oxtensor.function([], pt.random.multivariate_normal(np.zeros(2), -np.eye(2), rng=rng, name="y"))
    with pytest.raises(np.linalg.LinAlgError, match="'y'.*Matrix is not positive definite"):
        f()


# Every distribution PyTensor composes from others in our old code is now one node.
SINGLE_NODES = [
    lambda m, r: m.random.pareto(np.array([1.0, 2.0, 3.0]), np.array([[1.0], [2.0]]), rng=r, return_next_rng=True),
    lambda m, r: m.random.pareto(2.5, size=(2, 2), rng=r, return_next_rng=True),
    lambda m, r: m.random.truncexpon(np.array([0.5, 5.0]), rng=r, return_next_rng=True),
    lambda m, r: m.random.gengamma(np.array([0.5, 2.0]), 1.5, 2.0, rng=r, return_next_rng=True),
    lambda m, r: m.random.betabinom(np.array([5, 50]), 2.0, 3.0, rng=r, return_next_rng=True),
    lambda m, r: m.random.multivariate_normal(np.zeros(2), np.eye(2), size=3, method="svd", rng=r, return_next_rng=True),
    lambda m, r: m.random.multivariate_normal(np.zeros(2), np.eye(2), size=3, method="eigh", rng=r, return_next_rng=True),
]


@pytest.mark.parametrize("k", range(len(SINGLE_NODES)))
def test_owner_outputs_are_next_rng_and_draw(k):
    rng = oxtensor.shared(np.random.default_rng(40 + k))
    next_rng, x = SINGLE_NODES[k](pt, rng)
    outs = x.owner.outputs
    assert len(outs) == 2 and str(outs[0].dtype) == "uint64"
    assert outs[1].type == x.type
    assert x.owner.inputs[0].name == rng.name
    f = oxtensor.function([], x, updates={rng: x.owner.outputs[0]})
    a, b = f(), f()
    # The same as threading return_next_rng's generator by hand, and as PyTensor (SciPy).
    rng2 = oxtensor.shared(np.random.default_rng(40 + k))
    n2, y = SINGLE_NODES[k](pt, rng2)
    h = oxtensor.function([], y, updates={rng2: n2})
    np.testing.assert_array_equal(a, h())
    np.testing.assert_array_equal(b, h())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prng = pytensor.shared(np.random.default_rng(40 + k))
        pn, px = SINGLE_NODES[k](ptt, prng)
        pf = pytensor.function(
            [], px, updates={prng: pn}, mode=pytensor.compile.mode.Mode(linker="py", optimizer="fast_run")
        )
        want = [pf(), pf()]
    assert a.shape == want[0].shape and a.dtype == want[0].dtype
    if k < 5:  # svd/eigh factors match PyTensor's only up to column signs
        np.testing.assert_allclose(a, want[0], rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(b, want[1], rtol=1e-13, atol=1e-14)
    assert rng.get_value().bit_generator.state == prng.get_value().bit_generator.state
