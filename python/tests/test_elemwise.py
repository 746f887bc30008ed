"""Every elementwise function against NumPy: dtypes, broadcasting, special values."""

import numpy as np
import pytest
import scipy.special as sp

import oxtensor.tensor as pt
from conftest import assert_matches, fn, random_array, sym_like

FLOATS = ["float64", "float32"]

# (pt function, NumPy reference, domain) — domain maps random values into the valid range.
UNARY = [
    (pt.abs, np.abs, None),
    (pt.neg, np.negative, None),
    (pt.sgn, np.sign, None),
    (pt.sign, np.sign, None),
    (pt.sqr, np.square, None),
    (pt.square, np.square, None),
    (pt.sqrt, np.sqrt, np.abs),
    (pt.reciprocal, np.reciprocal, lambda a: np.abs(a) + 0.5),
    (pt.exp, np.exp, None),
    (pt.exp2, np.exp2, None),
    (pt.expm1, np.expm1, None),
    (pt.log, np.log, lambda a: np.abs(a) + 0.1),
    (pt.log2, np.log2, lambda a: np.abs(a) + 0.1),
    (pt.log10, np.log10, lambda a: np.abs(a) + 0.1),
    (pt.log1p, np.log1p, np.abs),
    (pt.sin, np.sin, None),
    (pt.cos, np.cos, None),
    (pt.tan, np.tan, lambda a: a / 3),
    (pt.arcsin, np.arcsin, lambda a: a / 3.5),
    (pt.arccos, np.arccos, lambda a: a / 3.5),
    (pt.arctan, np.arctan, None),
    (pt.sinh, np.sinh, None),
    (pt.cosh, np.cosh, None),
    (pt.tanh, np.tanh, None),
    (pt.arcsinh, np.arcsinh, None),
    (pt.arccosh, np.arccosh, lambda a: np.abs(a) + 1),
    (pt.arctanh, np.arctanh, lambda a: a / 3.5),
    (pt.sigmoid, sp.expit, None),
    (pt.softplus, lambda a: np.logaddexp(0, a), None),
    (pt.erf, sp.erf, None),
    (pt.erfc, sp.erfc, None),
    (pt.gammaln, sp.gammaln, lambda a: np.abs(a) + 0.1),
    (pt.floor, np.floor, None),
    (pt.ceil, np.ceil, None),
    (pt.trunc, np.trunc, None),
    (pt.round_half_to_even, np.round, None),
]

BINARY = [
    (pt.add, np.add, None),
    (pt.sub, np.subtract, None),
    (pt.mul, np.multiply, None),
    (pt.true_div, np.true_divide, lambda b: np.abs(b) + 0.5),
    (pt.maximum, np.maximum, None),
    (pt.minimum, np.minimum, None),
    (pt.arctan2, np.arctan2, None),
    (pt.pow, np.power, None),
    (pt.lt, np.less, None),
    (pt.gt, np.greater, None),
    (pt.le, np.less_equal, None),
    (pt.ge, np.greater_equal, None),
    (pt.eq, np.equal, None),
    (pt.neq, np.not_equal, None),
]


def _rtol(dtype):
    return 2e-5 if dtype == "float32" else 1e-10


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("f,ref,domain", UNARY, ids=[u[0].__name__ for u in UNARY])
def test_unary_floats(f, ref, domain, dtype, rng):
    for shape in [(), (7,), (3, 4), (2, 0, 3)]:
        a = random_array(rng, shape, dtype)
        if domain is not None:
            a = domain(a).astype(dtype)
        x = sym_like(a)
        got = fn([x], f(x))(a)
        assert_matches(got, ref(a).astype(got.dtype), rtol=_rtol(dtype), atol=1e-6 if dtype == "float32" else 1e-12)
        assert got.dtype == a.dtype


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
def test_unary_ints(dtype, rng):
    a = random_array(rng, (5, 3), dtype)
    x = sym_like(a)
    # Arithmetic ops keep the integer type; float functions upgrade like PyTensor.
    assert_matches(fn([x], pt.abs(x))(a), np.abs(a))
    assert_matches(fn([x], pt.sqr(x))(a), np.square(a))
    assert_matches(fn([x], -x)(a), -a)
    out = fn([x], pt.exp(x))(np.clip(a, 0, 5).astype(dtype))
    expected_dtype = "float32" if np.dtype(dtype).itemsize <= 2 else "float64"
    assert out.dtype == expected_dtype
    np.testing.assert_allclose(out, np.exp(np.clip(a, 0, 5).astype("float64")), rtol=1e-6)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("f,ref,domain", BINARY, ids=[b[0].__name__ for b in BINARY])
