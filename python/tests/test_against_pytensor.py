"""The same programs under oxtensor and PyTensor give the same numbers. PyTensor is a test
requirement (python/requirements-test.txt): without it these tests fail, never skip."""

import numpy as np
import pytest
import pytensor
import pytensor.tensor as ptt

import oxtensor
import oxtensor.tensor as oxt

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 5))
B = RNG.standard_normal((5, 3))
V = RNG.standard_normal(5)
I = RNG.integers(-5, 5, size=(4, 5)).astype("int32")


def prog_elemwise(lib, pt):
    x = pt.dmatrix("x")
    return [x], [pt.exp(x) * pt.sin(x) + pt.sqrt(pt.abs(x)) - pt.log1p(x**2), pt.sigmoid(x), pt.softplus(-x)], [A]


def prog_reductions(lib, pt):
    x = pt.dmatrix("x")
    return [x], [x.sum(axis=0), x.mean(axis=-1, keepdims=True), x.std(), x.max(axis=1), pt.argmax(x, axis=0), x.prod()], [A]


def prog_products(lib, pt):
    x, y = pt.dmatrices("x", "y")
    v = pt.dvector("v")
    return [x, y, v], [pt.dot(x, y), x @ v, pt.outer(v, v), pt.dot(v, v)], [A, B, V]


def prog_indexing(lib, pt):
    x = pt.dmatrix("x")
    return [x], [x[1:3, ::-1], x[:, 0], x[-1], x[[0, 2, 2]], pt.set_subtensor(x[1:, 2:], 0.0), pt.inc_subtensor(x[0], 1.0)], [A]


def prog_integers(lib, pt):
    i = pt.imatrix("i")
    return [i], [i // 3, i % 3, i * 2 + 1, abs(i), i.sum(axis=1), (i > 0) & (i < 3), pt.maximum(i, 0)], [I]


def prog_shapes(lib, pt):
    x = pt.dmatrix("x")
    return [x], [x.reshape((5, 4)), x.T.flatten(), pt.concatenate([x, x], axis=1), pt.stack([x, x]), x.dimshuffle(1, "x", 0), pt.zeros_like(x) + 1], [A]


def prog_switch(lib, pt):
    x = pt.dmatrix("x")
    return [x], [pt.switch(x > 0, x, 0.1 * x), pt.clip(x, -0.5, 0.5), pt.where(pt.eq(x, x.max()), 1.0, 0.0)], [A]


def prog_grad(lib, pt):
    x = pt.dmatrix("x")
    w = pt.dvector("w")
    cost = pt.sum(pt.tanh(pt.dot(x, w)) ** 2) + (w**2).sum()
    return [x, w], [cost, lib.grad(cost, w), lib.grad(cost, x)], [A, V]


@pytest.mark.parametrize(
    "prog",
    [prog_elemwise, prog_reductions, prog_products, prog_indexing, prog_integers, prog_shapes, prog_switch, prog_grad],
)
def test_same_numbers_as_pytensor(prog):
    ins, outs, args = prog(pytensor, ptt)
    ref = pytensor.function(ins, outs, mode=pytensor.compile.mode.Mode(linker="py", optimizer="fast_run"))(*args)
    ins, outs, args = prog(oxtensor, oxt)
    got = oxtensor.function(ins, outs)(*args)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        r = np.asarray(r)
        assert g.shape == r.shape
        assert g.dtype == r.dtype, (g.dtype, r.dtype)
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)
