"""Random variables (``pt.random``): the same numbers as NumPy's ``Generator`` for the same seed,
shared generators that advance through updates, RandomStream, the method API, errors, and the
same draws as PyTensor itself for seeded programs."""

import warnings

import numpy as np
import pytest
import pytensor
import pytensor.tensor as ptt
import scipy.stats as st

import oxtensor
import oxtensor.tensor as pt
from oxtensor.tensor.random.utils import RandomStream


def draw(seed, build, mode=None):
    """Compiles ``build(rng) -> draw`` on a shared generator seeded ``seed`` and calls it once."""
    rng = oxtensor.shared(np.random.default_rng(seed))
    return oxtensor.function([], build(rng), mode=mode)()


# PyTensor drawing through NumPy/SciPy (its Python linker; its default numba backend has its
# own samplers for some distributions).
PT_NUMPY = pytensor.compile.mode.Mode(linker="py", optimizer="fast_run")

MODES = [None, "FAST_COMPILE", oxtensor.Mode(linker="py", optimizer="fast_run")]


def state(g):
    return g.bit_generator.state


# (oxtensor call, NumPy call) pairs drawing the same values from the same generator state.
STREAM_IDENTICAL = [
    (lambda r: pt.random.normal(1.0, 2.0, size=(3, 4), rng=r), lambda g: g.normal(1.0, 2.0, size=(3, 4))),
    (lambda r: pt.random.standard_normal(size=7, rng=r), lambda g: g.standard_normal(7)),
    (lambda r: pt.random.uniform(-2.0, 5.0, size=9, rng=r), lambda g: g.uniform(-2.0, 5.0, 9)),
    (lambda r: pt.random.integers(3, 1000, size=(5,), rng=r), lambda g: g.integers(3, 1000, size=5)),
    (lambda r: pt.random.integers(10, size=8, rng=r), lambda g: g.integers(10, size=8)),
    (lambda r: pt.random.exponential(3.0, size=10, rng=r), lambda g: g.exponential(3.0, 10)),
    (lambda r: pt.random.gamma(0.6, scale=2.0, size=20, rng=r), lambda g: g.gamma(0.6, 2.0, 20)),
    (lambda r: pt.random.gamma(4.0, scale=0.5, size=20, rng=r), lambda g: g.gamma(4.0, 0.5, 20)),
    (lambda r: pt.random.beta(0.5, 0.7, size=20, rng=r), lambda g: g.beta(0.5, 0.7, 20)),
    (lambda r: pt.random.beta(2.0, 3.0, size=20, rng=r), lambda g: g.beta(2.0, 3.0, 20)),
    (lambda r: pt.random.lognormal(0.5, 0.3, size=10, rng=r), lambda g: g.lognormal(0.5, 0.3, 10)),
    (lambda r: pt.random.chisquare(3.0, size=10, rng=r), lambda g: g.gamma(1.5, 2.0, 10)),
    (lambda r: pt.random.laplace(1.0, 2.0, size=10, rng=r), lambda g: g.laplace(1.0, 2.0, 10)),
    (lambda r: pt.random.logistic(1.0, 2.0, size=10, rng=r), lambda g: g.logistic(1.0, 2.0, 10)),
    (lambda r: pt.random.gumbel(1.0, 2.0, size=10, rng=r), lambda g: g.gumbel(1.0, 2.0, 10)),
    (lambda r: pt.random.weibull(1.5, size=10, rng=r), lambda g: g.weibull(1.5, 10)),
    (lambda r: pt.random.wald(1.0, 2.0, size=10, rng=r), lambda g: g.wald(1.0, 2.0, 10)),
    (lambda r: pt.random.triangular(0.0, 1.0, 3.0, size=10, rng=r), lambda g: g.triangular(0.0, 1.0, 3.0, 10)),
    (lambda r: pt.random.vonmises(0.5, 2.0, size=10, rng=r), lambda g: g.vonmises(0.5, 2.0, 10)),
    (lambda r: pt.random.poisson(4.5, size=30, rng=r), lambda g: g.poisson(4.5, 30)),
    (lambda r: pt.random.poisson(40.0, size=30, rng=r), lambda g: g.poisson(40.0, 30)),
    (lambda r: pt.random.binomial(20, 0.3, size=30, rng=r), lambda g: g.binomial(20, 0.3, 30)),
    (lambda r: pt.random.binomial(500, 0.4, size=30, rng=r), lambda g: g.binomial(500, 0.4, 30)),
    (lambda r: pt.random.geometric(0.3, size=30, rng=r), lambda g: g.geometric(0.3, 30)),
    (lambda r: pt.random.negative_binomial(3.0, 0.4, size=30, rng=r), lambda g: g.negative_binomial(3.0, 0.4, 30)),
    (lambda r: pt.random.hypergeometric(10, 7, 5, size=30, rng=r), lambda g: g.hypergeometric(10, 7, 5, 30)),
    (lambda r: pt.random.dirichlet([0.5, 1.0, 2.0], size=4, rng=r), lambda g: g.dirichlet([0.5, 1.0, 2.0], 4)),
    # NumPy 2 accepts zero alphas: a zero component, in both of its algorithms.
    (lambda r: pt.random.dirichlet([0.0, 1.0, 2.0], size=4, rng=r), lambda g: g.dirichlet([0.0, 1.0, 2.0], 4)),
    (lambda r: pt.random.dirichlet([0.05, 0.0, 0.02, 0.0], size=4, rng=r), lambda g: g.dirichlet([0.05, 0.0, 0.02, 0.0], 4)),
    (lambda r: pt.random.dirichlet([0.0, 0.05], size=3, rng=r), lambda g: g.dirichlet([0.0, 0.05], 3)),
    (lambda r: pt.random.dirichlet([0.0, 0.0], size=3, rng=r), lambda g: g.dirichlet([0.0, 0.0], 3)),
    (lambda r: pt.random.multinomial(10, [0.2, 0.5, 0.3], size=4, rng=r), lambda g: g.multinomial(10, [0.2, 0.5, 0.3], 4)),
    # Broadcast parameters, no size: NumPy's C-order loop over the broadcast shape.
    (
        lambda r: pt.random.normal(np.array([0.0, 10.0, 100.0]), np.array([[1.0], [2.0]]), rng=r),
        lambda g: g.normal(np.array([0.0, 10.0, 100.0]), np.array([[1.0], [2.0]])),
    ),
    (
        lambda r: pt.random.integers(np.array([0, -5]), np.array([[3], [1000]]), rng=r),
        lambda g: g.integers(np.array([0, -5]), np.array([[3], [1000]])),
    ),
    # Broadcast parameters stretched to size.
    (
        lambda r: pt.random.uniform(np.array([0.0, 1.0, 2.0]), 5.0, size=(2, 3), rng=r),
        lambda g: g.uniform(np.array([0.0, 1.0, 2.0]), 5.0, size=(2, 3)),
    ),
]


