"""Random draws inside ``scan``: a shared generator drawn from in ``fn`` becomes a loop state
(explicitly through ``fn``'s updates, or through the ``default_update`` a ``RandomStream``
gives it), the returned updates hold the final generator, and the draws equal a NumPy loop
drawing the same sequence from the same seed."""

import numpy as np
import pytensor
import pytensor.tensor as ptt
import pytest

import oxtensor
import oxtensor.tensor as pt
from oxtensor.tensor.random.utils import RandomStream

MODES = [None, "FAST_COMPILE", oxtensor.Mode(linker="py", optimizer="fast_run")]


def random_walk(lib, mod, seed, n_steps):
    rng = lib.shared(np.random.default_rng(seed))

    def step(x):
        next_rng, z = mod.random.normal(rng=rng, return_next_rng=True)
        return x + z, {rng: next_rng}

    out, updates = lib.scan(step, outputs_info=[mod.as_tensor(np.float64(0.0))], n_steps=n_steps)
    return rng, out, updates


@pytest.mark.parametrize("mode", MODES)
def test_explicit_generator_update_in_fn(mode):
    rng, out, updates = random_walk(oxtensor, pt, 1, 5)
    assert list(updates) == [rng]
    f = oxtensor.function([], out, updates=updates, mode=mode)
    g = np.random.default_rng(1)
    np.testing.assert_array_equal(f(), np.cumsum(g.normal(size=5)))
    # The generator advanced by the five draws, and the next call continues the stream.
    assert rng.get_value().bit_generator.state == g.bit_generator.state
    np.testing.assert_array_equal(f(), np.cumsum(g.normal(size=5)))


def test_same_as_pytensor():
    rng, out, updates = random_walk(oxtensor, pt, 3, 6)
    prng, pout, pupdates = random_walk(pytensor, ptt, 3, 6)
    f = oxtensor.function([], out, updates=updates)
    pf = pytensor.function([], pout, updates=pupdates)
    for _ in range(2):
        np.testing.assert_allclose(f(), pf(), rtol=1e-14)
    assert rng.get_value().bit_generator.state == prng.get_value().bit_generator.state


@pytest.mark.parametrize("mode", MODES)
def test_vector_draws_per_step_with_sequences(mode):
    rng = oxtensor.shared(np.random.default_rng(7))
    mus = np.array([0.0, 10.0, -5.0, 2.0])

    def step(mu, acc):
        next_rng, z = pt.random.normal(mu, 2.0, size=3, rng=rng, return_next_rng=True)
        return acc + z.sum(), z, {rng: next_rng}

    (acc, zs), updates = oxtensor.scan(step, sequences=[pt.as_tensor(mus)], outputs_info=[pt.as_tensor(np.float64(0.0)), None])
    f = oxtensor.function([], [acc, zs], updates=updates, mode=mode)
    a, z = f()
    g = np.random.default_rng(7)
    want = np.stack([g.normal(m, 2.0, size=3) for m in mus])
    np.testing.assert_array_equal(z, want)
    np.testing.assert_allclose(a, np.cumsum(want.sum(axis=1)), rtol=1e-14)
    assert rng.get_value().bit_generator.state == g.bit_generator.state


@pytest.mark.parametrize("mode", MODES)
def test_random_stream_inside_fn(mode):
    srng = RandomStream(seed=42)

    def step(x):
        return x + srng.normal(0.0, 1.0)

    out, updates = oxtensor.scan(step, outputs_info=[pt.as_tensor(np.float64(0.0))], n_steps=4)
    assert len(updates) == 1
    (shared_rng,) = updates
    # The stream's generator is the one the default update advances; its first draws are
    # those of the stream's first spawned seed.
    child = np.random.default_rng(np.random.SeedSequence(42).spawn(1)[0])
    f = oxtensor.function([], out, updates=updates, mode=mode)
    np.testing.assert_array_equal(f(), np.cumsum(child.normal(0.0, 1.0, size=4)))
    np.testing.assert_array_equal(f(), np.cumsum(child.normal(0.0, 1.0, size=4)))
    assert shared_rng.get_value().bit_generator.state == child.bit_generator.state


