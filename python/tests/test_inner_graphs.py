"""OpFromGraph and ifelse from Python: PyTensor's documented examples, values and gradients
against the inlined graph and against NumPy, and laziness."""

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt
from oxtensor import OpFromGraph, config, function
from oxtensor.compile.builders import OpFromGraph as BuildersOpFromGraph
from oxtensor.ifelse import ifelse


def test_the_documented_opfromgraph_example():
    x, y, z = pt.scalars("xyz")
    e = x + y * z
    op = OpFromGraph([x, y, z], [e])
    e2 = op(x, y, z) + op(z, y, x)
    fn = function([x, y, z], [e2])
    assert fn(1.0, 2.0, 3.0)[0] == pytest.approx((1 + 2 * 3) + (3 + 2 * 1))
    assert BuildersOpFromGraph is OpFromGraph


def test_the_documented_example_with_a_shared_variable():
    x, y, z = pt.scalars("xyz")
    value = np.random.default_rng(0).random((2, 2)).astype(config.floatX)
    s = oxtensor.shared(value)
    e = x + y * z + s
    op = OpFromGraph([x, y, z], [e])
    e2 = op(x, y, z) + op(z, y, x)
    fn = function([x, y, z], [e2])
    np.testing.assert_allclose(fn(1.0, 2.0, 3.0)[0], 7 + 5 + 2 * value, rtol=1e-12)


def test_the_documented_example_with_gradient_overrides():
    x, y, z = pt.scalars("xyz")
    e = x + y * z

    def rescale_dy(inps, outputs, grads):
        x, y, z = inps
        (g,) = grads
        return z * 2

    with pytest.warns(FutureWarning):
        op = OpFromGraph([x, y, z], [e], lop_overrides=[None, rescale_dy, None])
    e2 = op(x, y, z)
    dx, dy, dz = oxtensor.grad(e2, [x, y, z])
    # The override's gradients do not read x: it is an unused input of this function.
    fn = function([x, y, z], [dx, dy, dz], on_unused_input="ignore")
    # dx and dz come from the graph (1 and y); dy is the override's 2z.
    assert [float(v) for v in fn(2.0, 3.0, 4.0)] == [1.0, 8.0, 3.0]


