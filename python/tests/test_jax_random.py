"""Random draws in ``mode="JAX"`` (``oxtensor.link.jax.ops.random``): every distribution of
``pt.random`` against SciPy's (Kolmogorov–Smirnov for continuous ones, chi-squared for
discrete ones, p > 1e-3 at fixed seeds, and the moments), with the default mode's shapes and
dtypes; the generator threaded as a key: successive calls and chained draws give new numbers,
the same seed the same numbers, ``RandomStream`` updates work, and ``jax_funcify`` of a draw
runs under ``jax.jit``. JAX's numbers are not NumPy's, so nothing compares values with the
default mode."""

import numpy as np
import pytest
from scipy import stats

jax = pytest.importorskip("jax")

import oxtensor  # noqa: E402
import oxtensor.tensor as pt  # noqa: E402
from oxtensor.link.jax import jax_funcify  # noqa: E402
from oxtensor.tensor.random.utils import RandomStream  # noqa: E402

R = pt.random
N = 3000
P_MIN = 1e-3


def jax_draws(builds, seed=11, n=N):
    """``n`` draws of each ``build(rng, size)`` (a dict of them), each from its own generator,
    all from one jitted JAX function (one compilation keeps the file fast)."""
    names = sorted(builds)
    outs = [builds[k](R.shared_rng(seed=seed + i), (n,)) for i, k in enumerate(names)]
    return dict(zip(names, oxtensor.function([], outs, mode="JAX")()))


def assert_moments(x, dist):
    """The sample mean within 5 standard errors of the distribution's (when it has them)."""
    mean, var = dist.stats(moments="mv")
    if np.isfinite(mean) and np.isfinite(var):
        assert abs(x.mean() - mean) < 5 * np.sqrt(var / len(x)), (x.mean(), mean)


def chi2_pvalue(x, dist, support):
    """Pearson's chi-squared test of integer draws ``x`` against the pmf of ``dist`` over
    ``support`` (values outside it pooled into one bin; bins expecting < 5 merged)."""
    probs = dist.pmf(np.asarray(support))
    counts = np.array([(x == k).sum() for k in support], dtype=float)
    probs = np.append(probs, max(0.0, 1 - probs.sum()))
    counts = np.append(counts, len(x) - counts.sum())
    exp = probs * len(x)
    merged_obs, merged_exp, acc_o, acc_e = [], [], 0.0, 0.0
    for o, e in zip(counts, exp):
        acc_o, acc_e = acc_o + o, acc_e + e
        if acc_e >= 5:
            merged_obs.append(acc_o)
            merged_exp.append(acc_e)
            acc_o, acc_e = 0.0, 0.0
    merged_obs[-1] += acc_o
    merged_exp[-1] += acc_e
    merged_exp = np.array(merged_exp) * sum(merged_obs) / sum(merged_exp)
    return stats.chisquare(merged_obs, merged_exp).pvalue