def test_binary_broadcasting(f, ref, domain, dtype, rng):
    for sa, sb in [((5,), (5,)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((), (3,)), ((0, 2), (1, 2))]:
        a = random_array(rng, sa, dtype)
        b = random_array(rng, sb, dtype)
        if domain is not None:
            b = domain(b).astype(dtype)
        if f is pt.pow:
            a = np.abs(a).astype(dtype)
        # Static extent 1 broadcasts (PyTensor's rule): declare it in the input types.
        x = pt.tensor("a", dtype=dtype, shape=tuple(1 if d == 1 else None for d in sa))
        y = pt.tensor("b", dtype=dtype, shape=tuple(1 if d == 1 else None for d in sb))
        got = fn([x, y], f(x, y))(a, b)
        assert_matches(got, ref(a, b), rtol=_rtol(dtype), atol=1e-6 if dtype == "float32" else 0)


def test_integer_division_and_modulo_follow_python(rng):
    a = np.array([7, -7, 7, -7, 0, 5], dtype="int64")
    b = np.array([2, 2, -2, -2, 3, 1], dtype="int64")
    x, y = pt.lvector("x"), pt.lvector("y")
    f = fn([x, y], [x // y, x % y, pt.int_div(x, y), pt.mod(x, y)])
    q, r, q2, r2 = f(a, b)
    assert_matches(q, a // b)
    assert_matches(r, a % b)
    assert_matches(q2, a // b)
    assert_matches(r2, a % b)
    fa = np.array([7.5, -7.5, 2.0], dtype="float64")
    fb = np.array([2.0, 2.0, -0.75])
    u, v = pt.dvectors("u", "v")
    q, r = fn([u, v], [u // v, u % v])(fa, fb)
    assert_matches(q, fa // fb)
    assert_matches(r, fa % fb)


def test_true_div_of_ints_is_float64():
    x, y = pt.ivector("x"), pt.ivector("y")
    out = fn([x, y], x / y)(np.array([1, 3], "int32"), np.array([2, 4], "int32"))
    assert_matches(out, np.array([0.5, 0.75]))


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "uint16", "int64"])
def test_bitwise(dtype, rng):
    a = random_array(rng, (6,), dtype)
    b = random_array(rng, (6,), dtype)
    x, y = sym_like(a, "a"), sym_like(b, "b")
    f = fn([x, y], [x & y, x | y, x ^ y, ~x, pt.and_(x, y), pt.or_(x, y), pt.xor(x, y), pt.invert(x)])
    exp = [a & b, a | b, a ^ b, ~a, a & b, a | b, a ^ b, ~a]
    for g, e in zip(f(a, b), exp):
        assert_matches(g, e)


def test_switch_where_clip(rng):
    a = random_array(rng, (4, 5), "float64")
    x = pt.dmatrix("x")
    f = fn(
        [x],
        [pt.switch(x > 0, x, 0), pt.where(x < 0, -x, x), pt.clip(x, -1, 1), x.clip(-0.5, 2.0)],
    )
    s, w, c, c2 = f(a)
    assert_matches(s, np.where(a > 0, a, 0.0))
    assert_matches(w, np.abs(a))
    assert_matches(c, np.clip(a, -1, 1))
    assert_matches(c2, np.clip(a, -0.5, 2.0))


def test_nan_and_inf_propagate():
    a = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0])
    x = pt.dvector("x")
    f = fn(
        [x],
        [pt.isnan(x), pt.isinf(x), pt.exp(x), pt.maximum(x, 0.5), pt.minimum(x, 0.5), pt.sign(x), pt.max(x), pt.sum(x)],
    )
    isn, isi, e, mx, mn, sg, m, s = f(a)
    assert_matches(isn, np.isnan(a))
    assert_matches(isi, np.isinf(a))
    assert_matches(e, np.exp(a))
    assert_matches(mx, np.maximum(a, 0.5))
    assert_matches(mn, np.minimum(a, 0.5))
    assert_matches(sg, np.sign(a))
    assert np.isnan(m) and np.isnan(s)


def test_stable_sigmoid_and_softplus_at_extremes():
    a = np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0])
    x = pt.dvector("x")
    sig, spl = fn([x], [pt.sigmoid(x), pt.softplus(x)])(a)
    assert_matches(sig, sp.expit(a))
    assert_matches(spl, np.logaddexp(0, a))


def test_isclose_allclose():
    a = np.array([1.0, 2.0, np.nan])
    b = np.array([1.0 + 1e-9, 2.1, np.nan])
    x, y = pt.dvectors("x", "y")
    c, c2, ac = fn([x, y], [pt.isclose(x, y), pt.isclose(x, y, equal_nan=True), pt.allclose(x[:1], y[:1])])(a, b)
    assert_matches(c, np.isclose(a, b))
    assert_matches(c2, np.isclose(a, b, equal_nan=True))
    assert bool(ac)


def test_round_modes():
    a = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6])
    x = pt.dvector("x")
    even, away, meth = fn([x], [pt.round(x), pt.round(x, mode="half_away_from_zero"), x.round()])(a)
    assert_matches(even, np.round(a))
    assert_matches(away, np.sign(a) * np.floor(np.abs(a) + 0.5))
    assert_matches(meth, np.round(a))
    with pytest.raises(ValueError):
        pt.round(x, mode="banker")


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "uint8"])
def test_cast(dtype, rng):
    a = random_array(rng, (3, 3), "float64")
    if dtype.startswith("u"):
        a = np.abs(a)  # NumPy leaves negative floats to unsigned unspecified
    x = pt.dmatrix("x")
    got = fn([x], [pt.cast(x, dtype), x.astype(dtype)])(a)
    for g in got:
        assert_matches(g, a.astype(dtype))
