"""The stabilizing rewrites at inputs where the naive formula overflows, underflows or cancels:
the compiled naive expression must be finite and agree with a 60-digit mpmath reference
computed here (rounded to float64)."""

import mpmath
import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt

mpmath.mp.dps = 60
M = mpmath.mpf


def close(got, want, what, atol=0.0):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert np.all(np.isfinite(got)), f"{what}: {got}"
    # A few ulp (plus `atol`), or both below the smallest normal (where the reference itself
    # underflows).
    tiny = np.abs(want) < np.finfo(np.float64).tiny
    ok = np.where(tiny, np.abs(got) < 1e-300, np.abs(got - want) <= 4e-15 * np.abs(want) + atol)
    assert ok.all(), f"{what}: got {got}, want {want}"


def ref(f, xs):
    return np.array([float(f(M(float(x)))) for x in xs])


EXTREMES = np.array([-1000.0, -40.0, -1e-300, 1e-300, 1e-20, 40.0, 1000.0])


def sigmoid(t):
    return 1 / (1 + mpmath.exp(-t))


UNARY = [
    ("log(1+x)", lambda x: pt.log(1 + x), lambda t: mpmath.log1p(t), EXTREMES[2:]),
    ("exp(x)-1", lambda x: pt.exp(x) - 1, lambda t: mpmath.expm1(t), EXTREMES[:-1]),
    ("log(1+exp(x))", lambda x: pt.log(1 + pt.exp(x)), lambda t: mpmath.log1p(mpmath.exp(t)), EXTREMES),
    ("log(sigmoid(x))", lambda x: pt.log(pt.sigmoid(x)), lambda t: mpmath.log(sigmoid(t)), EXTREMES),
    ("log(1-sigmoid(x))", lambda x: pt.log(1 - pt.sigmoid(x)), lambda t: mpmath.log(1 - sigmoid(t)), EXTREMES),
    ("1-sigmoid(x)", lambda x: 1 - pt.sigmoid(x), lambda t: 1 - sigmoid(t), EXTREMES),
    ("log(1-exp(x))", lambda x: pt.log(1 - pt.exp(x)), lambda t: mpmath.log(-mpmath.expm1(t)),
     np.array([-1000.0, -40.0, -1.0, -1e-20, -1e-300])),
]


@pytest.mark.parametrize("name,build,exact,xs", UNARY, ids=[u[0] for u in UNARY])
def test_unary_stabilizations_at_extremes(name, build, exact, xs):
    x = pt.dvector("x")
    f = oxtensor.function([x], build(x))
    close(f(xs), ref(exact, xs), name)


ROWS = np.array([[800.0, 799.0, 0.0], [1000.0, 1000.0, -1000.0], [-800.0, -801.0, -1000.0]])


def row_refs(row):
    row = [M(float(v)) for v in row]
    lse = mpmath.log(mpmath.fsum(mpmath.exp(v) for v in row))
    return lse, [mpmath.exp(v - lse) for v in row], [v - lse for v in row]


def test_logsumexp_softmax_and_log_softmax_of_huge_rows():
    x = pt.dmatrix("x")
    e = pt.exp(x)
    s = e.sum(axis=1, keepdims=True)
    f = oxtensor.function([x], [pt.log(pt.exp(x).sum(axis=1)), e / s, x - pt.log(s)])
    lse, sm, lsm = f(ROWS)
    refs = [row_refs(r) for r in ROWS]
    close(lse, [float(r[0]) for r in refs], "log(sum(exp(x)))")
    close(sm, [[float(v) for v in r[1]] for r in refs], "softmax")
    # x - (max + log(sum(exp(x - max)))) subtracts numbers near max|x|: a few of their ulp.
    close(lsm, [[float(v) for v in r[2]] for r in refs], "log_softmax", atol=4 * np.spacing(1000.0))


def test_logaddexp_of_huge_and_tiny_exponents():
    a, b = pt.dvectors("a", "b")
    f = oxtensor.function([a, b], pt.log(pt.exp(a) + pt.exp(b)))
    av = np.array([1000.0, 800.0, -1000.0, 0.0])
    bv = np.array([999.0, -800.0, -1001.0, 1e-300])
    want = [float(mpmath.log(mpmath.exp(M(float(p))) + mpmath.exp(M(float(q))))) for p, q in zip(av, bv)]
    close(f(av, bv), want, "log(exp(a)+exp(b))")