CONTINUOUS = {
    "normal": (lambda r, s: R.normal(1.0, 2.0, size=s, rng=r), stats.norm(1.0, 2.0)),
    "uniform": (lambda r, s: R.uniform(-1.0, 3.0, size=s, rng=r), stats.uniform(-1.0, 4.0)),
    "exponential": (lambda r, s: R.exponential(2.0, size=s, rng=r), stats.expon(scale=2.0)),
    "gamma": (lambda r, s: R.gamma(2.5, scale=1.5, size=s, rng=r), stats.gamma(2.5, scale=1.5)),
    "chisquare": (lambda r, s: R.chisquare(3.0, size=s, rng=r), stats.chi2(3.0)),
    "beta": (lambda r, s: R.beta(2.0, 3.0, size=s, rng=r), stats.beta(2.0, 3.0)),
    "lognormal": (lambda r, s: R.lognormal(0.5, 0.75, size=s, rng=r), stats.lognorm(0.75, scale=np.exp(0.5))),
    "halfnormal": (lambda r, s: R.halfnormal(1.0, 2.0, size=s, rng=r), stats.halfnorm(1.0, 2.0)),
    "t": (lambda r, s: R.t(4.0, 1.0, 2.0, size=s, rng=r), stats.t(4.0, 1.0, 2.0)),
    "cauchy": (lambda r, s: R.cauchy(1.0, 2.0, size=s, rng=r), stats.cauchy(1.0, 2.0)),
    "halfcauchy": (lambda r, s: R.halfcauchy(1.0, 2.0, size=s, rng=r), stats.halfcauchy(1.0, 2.0)),
    "laplace": (lambda r, s: R.laplace(1.0, 2.0, size=s, rng=r), stats.laplace(1.0, 2.0)),
    "logistic": (lambda r, s: R.logistic(1.0, 2.0, size=s, rng=r), stats.logistic(1.0, 2.0)),
    "gumbel": (lambda r, s: R.gumbel(1.0, 2.0, size=s, rng=r), stats.gumbel_r(1.0, 2.0)),
    "weibull": (lambda r, s: R.weibull(1.7, size=s, rng=r), stats.weibull_min(1.7)),
    # NumPy's wald(mean, scale) is SciPy's invgauss(mean / scale, scale=scale).
    "wald": (lambda r, s: R.wald(1.5, 2.0, size=s, rng=r), stats.invgauss(0.75, scale=2.0)),
    "triangular": (lambda r, s: R.triangular(0.0, 1.0, 3.0, size=s, rng=r), stats.triang(1 / 3, 0.0, 3.0)),
    "vonmises": (lambda r, s: R.vonmises(0.5, 2.0, size=s, rng=r), stats.vonmises(2.0, loc=0.5)),
    "invgamma": (lambda r, s: R.invgamma(3.0, 2.0, size=s, rng=r), stats.invgamma(3.0, scale=2.0)),
    "pareto": (lambda r, s: R.pareto(3.0, 2.0, size=s, rng=r), stats.pareto(3.0, scale=2.0)),
    "gengamma": (lambda r, s: R.gengamma(2.0, 1.5, 1.3, size=s, rng=r), stats.gengamma(2.0 / 1.5, 1.5, scale=1.3)),
    "truncexpon": (lambda r, s: R.truncexpon(2.0, 1.0, 0.5, size=s, rng=r), stats.truncexpon(2.0, 1.0, 0.5)),
}

DISCRETE = {
    "integers": (lambda r, s: R.integers(2, 9, size=s, rng=r), stats.randint(2, 9), range(2, 9)),
    "bernoulli": (lambda r, s: R.bernoulli(0.3, size=s, rng=r), stats.bernoulli(0.3), range(2)),
    "binomial": (lambda r, s: R.binomial(10, 0.3, size=s, rng=r), stats.binom(10, 0.3), range(11)),
    "poisson": (lambda r, s: R.poisson(4.0, size=s, rng=r), stats.poisson(4.0), range(15)),
    "geometric": (lambda r, s: R.geometric(0.3, size=s, rng=r), stats.geom(0.3), range(1, 20)),
    "nbinom": (lambda r, s: R.negative_binomial(3, 0.4, size=s, rng=r), stats.nbinom(3, 0.4), range(25)),
    "hypergeometric": (lambda r, s: R.hypergeometric(5, 6, 4, size=s, rng=r), stats.hypergeom(11, 5, 4), range(5)),
    "betabinom": (lambda r, s: R.betabinom(10, 2.0, 3.0, size=s, rng=r), stats.betabinom(10, 2.0, 3.0), range(11)),
    "categorical": (
        lambda r, s: R.categorical(np.array([0.2, 0.5, 0.3]), size=s, rng=r),
        stats.rv_discrete(values=([0, 1, 2], [0.2, 0.5, 0.3])),
        range(3),
    ),
}


