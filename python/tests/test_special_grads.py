"""Gradients of ``betainc`` with respect to a and b and of ``hyp2f1`` with respect to a, b and c
(``oxtensor.grad`` through the ``betainc_da``/``betainc_db``/``hyp2f1_da``/``hyp2f1_db``/
``hyp2f1_dc`` ops), in both backends: against mpmath (the committed fixtures of
crates/oxtensor-special/tests/fixtures/make_grad_fixtures.py) and against PyTensor's own
gradient (``pytensor.grad``) where PyTensor's algorithm converges."""

import math
import os

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt

MODES = ["FAST_RUN", "FAST_COMPILE"]
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "crates", "oxtensor-special",
                        "tests", "fixtures")


def _fixture(name):
    rows = np.loadtxt(os.path.join(FIXTURES, name + ".tsv"), comments="#", ndmin=2)
    return rows[:, :-2], rows[:, -2]


def _grads(kind, args, mode):
    xs = [pt.dvector(f"x{i}") for i in range(args.shape[1])]
    out = pt.betainc(*xs) if kind == "betainc" else pt.hyp2f1(*xs)
    n_par = 2 if kind == "betainc" else 3
    grads = oxtensor.grad(out.sum(), xs[:n_par])
    fn = oxtensor.function(xs, grads, mode=mode)
    return fn(*[np.ascontiguousarray(args[:, i]) for i in range(args.shape[1])])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind, names", [("betainc", ["betainc_da", "betainc_db"]),
                                         ("hyp2f1", ["hyp2f1_da", "hyp2f1_db", "hyp2f1_dc"])])
def test_parameter_gradients_match_mpmath(kind, names, mode):
    args, _ = _fixture(names[0])
    got = _grads(kind, args, mode)
    for name, g in zip(names, got):
        fargs, want = _fixture(name)
        np.testing.assert_array_equal(fargs, args)
        finite = np.isfinite(want)
        # Where the reference is undefined (x = 1 with c <= a + b) we give NaN.
        assert np.isnan(g[~finite]).all(), name
        np.testing.assert_allclose(g[finite], want[finite], rtol=1e-10, atol=0, err_msg=name)


def _pytensor_grads(kind, args):
    pytensor = pytest.importorskip("pytensor")
    ptt = pytest.importorskip("pytensor.tensor")
    xs = [ptt.dvector(f"x{i}") for i in range(args.shape[1])]
    out = ptt.betainc(*xs) if kind == "betainc" else ptt.hyp2f1(*xs)
    n_par = 2 if kind == "betainc" else 3
    fn = pytensor.function(xs, pytensor.grad(out.sum(), xs[:n_par]))
    return fn(*[args[:, i] for i in range(args.shape[1])])


def test_betainc_gradients_match_pytensor():
    rng = np.random.default_rng(15)
    n = 200
    args = np.stack([rng.uniform(0.3, 30.0, n), rng.uniform(0.3, 30.0, n),
                     rng.uniform(0.01, 0.99, n)], axis=1)
    theirs = _pytensor_grads("betainc", args)
    for mode in MODES:
        ours = _grads("betainc", args, mode)
        for k in range(2):
            # PyTensor stops its continued fraction at a 1e-12 relative change.
            np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-9, atol=1e-300, err_msg=f"{k}")


def test_hyp2f1_gradients_match_pytensor_where_its_series_converges():
    rng = np.random.default_rng(16)
    n = 200
    args = np.stack([rng.uniform(-3.0, 3.0, n), rng.uniform(-3.0, 3.0, n),
                     rng.uniform(0.5, 6.0, n), rng.uniform(-0.9, 0.9, n)], axis=1)
    theirs = _pytensor_grads("hyp2f1", args)
    for mode in MODES:
        ours = _grads("hyp2f1", args, mode)
        for k in range(3):
            np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-9, atol=1e-12, err_msg=f"{k}")


def test_hyp2f1_gradients_beyond_pytensors_region():
    # x < -1: PyTensor's series diverges and it returns NaN; Pfaff's transformation gives the
    # derivative here (checked against mpmath).
    mpmath = pytest.importorskip("mpmath")
    pts = np.array([[0.7, 1.3, 2.9, -3.0], [-1.5, 2.25, 4.1, -40.0]])
    ours = _grads("hyp2f1", pts, "FAST_RUN")
    theirs = _pytensor_grads("hyp2f1", pts)
    with mpmath.workdps(40):
        for i, p in enumerate(pts):
            for k in range(3):
                def f(t, k=k, p=p):
                    q = [mpmath.mpf(v) for v in p]
                    q[k] = t
                    return mpmath.hyp2f1(*q)

                want = float(mpmath.diff(f, mpmath.mpf(p[k])))
                assert math.isclose(ours[k][i], want, rel_tol=1e-10), (p, k, ours[k][i], want)
                assert np.isnan(theirs[k][i])


def test_betainc_shape_gradients_in_float32_and_outside_the_domain():
    a, b, x = pt.fvector("a"), pt.fvector("b"), pt.fvector("x")
    ga, gb = oxtensor.grad(pt.betainc(a, b, x).sum(), [a, b])
    assert ga.dtype == "float32" and gb.dtype == "float32"
    fn = oxtensor.function([a, b, x], [ga, gb])
    av = np.array([2.0, 2.0, -1.0, 2.0], dtype=np.float32)
    bv = np.array([3.0, 3.0, 3.0, 3.0], dtype=np.float32)
    xv = np.array([0.4, 0.0, 0.5, 1.5], dtype=np.float32)
    got_a, got_b = fn(av, bv, xv)
    # ∂I/∂a at (2, 3, 0.4) = −0.240869376087556... (mpmath); 0 at x = 0; NaN outside.
    np.testing.assert_allclose(got_a[:2], [-0.24086937608755657, 0.0], rtol=1e-6)
    np.testing.assert_allclose(got_b[:2], [0.15634433641359878, 0.0], rtol=1e-6)
    assert np.isnan(got_a[2:]).all() and np.isnan(got_b[2:]).all()


def test_jax_refuses_the_derivative_ops_naming_them():
    pytest.importorskip("jax")
    a, b, c, x = (pt.dvector(n) for n in "abcx")
    ga = oxtensor.grad(pt.betainc(a, b, x).sum(), a)
    with pytest.raises(NotImplementedError, match=r"no JAX translation for op Elemwise\{BetaIncDa\}"):
        oxtensor.function([a, b, x], ga, mode="JAX")
    gc = oxtensor.grad(pt.hyp2f1(a, b, c, x).sum(), c)
    with pytest.raises(NotImplementedError, match=r"no JAX translation for op Elemwise\{Hyp2F1Dc\}"):
        oxtensor.function([a, b, c, x], gc, mode="JAX")