def test_random_stream_inside_fn_matches_pytensor():
    from pytensor.tensor.random.utils import RandomStream as PtRandomStream

    results = []
    for lib, mod, Stream in [(oxtensor, pt, RandomStream), (pytensor, ptt, PtRandomStream)]:
        srng = Stream(seed=5)

        def step(x, srng=srng):
            return x * 0.5 + srng.uniform(-1.0, 1.0, size=2)

        out, updates = lib.scan(step, outputs_info=[mod.zeros(2)], n_steps=3)
        f = lib.function([], out, updates=updates)
        results.append([f(), f()])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14)


def test_two_generators_in_one_step():
    r1 = oxtensor.shared(np.random.default_rng(11))
    r2 = oxtensor.shared(np.random.default_rng(12))

    def step():
        n1, a = pt.random.uniform(size=2, rng=r1, return_next_rng=True)
        n2, b = pt.random.integers(0, 100, rng=r2, return_next_rng=True)
        return a, b, {r1: n1, r2: n2}

    (a, b), updates = oxtensor.scan(step, n_steps=3)
    f = oxtensor.function([], [a, b], updates=updates)
    x, y = f()
    g1, g2 = np.random.default_rng(11), np.random.default_rng(12)
    np.testing.assert_array_equal(x, np.stack([g1.uniform(size=2) for _ in range(3)]))
    np.testing.assert_array_equal(y, [g2.integers(0, 100) for _ in range(3)])
    assert r1.get_value().bit_generator.state == g1.bit_generator.state
    assert r2.get_value().bit_generator.state == g2.bit_generator.state


INTERPRETER = oxtensor.Mode(linker="py", optimizer="fast_run")


def same_generator(a, b):
    """Whether two generator outputs (``Generator``s or their state words) are equal."""
    if isinstance(a, np.random.Generator):
        return a.bit_generator.state == b.bit_generator.state
    return np.array_equal(a, b)


def test_generator_in_outputs_info_draws_what_the_interpreter_draws():
    # An AR(1) simulation whose generator is a loop state: given in outputs_info, returned by
    # fn. The native backend runs it as one C loop calling the draw back; every value and the
    # final generator must be the interpreter's, bit for bit, and a NumPy loop's.
    r = pt.random.rng("r")
    a, s, x0 = pt.dscalar("a"), pt.dscalar("s"), pt.dscalar("x0")

    def step(x, r, a, s):
        next_r, z = pt.random.normal(0.0, s, rng=r, return_next_rng=True)
        return a * x + z, next_r

    (xs, rs), updates = oxtensor.scan(step, outputs_info=[x0, r], non_sequences=[a, s], n_steps=9)
    assert not updates
    results = []
    for mode in (None, INTERPRETER):
        f = oxtensor.function([r, a, s, x0], [xs, rs[-1]], mode=mode)
        results.append(f(np.random.default_rng(21), 0.8, 0.3, 0.5))
    (native_xs, native_r), (interp_xs, interp_r) = results
    np.testing.assert_array_equal(native_xs, interp_xs)
    assert same_generator(native_r, interp_r)
    g, x, want = np.random.default_rng(21), 0.5, []
    for _ in range(9):
        x = 0.8 * x + g.normal(0.0, 0.3)
        want.append(x)
    np.testing.assert_array_equal(native_xs, want)


def stochastic_volatility(seed, mode):
    """Two calls of a stochastic volatility simulation drawing from a shared generator updated
    inside fn (the updates dict): the log-volatilities, observations and counts of each, and
    the generator's state after them."""
    rng = oxtensor.shared(np.random.default_rng(seed))
    mu, phi, sigma = -0.5, 0.9, 0.4

    def step(h):
        r1, z = pt.random.normal(rng=rng, return_next_rng=True)
        h_new = mu + phi * (h - mu) + sigma * z
        r2, y = pt.random.normal(0.0, pt.exp(h_new / 2), size=2, rng=r1, return_next_rng=True)
        r3, k = pt.random.poisson(pt.exp(h_new), rng=r2, return_next_rng=True)
        return [h_new, y, k], {rng: r3}

    outs, updates = oxtensor.scan(step, outputs_info=[pt.as_tensor(np.float64(-0.2)), None, None], n_steps=8)
    f = oxtensor.function([], outs, updates=updates, mode=mode)
    calls = [f(), f()]
    return calls, rng.get_value().bit_generator.state


def test_shared_generator_updated_in_fn_draws_what_the_interpreter_draws():
    native, native_state = stochastic_volatility(4, None)
    interp, interp_state = stochastic_volatility(4, INTERPRETER)
    for got, want in zip(native, interp):
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
    assert native_state == interp_state