@pytest.fixture(scope="module")
def continuous():
    return jax_draws({k: b for k, (b, _) in CONTINUOUS.items()})


@pytest.fixture(scope="module")
def discrete():
    return jax_draws({k: b for k, (b, _, _) in DISCRETE.items()})


MEAN = np.array([1.0, -2.0])
COV = np.array([[2.0, 0.6], [0.6, 1.0]])
ALPHAS = np.array([1.0, 2.0, 3.0])
P3 = np.array([0.2, 0.3, 0.5])
MULTIVARIATE = {
    "cholesky": lambda r, s: R.multivariate_normal(MEAN, COV, size=s, rng=r),
    "svd": lambda r, s: R.multivariate_normal(MEAN, COV, size=s, method="svd", rng=r),
    "eigh": lambda r, s: R.multivariate_normal(MEAN, COV, size=s, method="eigh", rng=r),
    "dirichlet": lambda r, s: R.dirichlet(ALPHAS, size=s, rng=r),
    "multinomial": lambda r, s: R.multinomial(10, P3, size=s, rng=r),
    "permutation": lambda r, s: R.permutation(np.arange(5), size=s, rng=r),
}


@pytest.fixture(scope="module")
def multivariate():
    return jax_draws(MULTIVARIATE)


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_draws_follow_scipy(name, continuous):
    dist = CONTINUOUS[name][1]
    x = continuous[name]
    assert x.shape == (N,) and x.dtype == np.float64
    assert stats.kstest(x, dist.cdf).pvalue > P_MIN
    assert_moments(x, dist)


@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_draws_follow_scipy(name, discrete):
    _, dist, support = DISCRETE[name]
    x = discrete[name]
    assert x.shape == (N,) and x.dtype == np.int64
    assert chi2_pvalue(x, dist, support) > P_MIN
    assert_moments(x, dist)


@pytest.mark.parametrize("method", ["cholesky", "svd", "eigh"])
def test_multivariate_normal(method, multivariate):
    x = multivariate[method]
    assert x.shape == (N, 2)
    # Every projection of a Gaussian vector is Gaussian: the marginals and a difference.
    for v in (np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, -1.0])):
        assert stats.kstest(x @ v, stats.norm(v @ MEAN, np.sqrt(v @ COV @ v)).cdf).pvalue > P_MIN
    np.testing.assert_allclose(np.cov(x.T), COV, atol=0.15)


def test_dirichlet_marginals_are_beta(multivariate):
    x = multivariate["dirichlet"]
    np.testing.assert_allclose(x.sum(axis=1), 1.0, rtol=1e-12)
    for i, a in enumerate(ALPHAS):
        assert stats.kstest(x[:, i], stats.beta(a, ALPHAS.sum() - a).cdf).pvalue > P_MIN


def test_multinomial_marginals_are_binomial(multivariate):
    x = multivariate["multinomial"]
    assert x.dtype == np.int64
    assert (x.sum(axis=1) == 10).all()
    for i, pi in enumerate(P3):
        assert chi2_pvalue(x[:, i], stats.binom(10, pi), range(11)) > P_MIN


def test_permutations_are_uniform(multivariate):
    x = multivariate["permutation"]
    assert (np.sort(x, axis=1) == np.arange(5)).all()
    assert chi2_pvalue(x[:, 0], stats.randint(0, 5), range(5)) > P_MIN
    assert not (x == x[0]).all()


def test_choice_without_replacement_is_uniform():
    rng = R.shared_rng(seed=4)
    f = oxtensor.function([], R.choice(6, size=(3,), replace=False, rng=rng), mode="JAX")
    x = np.array([f() for _ in range(3)])  # the generator is not updated: all equal
    assert (x == x[0]).all() and len(set(x[0])) == 3
    stream = RandomStream(seed=4)
    g = oxtensor.function([], stream.choice(6, size=(3,), replace=False), mode="JAX")
    x = np.array([g() for _ in range(300)])
    assert all(len(set(row)) == 3 for row in x)
    assert chi2_pvalue(x[:, 0], stats.randint(0, 6), range(6)) > P_MIN