def test_a_call_equals_the_inlined_graph_with_gradients():
    x, w = pt.dvector("x"), pt.dmatrix("w")
    body = OpFromGraph([x, w], [pt.tanh(pt.dot(w, x)), pt.sum(w**2)], name="layer")
    inline = OpFromGraph([x, w], [pt.tanh(pt.dot(w, x)), pt.sum(w**2)], inline=True)
    assert body == OpFromGraph([x, w], [pt.tanh(pt.dot(w, x)), pt.sum(w**2)], name="layer")
    a, b = body(x, w)
    c, d = inline(x, w)
    cost1, cost2 = pt.sum(a) + b, pt.sum(c) + d
    outs = [cost1, *oxtensor.grad(cost1, [x, w])]
    want = [cost2, *oxtensor.grad(cost2, [x, w])]
    rng = np.random.default_rng(1)
    xv, wv = rng.normal(size=3), rng.normal(size=(4, 3))
    for mode in ["FAST_RUN", "FAST_COMPILE"]:
        got = function([x, w], outs, mode=mode)(xv, wv)
        ref = function([x, w], want, mode=mode)(xv, wv)
        for g, r in zip(got, ref):
            np.testing.assert_allclose(g, r, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(got[0], np.tanh(wv @ xv).sum() + (wv**2).sum(), rtol=1e-13)


def test_the_documented_ifelse_example():
    a, b = pt.scalars("a", "b")
    x, y = pt.matrices("x", "y")
    z_switch = pt.switch(pt.lt(a, b), pt.mean(x), pt.mean(y))
    z_lazy = ifelse(pt.lt(a, b), pt.mean(x), pt.mean(y))
    f_switch = function([a, b, x, y], z_switch)
    f_lazy = function([a, b, x, y], z_lazy)
    xv = np.ones((4, 4), dtype=config.floatX)
    yv = np.full((4, 4), 2.0, dtype=config.floatX)
    for av, bv in [(1.0, 2.0), (2.0, 1.0)]:
        assert f_lazy(av, bv, xv, yv) == f_switch(av, bv, xv, yv)


def test_ifelse_is_lazy_and_takes_lists():
    c = pt.lscalar("c")
    x = pt.dvector("x")
    then = [x.sum(), x * 2]
    otherwise = [x[10], pt.zeros((1_000_000_000_000,))[:3]]
    f = function([c, x], ifelse(c, then, otherwise))
    total, doubled = f(1, np.arange(3.0))
    assert total == 3.0
    np.testing.assert_array_equal(doubled, [0.0, 2.0, 4.0])
    with pytest.raises(IndexError):
        f(0, np.arange(3.0))


def test_ifelse_gradient_follows_the_taken_branch():
    c = pt.dscalar("c")
    x = pt.dvector("x")
    y = ifelse(c > 0, pt.sum(x**2), pt.sum(pt.sin(x)))
    g = oxtensor.grad(y, x)
    f = function([c, x], g)
    xv = np.array([0.5, -1.0])
    np.testing.assert_allclose(f(1.0, xv), 2 * xv)
    np.testing.assert_allclose(f(-1.0, xv), np.cos(xv))


def test_ifelse_branches_must_agree_in_dtype():
    c = pt.bscalar("c")
    with pytest.raises(TypeError, match="both branches must have the same dtype"):
        ifelse(c, pt.dvector("x"), pt.lvector("i"))


def test_pushforward_override_is_used_by_forward_mode():
    x, t = pt.dvector("x"), pt.dvector("t")
    # A deliberately different forward rule (3·x·t, not 2·x·t) shows which rule Rop takes.
    square = OpFromGraph([x], [x**2], pushforward=lambda inputs, tangents: [3 * inputs[0] * tangents[0]])
    u, v = pt.dvector("u"), pt.dvector("v")
    y = pt.sin(square(u))
    jvp = oxtensor.gradient.pushforward(y, u, v)
    g = oxtensor.grad(y.sum(), u)
    f = function([u, v], [jvp, g])
    uv, vv = np.array([0.5, -1.5, 2.0]), np.array([1.0, 0.25, -2.0])
    got_jvp, got_g = f(uv, vv)
    np.testing.assert_allclose(got_jvp, np.cos(uv**2) * 3 * uv * vv, rtol=1e-13)
    np.testing.assert_allclose(got_g, np.cos(uv**2) * 2 * uv, rtol=1e-13)


def test_rop_overrides_is_the_deprecated_spelling_and_lists_take_defaults():
    x, y = pt.dvectors("x", "y")
    with pytest.warns(FutureWarning):
        op = OpFromGraph([x, y], [x * y, x + y], rop_overrides=[None, lambda i, t: [2 * t[0]]])
    u, v, du, dv = pt.dvectors("u", "v", "du", "dv")
    prod, total = op(u, v)
    jvps = oxtensor.gradient.Rop([prod, total], [u, v], [du, dv])
    f = function([u, v, du, dv], jvps)
    a, b, da, db = (np.array([1.0, 2.0]), np.array([3.0, -1.0]), np.array([0.5, 0.5]), np.array([2.0, 1.0]))
    got = f(a, b, da, db)
    np.testing.assert_allclose(got[0], da * b + a * db, rtol=1e-14)  # from the graph
    np.testing.assert_allclose(got[1], 2 * da, rtol=1e-14)  # from the override


def test_pullback_and_lop_weight_the_outputs():
    x = pt.dvector("x")
    w = pt.dvector("w")
    gx = oxtensor.gradient.pullback(pt.exp(x), x, w)
    gl = oxtensor.gradient.Lop(pt.exp(x), x, w)
    f = function([x, w], [gx, gl])
    a, c = np.array([0.1, -2.0]), np.array([3.0, 0.5])
    for got in f(a, c):
        np.testing.assert_allclose(got, np.exp(a) * c, rtol=1e-14)