@pytest.mark.parametrize("case", range(len(STREAM_IDENTICAL)))
@pytest.mark.parametrize("mode", MODES, ids=["default", "fast_compile", "interp"])
def test_same_numbers_as_numpy(case, mode):
    ours, theirs = STREAM_IDENTICAL[case]
    g = np.random.default_rng(case + 100)
    want = np.asarray(theirs(g))
    got = draw(case + 100, ours, mode=mode)
    assert got.shape == want.shape
    np.testing.assert_array_max_ulp(got.astype(float), want.astype(float), maxulp=2)


def test_categorical_matches_pytensor_algorithm():
    p = np.array([0.2, 0.5, 0.3])
    got = draw(3, lambda r: pt.random.categorical(p, size=50, rng=r))
    g = np.random.default_rng(3)
    want = np.searchsorted(np.cumsum(p), g.uniform(size=50))
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int64


def test_float32_and_int_dtypes():
    got = draw(1, lambda r: pt.random.normal(size=5, rng=r, dtype="float32"))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.random.default_rng(1).normal(size=5).astype(np.float32))
    got = draw(1, lambda r: pt.random.integers(0, 100, size=5, rng=r, dtype="int32"))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.random.default_rng(1).integers(0, 100, size=5))


def test_symbolic_size_and_parameters():
    rng = oxtensor.shared(np.random.default_rng(5))
    mu = pt.dvector("mu")
    n = pt.lscalar("n")
    x = pt.random.normal(mu, 1.0, size=(n, 3), rng=rng)
    f = oxtensor.function([mu, n], x)
    got = f([0.0, 1.0, 2.0], 2)
    want = np.random.default_rng(5).normal([0.0, 1.0, 2.0], 1.0, size=(2, 3))
    np.testing.assert_array_equal(got, want)


def test_shared_generator_get_and_set_value():
    g = np.random.default_rng(42)
    rng = oxtensor.shared(g, name="rng")
    assert isinstance(rng, pt.random.RandomGeneratorSharedVariable)
    value = rng.get_value()
    assert isinstance(value, np.random.Generator)
    assert state(value) == state(np.random.default_rng(42))
    # The variable holds a copy: drawing from either does not change the other.
    g.normal()
    assert state(rng.get_value()) == state(np.random.default_rng(42))
    other = np.random.default_rng(7)
    other.random()  # leaves a state with has_uint32 = 0; integers below buffers a half
    other.integers(0, 10)
    rng.set_value(other)
    assert state(rng.get_value()) == state(other)
    with pytest.raises(TypeError, match="Generator"):
        rng.set_value(np.zeros(6))