SHAPES = [
    lambda r: R.normal(np.zeros(3), np.ones((2, 1)), rng=r),
    lambda r: R.normal(np.zeros(3), 1.0, size=(4, 2, 3), rng=r),
    lambda r: R.uniform(0.0, 1.0, size=(2, 3), dtype="float32", rng=r),
    lambda r: R.integers(np.array([0, 5]), 10, rng=r),
    lambda r: R.integers(0, 10, size=(), rng=r),
    lambda r: R.bernoulli(0.5, size=(2,), dtype="int8", rng=r),
    lambda r: R.hypergeometric(np.array([5, 2]), 6, np.array([[4], [0]]), rng=r),
    lambda r: R.vonmises(0.0, np.array([0.0, 1.0, 50.0]), rng=r),
    lambda r: R.categorical(np.full((2, 4), 0.25), size=(3, 2), rng=r),
    lambda r: R.multivariate_normal(np.zeros((2, 3)), np.eye(3), rng=r),
    lambda r: R.permutation(7, rng=r),
    lambda r: R.permutation(np.arange(6.0).reshape(3, 2), rng=r),
    lambda r: R.choice(np.arange(10.0), size=(2, 2), replace=False, p=np.full(10, 0.1), rng=r),
    lambda r: R.choice(5, size=(2, 3), rng=r),
]


def test_shapes_and_dtypes_are_the_default_modes(continuous, discrete, multivariate):
    draws = [make(R.shared_rng(seed=2)) for make in SHAPES]
    want = oxtensor.function([], draws)()
    got = oxtensor.function([], draws, mode="JAX")()
    for k, (w, g) in enumerate(zip(want, got)):
        assert (g.shape, g.dtype) == (w.shape, w.dtype), k
    # The draws tested against SciPy, too (the default mode compiles them in no time).
    for table, got in ((CONTINUOUS, continuous), (DISCRETE, discrete), (MULTIVARIATE, multivariate)):
        for name, entry in table.items():
            build = entry[0] if isinstance(entry, tuple) else entry
            want = oxtensor.function([], build(R.shared_rng(seed=2), (N,)))()
            assert (got[name].shape, got[name].dtype) == (want.shape, want.dtype), name


def test_successive_calls_draw_new_numbers_and_the_seed_repeats_them():
    def run():
        rng = R.shared_rng(seed=7)
        nxt, x = R.normal(0.0, 1.0, size=(4,), rng=rng, return_next_rng=True)
        f = oxtensor.function([], x, updates={rng: nxt}, mode="JAX")
        return rng, f, [f(), f()]

    rng, f, (a, b) = run()
    assert not np.allclose(a, b)
    _, _, again = run()  # a fresh function and generator of the same seed: the same numbers
    np.testing.assert_array_equal(again[0], a)
    np.testing.assert_array_equal(again[1], b)
    rng.set_value(np.random.default_rng(7))  # reseeding the shared generator restarts them
    np.testing.assert_array_equal(f(), a)


def test_the_shared_generator_holds_a_working_numpy_generator_after_jax_calls():
    rng = R.shared_rng(seed=7)
    before = rng.get_value().bit_generator.state
    nxt, x = R.normal(size=(3,), rng=rng, return_next_rng=True)
    oxtensor.function([], x, updates={rng: nxt}, mode="JAX")()
    after = rng.get_value()
    assert isinstance(after, np.random.Generator) and after.bit_generator.state != before
    assert oxtensor.function([], x)().shape == (3,)  # the default mode draws from it
    without_update = oxtensor.function([], x, mode="JAX")
    state = rng.get_value().bit_generator.state
    np.testing.assert_array_equal(without_update(), without_update())
    assert rng.get_value().bit_generator.state == state


