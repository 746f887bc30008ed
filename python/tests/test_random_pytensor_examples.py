"""PyTensor's documented random examples, run unchanged but for the import: each example is
written once against the modules it is given and run with PyTensor's and with oxtensor's; both
must give the same values (and the values PyTensor's docstrings print, where they print any).

Sources: the docstrings of ``pytensor.tensor.random.variable.shared_rng`` and ``rng`` (PyTensor
3), and PyTensor's "Using random numbers" tutorial (``RandomStream``, seeding, sharing streams
between functions, ``no_default_updates``)."""

import warnings

import numpy as np
import pytest


def libraries():
    import pytensor
    import pytensor.tensor as ptt
    import pytensor.tensor.random as ptr
    from pytensor.tensor.random.utils import RandomStream as PtStream

    import oxtensor
    import oxtensor.tensor as oxt
    import oxtensor.tensor.random as oxr
    from oxtensor.tensor.random.utils import RandomStream as OxStream

    return {
        "pytensor": (pytensor, ptt, ptr, PtStream),
        "oxtensor": (oxtensor, oxt, oxr, OxStream),
    }


def shared_rng_docstring(pytensor, pt, ptr, RandomStream):
    rng = ptr.shared_rng(np.random.default_rng(153), name="rng")
    next_rng, x = rng.normal()
    fn = pytensor.function([], x, updates={rng: next_rng})
    out = [fn()]
    rng2 = ptr.shared_rng(seed=153, name="rng2")
    next_rng2, x2 = rng2.normal()
    fn2 = pytensor.function([], x2, updates={rng2: next_rng2})
    out.append(fn2())
    rng.set_value(np.random.default_rng(153))
    out.append(fn())
    rng.set_value(seed=153)
    out.append(fn())
    out.append(fn())
    return out


def symbolic_rng_docstring(pytensor, pt, ptr, RandomStream):
    rng = ptr.rng("rng")
    next_rng, x = rng.normal()
    fn = pytensor.function([pytensor.In(rng, mutable=True)], [next_rng, x])
    rng_val = np.random.default_rng(153)
    rng_val, draw = fn(rng_val)
    out = [draw]
    rng_val, draw = fn(rng_val)
    out.append(draw)
    out.append(rng_val.normal(size=2))
    return out


def shared_generator_with_updates(pytensor, pt, ptr, RandomStream):
    rng = pytensor.shared(np.random.default_rng(42))
    next_rng, x = pt.random.normal(loc=0, scale=1, size=(2,), rng=rng, return_next_rng=True)
    f = pytensor.function([], x, updates={rng: next_rng})
    out = [f(), f()]
    # Without the update the generator does not advance.
    g = pytensor.function([], x)
    out += [g(), g()]
    out.append(rng.get_value().normal(size=2))
    return out


def method_api(pytensor, pt, ptr, RandomStream):
    rng = pytensor.shared(np.random.default_rng(7))
    next_rng, x = rng.normal(loc=1.0, scale=2.0, size=3)
    next_rng2, y = next_rng.uniform(size=2)
    f = pytensor.function([], [x, y], updates={rng: next_rng2})
    return [*f(), *f()]


def tutorial_random_stream(pytensor, pt, ptr, RandomStream):
    srng = RandomStream(seed=234)
    rv_u = srng.uniform(0, 1, size=(2, 2))
    rv_n = srng.normal(0, 1, size=(2, 2))
    f = pytensor.function([], rv_u)
    g = pytensor.function([], rv_n, no_default_updates=True)
    nearly_zeros = pytensor.function([], rv_u + rv_u - 2 * rv_u)
    out = [f(), f(), g(), g(), nearly_zeros()]
    # Seeding streams.
    rng_val = rv_u.owner.inputs[0].get_value(borrow=True)
    rng_val = np.random.default_rng(89234)
    rv_u.owner.inputs[0].set_value(rng_val, borrow=True)
    out.append(f())
    srng.seed(902340)
    out += [f(), g()]
    # Sharing streams between functions.
    state_after_v0 = rv_u.owner.inputs[0].get_value().bit_generator.state
    nearly_zeros()
    v1 = f()
    rng = rv_u.owner.inputs[0].get_value()
    rng.bit_generator.state = state_after_v0
    rv_u.owner.inputs[0].set_value(rng, borrow=True)
    v2 = f()
    v3 = f()
    assert not np.allclose(v1, v2) and np.allclose(v1, v3)
    out += [v1, v2, v3]
    return out


def tutorial_updates_list(pytensor, pt, ptr, RandomStream):
    srng = RandomStream(seed=3)
    x = srng.normal(0, 1, size=3)
    y = srng.gamma(2.0, scale=1.5, size=3)
    f = pytensor.function([], [x, y], updates=srng.updates(), no_default_updates=True)
    return [*f(), *f()]


EXAMPLES = [
    shared_rng_docstring,
    symbolic_rng_docstring,
    shared_generator_with_updates,
    method_api,
    tutorial_random_stream,
    tutorial_updates_list,
]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.__name__)
def test_example_runs_and_matches_pytensor(example):
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, mods in libraries().items():
            results[name] = example(*mods)
    theirs, ours = results["pytensor"], results["oxtensor"]
    assert len(theirs) == len(ours)
    for a, b in zip(ours, theirs):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a, b)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_docstring_values():
    mods = libraries()["oxtensor"]
    out = shared_rng_docstring(*mods)
    np.testing.assert_allclose(out[:4], [1.45769255] * 4, rtol=1e-8)
    out = symbolic_rng_docstring(*mods)
    np.testing.assert_allclose(out[:2], [1.45769255, 0.44383835], rtol=1e-8)