@pytest.mark.parametrize("mode", MODES, ids=["default", "fast_compile", "interp"])
def test_updates_advance_the_shared_generator(mode):
    rng = oxtensor.shared(np.random.default_rng(42))
    next_rng, x = pt.random.normal(0.0, 1.0, size=3, rng=rng, return_next_rng=True)
    f = oxtensor.function([], x, updates={rng: next_rng}, mode=mode)
    a, b = f(), f()
    g = np.random.default_rng(42)
    np.testing.assert_array_equal(a, g.normal(size=3))
    np.testing.assert_array_equal(b, g.normal(size=3))
    assert not np.array_equal(a, b)
    assert state(rng.get_value()) == state(g)


def test_without_update_the_draws_repeat_as_in_pytensor():
    rng = oxtensor.shared(np.random.default_rng(1))
    f = oxtensor.function([], pt.random.uniform(size=2, rng=rng))
    np.testing.assert_array_equal(f(), f())


def test_default_update():
    rng = oxtensor.shared(np.random.default_rng(9))
    next_rng, x = pt.random.integers(0, 100, size=4, rng=rng, return_next_rng=True)
    assert rng.default_update is None
    rng.default_update = next_rng
    assert rng.default_update is next_rng or rng.default_update == next_rng
    f = oxtensor.function([], x)
    g = np.random.default_rng(9)
    np.testing.assert_array_equal(f(), g.integers(0, 100, size=4))
    np.testing.assert_array_equal(f(), g.integers(0, 100, size=4))
    assert state(rng.get_value()) == state(g)
    frozen = oxtensor.function([], x, no_default_updates=True)
    np.testing.assert_array_equal(frozen(), frozen())


def test_random_stream_matches_pytensor():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from pytensor.tensor.random.utils import RandomStream as PtRandomStream

        outs = []
        for lib, mod, stream in [(oxtensor, pt, RandomStream), (pytensor, ptt, PtRandomStream)]:
            srng = stream(seed=234)
            rv_u = srng.uniform(0, 1, size=(2, 2))
            rv_n = srng.normal(0, 1, size=(2, 2))
            m = None if lib is oxtensor else PT_NUMPY
            f = lib.function([], rv_u, mode=m)
            g = lib.function([], rv_n, no_default_updates=True, mode=m)
            nearly_zeros = lib.function([], rv_u + rv_u - 2 * rv_u, mode=m)
            outs.append([f(), f(), g(), g(), nearly_zeros()])
    for ours, theirs in zip(*outs):
        np.testing.assert_array_max_ulp(ours, theirs, maxulp=2)


def test_method_api_and_shared_rng_match_pytensor():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        results = []
        for lib, mod in [(oxtensor, pt), (pytensor, ptt)]:
            rng = mod.random.shared_rng(np.random.default_rng(153), name="rng")
            next_rng, x = rng.normal()
            fn = lib.function([], x, updates={rng: next_rng})
            seeded = mod.random.shared_rng(seed=11)
            n2, y = seeded.gamma(2.0, scale=3.0, size=4)
            fy = lib.function([], y, updates={seeded: n2})
            results.append([fn(), fn(), fy(), fy()])
    for ours, theirs in zip(*results):
        np.testing.assert_array_max_ulp(np.asarray(ours, float), np.asarray(theirs, float), maxulp=2)
    np.testing.assert_allclose(results[0][0], 1.45769255)


PYTENSOR_PROGRAMS = [
    lambda m, r: m.random.normal(np.arange(3.0), 2.0, size=(4, 3), rng=r, return_next_rng=True),
    lambda m, r: m.random.halfnormal(1.0, 2.0, size=6, rng=r, return_next_rng=True),
    lambda m, r: m.random.bernoulli(0.3, size=10, rng=r, return_next_rng=True),
    lambda m, r: m.random.t(3.0, 1.0, 2.0, size=6, rng=r, return_next_rng=True),
    lambda m, r: m.random.cauchy(1.0, 2.0, size=6, rng=r, return_next_rng=True),
    lambda m, r: m.random.halfcauchy(1.0, 2.0, size=6, rng=r, return_next_rng=True),
    lambda m, r: m.random.invgamma(3.0, 2.0, size=6, rng=r, return_next_rng=True),
    lambda m, r: m.random.pareto(3.0, 2.0, size=6, rng=r, return_next_rng=True),
    lambda m, r: m.random.nbinom(3.0, 0.4, size=6, rng=r, return_next_rng=True),
    lambda m, r: m.random.categorical(np.array([[0.1, 0.9], [0.6, 0.4]]), rng=r, return_next_rng=True),
    lambda m, r: m.random.dirichlet(np.array([[1.0, 2.0], [0.5, 0.5]]), size=(3, 2), rng=r, return_next_rng=True),
    lambda m, r: m.random.multivariate_normal(
        np.array([1.0, -2.0, 0.5]),
        np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]]),
        size=(4,),
        rng=r,
        return_next_rng=True,
    ),
    lambda m, r: m.random.permutation(10, rng=r, return_next_rng=True),
    lambda m, r: m.random.permutation(np.array([1.5, -2.0, 3.25, 7.0, 0.5]), rng=r, return_next_rng=True),
    lambda m, r: m.random.multivariate_normal(
        np.zeros((2, 2)), np.stack([np.eye(2), [[1.0, 0.9], [0.9, 1.0]]]), rng=r, return_next_rng=True
    ),
]


