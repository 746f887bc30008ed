"""``oxtensor.grad`` (and ``jacobian``/``hessian``) against finite differences and closed forms."""

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt
from oxtensor import function
from oxtensor.gradient import hessian, jacobian


def numeric_grad(f, a, eps=1e-6):
    g = np.zeros_like(a)
    it = np.nditer(a, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        ap, am = a.copy(), a.copy()
        ap[i] += eps
        am[i] -= eps
        g[i] = (f(ap) - f(am)) / (2 * eps)
    return g


@pytest.mark.parametrize(
    "build",
    [
        lambda x: (x**2).sum(),
        lambda x: pt.exp(x).mean(),
        lambda x: pt.log1p(pt.sigmoid(x)).sum(),
        lambda x: (pt.tanh(x) * pt.sin(x)).prod(),
        lambda x: pt.max(x * 3) + pt.min(x),
        lambda x: (x[1:] - x[:-1]).std(),
        lambda x: pt.dot(x, x[::-1]) / pt.sum(pt.abs(x) + 1),
        lambda x: pt.switch(x > 0, x, 0.1 * x).sum(),
        lambda x: pt.concatenate([x, x[:2] * 2]).var(),
    ],
)
def test_grad_matches_finite_differences(build, rng):
    a = rng.random(5) + 0.1
    x = pt.dvector("x")
    cost = build(x)
    f = function([x], cost)
    g = function([x], oxtensor.grad(cost, x))
    np.testing.assert_allclose(g(a), numeric_grad(lambda v: float(f(v)), a), rtol=1e-5, atol=1e-7)


def test_grad_of_several_variables_and_names():
    x = pt.dmatrix("x")
    w = oxtensor.shared(np.ones(3), name="w")
    cost = pt.dot(x, w).sum()
    cost.name = "cost"
    gx, gw = pt.grad(cost, [x, w])
    assert gw.name == "(dcost/dw)"
    a = np.arange(6.0).reshape(2, 3)
    ox, ow = function([x], [gx, gw])(a)
    np.testing.assert_allclose(ox, np.ones((2, 3)))
    np.testing.assert_allclose(ow, a.sum(axis=0))


def test_grad_errors():
    x, y = pt.dvectors("x", "y")
    with pytest.raises(TypeError, match="scalar"):
        oxtensor.grad(x * 2, x)
    with pytest.raises(ValueError, match="not part of the computational graph"):
        oxtensor.grad(x.sum(), y)
    g = oxtensor.grad(x.sum(), y, disconnected_inputs="ignore")
    np.testing.assert_array_equal(function([y], g)(np.ones(2)), np.zeros(2))
    assert oxtensor.grad(x.sum(), [y], disconnected_inputs="ignore", return_disconnected="none") == [None]


def test_consider_constant_and_known_grads():
    x = pt.dscalar("x")
    y = x * x
    g = oxtensor.grad(y * x, x, consider_constant=[y])
    assert float(function([x], g)(3.0)) == 9.0
    z = pt.dscalar("z")
    k = oxtensor.grad(None, x, known_grads={y: z})
    assert float(function([x, z], k)(3.0, 2.0)) == 12.0


def test_jacobian_and_hessian_with_static_shapes():
    x = pt.tensor("x", dtype="float64", shape=(3,))
    J = jacobian(x**2, x)
    H = hessian((x**3).sum(), x)
    a = np.array([1.0, 2.0, 3.0])
    j, h = function([x], [J, H])(a)
    np.testing.assert_allclose(j, np.diag(2 * a))
    np.testing.assert_allclose(h, np.diag(6 * a))