def test_chained_draws_in_one_graph_are_independent():
    rng = R.shared_rng(seed=3)
    nxt, x = rng.normal(0.0, 1.0, size=(N,))
    _, y = nxt.normal(0.0, 1.0, size=(N,))
    a, b = oxtensor.function([], [x, y], mode="JAX")()
    assert not np.allclose(a, b)
    assert abs(np.corrcoef(a, b)[0, 1]) < 5 / np.sqrt(N)
    assert stats.kstest(b, "norm").pvalue > P_MIN
    # Two draws from the same generator value, not chained, repeat as in the default mode.
    _, z = rng.normal(0.0, 1.0, size=(N,))
    c, d = oxtensor.function([], [x, z], mode="JAX")()
    np.testing.assert_array_equal(c, d)


def test_random_stream_default_updates():
    srng = RandomStream(seed=5)
    x = srng.normal(0.0, 1.0, size=(3,))
    u = srng.uniform(0.0, 1.0, size=(3,))
    f = oxtensor.function([], [x, u], mode="JAX")
    first, second = f(), f()
    assert not np.allclose(first[0], second[0]) and not np.allclose(first[1], second[1])
    assert not np.allclose(first[0], first[1])
    srng.seed(5)
    np.testing.assert_array_equal(f()[0], first[0])


def test_draws_in_a_scan_carry_the_generator():
    rng = R.shared_rng(seed=9)

    def step(r):
        nxt, x = R.normal(0.0, 1.0, rng=r, return_next_rng=True)
        return nxt, x

    (_, xs), _ = oxtensor.scan(step, outputs_info=[rng, None], n_steps=N)
    x = oxtensor.function([], xs, mode="JAX")()
    assert x.shape == (N,) and len(np.unique(x)) == N
    assert stats.kstest(x, "norm").pvalue > P_MIN


def test_jax_funcify_of_a_draw_runs_under_jit():
    rng = R.shared_rng(seed=1)
    mu = pt.vector("mu")
    x = R.normal(mu, 0.5, size=(N, 2), rng=rng)
    fn = jax.jit(jax_funcify(x, inputs=[mu]))
    (a,) = fn(np.array([1.0, -1.0]))
    assert a.shape == (N, 2) and a.dtype == np.float64
    assert stats.kstest(np.asarray(a[:, 1]), stats.norm(-1.0, 0.5).cdf).pvalue > P_MIN
    # The generator is read as a constant (its value now): the same numbers every call.
    np.testing.assert_array_equal(fn(np.array([1.0, -1.0]))[0], a)


def test_a_size_from_input_values_fails_naming_the_op():
    n = pt.scalar("n", dtype="int64")
    d = R.normal(0.0, 1.0, size=(n,), rng=R.shared_rng(seed=0))
    f = oxtensor.function([n], d, mode="JAX")
    with pytest.raises(NotImplementedError, match=r"size of Random\{normal\}"):
        f(3)


def test_generator_inputs_and_outputs_are_numpy_generators():
    r = R.rng("r")
    nxt, x = R.normal(0.0, 1.0, size=(3,), rng=r, return_next_rng=True)
    f = oxtensor.function([r], [nxt, x], mode="JAX")
    g, a = f(np.random.default_rng(0))
    assert isinstance(g, np.random.Generator)
    _, b = f(g)
    assert not np.allclose(a, b)
    np.testing.assert_array_equal(f(np.random.default_rng(0))[1], a)


def test_a_distribution_without_a_translation_fails_naming_it():
    # Every distribution of pt.random translates; one added later without a translation is
    # refused when the function is built, naming it.
    from oxtensor.link.jax import dispatch

    node = {"op": {"op": "Random", "dist": "zipf", "dtype": "int64", "size_ndim": None}}
    with pytest.raises(NotImplementedError, match=r"no JAX translation for op Random\{zipf\}"):
        dispatch.translate(node, None)