@pytest.mark.parametrize("k", range(len(PYTENSOR_PROGRAMS)))
def test_same_draws_as_pytensor(k):
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib, mod in [(oxtensor, pt), (pytensor, ptt)]:
            rng = lib.shared(np.random.default_rng(2024 + k))
            next_rng, x = PYTENSOR_PROGRAMS[k](mod, rng)
            m = None if lib is oxtensor else PT_NUMPY
            f = lib.function([], x, updates={rng: next_rng}, mode=m)
            results.append((f(), f(), rng.get_value()))
    (a1, a2, ga), (b1, b2, gb) = results
    assert a1.dtype == b1.dtype and a1.shape == b1.shape
    if a1.dtype.kind == "f":
        # Ulps of tan/pow (NumPy's SIMD loops vs the C library) grow where loc + scale * y
        # cancels, so compare with a tight absolute-and-relative tolerance.
        np.testing.assert_allclose(a1, b1, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(a2, b2, rtol=1e-13, atol=1e-14)
    else:
        np.testing.assert_array_equal(a1, b1)
        np.testing.assert_array_equal(a2, b2)
    assert state(ga) == state(gb)


def test_goodness_of_fit_of_discrete_draws():
    x = draw(77, lambda r: pt.random.poisson(3.5, size=20000, rng=r))
    counts = np.bincount(x, minlength=25)[:15]
    expected = st.poisson.pmf(np.arange(15), 3.5) * x.size
    assert st.chisquare(counts, expected * counts.sum() / expected.sum()).pvalue > 1e-3
    y = draw(78, lambda r: pt.random.binomial(30, 0.25, size=20000, rng=r))
    assert abs(y.mean() - 7.5) < 0.1 and abs(y.var() - 5.625) < 0.3


def test_return_next_rng_and_names():
    rng = oxtensor.shared(np.random.default_rng(0))
    out = pt.random.normal(size=2, rng=rng, name="z", return_next_rng=True)
    assert isinstance(out, tuple) and len(out) == 2
    next_rng, z = out
    assert z.name == "z"
    assert str(next_rng.dtype) == "uint64"
    # Drawing again from next_rng continues the stream.
    w = pt.random.normal(size=2, rng=next_rng)
    a, b = oxtensor.function([], [z, w])()
    g = np.random.default_rng(0)
    np.testing.assert_array_equal(a, g.normal(size=2))
    np.testing.assert_array_equal(b, g.normal(size=2))


def test_errors():
    rng = oxtensor.shared(np.random.default_rng(0))
    with pytest.raises(ValueError, match="broadcast"):
        pt.random.normal(np.zeros(3), 1.0, size=(2,), rng=rng)
    with pytest.raises(ValueError, match="dtype"):
        pt.random.poisson(1.0, rng=rng, dtype="float64")
    with pytest.raises(TypeError, match="random generator"):
        pt.random.normal(rng=pt.dvector("notrng"))
    f = oxtensor.function([], pt.random.normal(0.0, -1.0, rng=rng))
    with pytest.raises(ValueError, match="scale"):
        f()
    p = pt.dvector("p")
    g = oxtensor.function([p], pt.random.binomial(5, p, rng=rng))
    with pytest.raises(ValueError, match="p"):
        g([0.5, 1.5])
    h = oxtensor.function([], pt.random.multivariate_normal(np.zeros(2), -np.eye(2), rng=rng))
    with pytest.raises(ValueError, match="positive definite"):
        h()
    with pytest.raises(ValueError, match="rate and scale"):
        pt.random.gamma(1.0, rate=1.0, scale=1.0, rng=rng)


def test_draws_are_not_differentiable():
    rng = oxtensor.shared(np.random.default_rng(0))
    mu = pt.dscalar("mu")
    x = pt.random.normal(mu, 1.0, rng=rng)
    with pytest.raises(Exception, match="No gradient defined for random variables"):
        oxtensor.grad(x, mu)
