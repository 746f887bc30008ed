"""The special functions (``pt.<name>``, ``pt.special``) against scipy.special: random shapes,
float32/float64/int inputs, edge values, PyTensor's output dtypes, both backends, gradients
against finite differences; and the stable logsumexp/softmax/logaddexp against SciPy."""

import numpy as np
import pytest
import scipy.special as sp

import oxtensor
import oxtensor.tensor as pt
from conftest import fn

MODES = ["FAST_RUN", "FAST_COMPILE"]


def _log1mexp(x):
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x < -np.log(2), np.log1p(-np.exp(x)), np.log(-np.expm1(x)))


# (name, SciPy reference, domain per argument, integral arguments)
FUNCS = [
    ("gamma", sp.gamma, [(0.2, 8.0)], ()),
    ("psi", sp.psi, [(0.2, 10.0)], ()),
    ("digamma", sp.psi, [(0.2, 10.0)], ()),
    ("trigamma", lambda x: sp.polygamma(1, x), [(0.2, 10.0)], ()),
    ("polygamma", sp.polygamma, [(0, 3), (0.5, 6.0)], (0,)),
    ("gammainc", sp.gammainc, [(0.5, 6.0), (0.1, 8.0)], ()),
    ("gammaincc", sp.gammaincc, [(0.5, 6.0), (0.1, 8.0)], ()),
    ("gammaincinv", sp.gammaincinv, [(0.5, 6.0), (0.05, 0.95)], ()),
    ("gammainccinv", sp.gammainccinv, [(0.5, 6.0), (0.05, 0.95)], ()),
    ("beta", sp.beta, [(0.5, 5.0), (0.5, 5.0)], ()),
    ("betaln", sp.betaln, [(0.5, 20.0), (0.5, 20.0)], ()),
    ("betainc", sp.betainc, [(0.5, 5.0), (0.5, 5.0), (0.05, 0.95)], ()),
    ("betaincinv", sp.betaincinv, [(0.5, 5.0), (0.5, 5.0), (0.05, 0.95)], ()),
    ("erfinv", sp.erfinv, [(-0.95, 0.95)], ()),
    ("erfcinv", sp.erfcinv, [(0.05, 1.95)], ()),
    ("erfcx", sp.erfcx, [(-2.0, 10.0)], ()),
    ("i0", sp.i0, [(-5.0, 5.0)], ()),
    ("i1", sp.i1, [(-5.0, 5.0)], ()),
    ("iv", sp.iv, [(0.0, 3.0), (0.1, 6.0)], ()),
    ("ive", sp.ive, [(0.0, 3.0), (0.1, 6.0)], ()),
    ("j0", sp.j0, [(0.0, 2.0)], ()),
    ("j1", sp.j1, [(0.0, 2.0)], ()),
    ("jv", sp.jv, [(0.0, 3.0), (0.1, 2.0)], ()),
    ("kn", sp.kn, [(0, 4), (0.2, 6.0)], (0,)),
    ("kv", sp.kv, [(0.0, 3.0), (0.2, 6.0)], ()),
    ("kve", sp.kve, [(0.0, 3.0), (0.2, 6.0)], ()),
    ("owens_t", sp.owens_t, [(-3.0, 3.0), (-2.0, 2.0)], ()),
    ("hyp2f1", sp.hyp2f1, [(0.2, 1.5), (0.2, 1.5), (2.5, 4.0), (-0.5, 0.5)], ()),
    ("chi2sf", lambda x, k: sp.chdtrc(k, x), [(0.1, 8.0), (1.0, 6.0)], ()),
    ("log1mexp", _log1mexp, [(-10.0, -0.05)], ()),
    ("xlogy", sp.xlogy, [(-3.0, 3.0), (0.1, 5.0)], ()),
    ("xlog1py", sp.xlog1py, [(-3.0, 3.0), (-0.5, 5.0)], ()),
    ("logit", sp.logit, [(0.02, 0.98)], ()),
    ("factorial", lambda x: sp.factorial(x, exact=False), [(0.0, 12.0)], ()),
    ("poch", sp.poch, [(0.5, 5.0), (-0.4, 3.0)], ()),
]

# float64: oxtensor-special is within 3 ulp of mpmath; SciPy's error at these moderate points
# is below a few dozen ulp (see crates/oxtensor-special's docs), so 1e-12 relative covers
# both. float32: the result is the float64 value rounded once (so within 1 ulp of SciPy's
# float64 value at the float32 points, plus SciPy's own error).
RTOL = {"float64": 1e-12, "float32": 3e-7}


def _points(rng, dom, integral, shape, dtype):
    out = []
    for k, (lo, hi) in enumerate(dom):
        v = rng.uniform(lo, hi, size=shape)
        if k in integral:
            v = np.round(v)
        out.append(v.astype(dtype))
    return out


@pytest.mark.parametrize("name,ref,dom,integral", FUNCS, ids=[f[0] for f in FUNCS])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_against_scipy(name, ref, dom, integral, dtype, rng):
    f = getattr(pt, name)
    shapes = [(), (7,), (3, 4)]
    for shape in shapes:
        args = _points(rng, dom, integral, shape, dtype)
        xs = [pt.tensor(f"x{i}", dtype=dtype, shape=(None,) * len(shape)) for i in range(len(args))]
        out = f(*xs)
        assert out.dtype == dtype
        want = ref(*[a.astype(np.float64) for a in args])
        for mode in MODES:
            got = fn(xs, out, mode=mode)(*args)
            assert got.dtype == np.dtype(dtype)
            np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=1e-300, err_msg=f"{name} {mode}")


# PyTensor 3.0.7's output dtypes for integer inputs (upgrade_to_float); `logit` and `chi2sf`,
# which PyTensor builds from a true division, give float64 as integer division does.
@pytest.mark.parametrize("name,ref,dom,integral", FUNCS, ids=[f[0] for f in FUNCS])
def test_integer_inputs_upcast_as_pytensor(name, ref, dom, integral, rng):
    f = getattr(pt, name)
    n = len(dom)
    small = "float64" if name in ("logit", "chi2sf") else "float32"
    for idt, odt in [("int8", small), ("int16", small), ("int32", "float64"), ("int64", "float64")]:
        xs = [pt.tensor(f"x{i}", dtype=idt, shape=(None,)) for i in range(n)]
        assert f(*xs).dtype == odt, (name, idt)
    # Values at integer points equal the float64 function's.
    lo = [int(np.ceil(d[0])) for d in dom]
    hi = [max(int(np.floor(d[1])), lo[k]) for k, d in enumerate(dom)]
    args = [np.arange(lo[k], hi[k] + 1, dtype=np.int64)[:1].repeat(3) for k in range(n)]
    xs = [pt.tensor(f"x{i}", dtype="int64", shape=(None,)) for i in range(n)]
    got = fn(xs, f(*xs))(*args)
    want = ref(*[a.astype(np.float64) for a in args])
    np.testing.assert_allclose(got, want, rtol=1e-12)


EDGES = [
    ("gamma", [[0.0, -1.0, -2.5, np.inf, -np.inf, np.nan, 171.7, 1e-300]]),
    ("psi", [[0.0, -1.0, -0.5, np.inf, np.nan, 1e-300]]),
    ("erfinv", [[-1.0, 1.0, 0.0, 2.0, -2.0, np.nan]]),
    ("erfcinv", [[0.0, 2.0, 1.0, -1.0, 3.0, np.nan]]),
    ("erfcx", [[-30.0, 0.0, 1e10, np.inf, -np.inf, np.nan]]),
    ("gammainc", [[1.0, 1.0, 0.0, 2.0, -1.0, np.nan], [0.0, np.inf, 1.0, -1.0, 1.0, 1.0]]),
    ("gammaincc", [[1.0, 1.0, 0.0, 2.0, -1.0, np.nan], [0.0, np.inf, 1.0, -1.0, 1.0, 1.0]]),
    ("betainc", [[1.0, 2.0, 1.0, -1.0, 2.0, 2.0], [2.0, 2.0, 1.0, 1.0, 2.0, 2.0], [0.0, 1.0, 0.5, 0.5, 2.0, np.nan]]),
    ("xlogy", [[0.0, 0.0, 1.0, 2.0, np.nan, 0.0], [0.0, -1.0, 0.0, np.inf, 1.0, np.nan]]),
    ("xlog1py", [[0.0, 0.0, 1.0, 2.0, np.nan, 0.0], [-1.0, -2.0, -1.0, np.inf, 1.0, np.nan]]),
    ("logit", [[0.0, 1.0, 0.5, -0.1, 1.1, np.nan]]),
    ("i0", [[0.0, np.inf, -np.inf, np.nan, 700.0, -700.0]]),
    # (not 1e5: SciPy is 1e-12 off there, oxtensor-special matches mpmath.)
    ("j0", [[0.0, np.inf, -np.inf, np.nan, 30.0, -3.0]]),
    ("kv", [[0.0, 1.0, 0.5, 0.0, 1.0, 2.0], [0.0, 0.0, -1.0, np.inf, np.nan, 1e-300]]),
    ("factorial", [[-1.0, 0.0, 171.0, 172.0, np.nan, 0.5]]),
    ("log1mexp", [[0.0, -np.inf, 1.0, -1e-300, -800.0, np.nan]]),
]


@pytest.mark.parametrize("name,cols", EDGES, ids=[e[0] for e in EDGES])
def test_edge_values_match_scipy(name, cols):
    ref = {f[0]: f[1] for f in FUNCS}[name]
    args = [np.array(c, dtype=np.float64) for c in cols]
    xs = [pt.dvector(f"x{i}") for i in range(len(args))]
    with np.errstate(all="ignore"):
        want = ref(*args)
    for mode in MODES:
        got = fn(xs, getattr(pt, name)(*xs), mode=mode)(*args)
        np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=f"{name} {mode}")


# Which inputs have a gradient (the others are undefined, as in PyTensor or not implemented).
DIFFERENTIABLE = {
    "polygamma": [1],
    "gammaincinv": [1],
    "gammainccinv": [1],
    "betaincinv": [2],
    "iv": [1],
    "ive": [1],
    "jv": [1],
    "kn": [1],
    "kv": [1],
    "kve": [1],
    "chi2sf": [0],
}


@pytest.mark.parametrize("name,ref,dom,integral", FUNCS, ids=[f[0] for f in FUNCS])
def test_gradients_match_finite_differences(name, ref, dom, integral, rng):
    f = getattr(pt, name)
    n = len(dom)
    which = DIFFERENTIABLE.get(name, list(range(n)))
    args = _points(rng, dom, integral, (5,), "float64")
    # Keep away from the ends of each domain (central differences step outside otherwise).
    for k, (lo, hi) in enumerate(dom):
        if k not in integral:
            args[k] = lo + 0.1 * (hi - lo) + 0.8 * (args[k] - lo)
    xs = [pt.dvector(f"x{i}") for i in range(n)]
    out = f(*xs)
    for k in which:
        g = pt.grad(out.sum(), xs[k])
        got = fn(xs, g)(*args)
        h = 1e-6
        up = [a.copy() for a in args]
        dn = [a.copy() for a in args]
        up[k] = up[k] + h
        dn[k] = dn[k] - h
        want = (ref(*up) - ref(*dn)) / (2 * h)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7, err_msg=f"d{name}/d{k}")


def test_undefined_gradients_raise_naming_the_parameter():
    n, x = pt.dvector("n"), pt.dvector("x")
    with pytest.raises(Exception, match="polygamma"):
        pt.grad(pt.polygamma(n, x).sum(), n)
    a, b = pt.dvector("a"), pt.dvector("b")
    with pytest.raises(Exception, match="not implemented"):
        pt.grad(pt.betaincinv(a, b, x).sum(), a)


# Points on both sides of the series/continued-fraction split, tails included.
SHAPE_GRAD_POINTS = [(a, x) for a in (0.05, 0.4, 1.0, 3.5, 20.0, 200.0) for x in (0.01, 0.9, 2.4, 3.0, 15.0, 80.0, 260.0)]


@pytest.mark.parametrize("mode", MODES + ["JAX"])
def test_gammainc_gradients_wrt_the_shape_match_mpmath_and_pytensor(mode):
    mpmath = pytest.importorskip("mpmath")
    a_np = np.array([p[0] for p in SHAPE_GRAD_POINTS])
    x_np = np.array([p[1] for p in SHAPE_GRAD_POINTS])

    def reference(a, x):
        # ∂P/∂a = −∂Q/∂a: differentiate the smaller tail, so nothing cancels against 1.
        with mpmath.workdps(40):
            if x < a:
                return float(mpmath.diff(lambda t: mpmath.gammainc(t, 0, x, regularized=True), a))
            return -float(mpmath.diff(lambda t: mpmath.gammainc(t, x, mpmath.inf, regularized=True), a))

    want = np.array([reference(a, x) for a, x in SHAPE_GRAD_POINTS])
    a, x = pt.dvector("a"), pt.dvector("x")
    ga = pt.grad(pt.gammainc(a, x).sum(), a)
    gc = pt.grad(pt.gammaincc(a, x).sum(), a)
    got_p, got_q = oxtensor.function([a, x], [ga, gc], mode=mode)(a_np, x_np)
    # mpmath's derivative is exact to ~30 digits; ours to ~1e-13 of the largest term.
    np.testing.assert_allclose(got_p, want, rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(got_q, -want, rtol=1e-10, atol=1e-300)
    pytensor = pytest.importorskip("pytensor")
    ptt = pytest.importorskip("pytensor.tensor")
    pa, px = ptt.dvector("a"), ptt.dvector("x")
    theirs = pytensor.function([pa, px], pytensor.grad(ptt.gammainc(pa, px).sum(), pa))(a_np, x_np)
    np.testing.assert_allclose(got_p, theirs, rtol=1e-6, atol=1e-12)


def test_weak_python_numbers_and_gammau_gammal(rng):
    x = pt.fvector("x")
    assert pt.gammainc(2, x).dtype == "float32"
    assert pt.gammau(2.5, x).dtype == "float32"
    xv = rng.uniform(0.1, 5.0, size=6).astype(np.float32)
    got = fn([x], [pt.gammau(2.5, x), pt.gammal(2.5, x)])(xv)
    want_u = sp.gammaincc(2.5, xv.astype(np.float64)) * sp.gamma(2.5)
    want_l = sp.gammainc(2.5, xv.astype(np.float64)) * sp.gamma(2.5)
    np.testing.assert_allclose(got[0], want_u, rtol=1e-6)
    np.testing.assert_allclose(got[1], want_l, rtol=1e-6)


def test_special_module_names():
    for name in ["softmax", "log_softmax", "logsumexp", "betaln", "poch", "factorial", "logit",
                 "expit", "erfcx", "beta", "gamma", "gammaln", "xlogy", "xlog1py"]:
        assert callable(getattr(pt.special, name)), name
    for name in ["gamma", "psi", "digamma", "tri_gamma", "polygamma", "gammaincinv", "i0", "kve",
                 "owens_t", "hyp2f1", "log1mexp", "logaddexp", "logsumexp", "gammau", "gammal"]:
        assert callable(getattr(pt, name)), name
        assert callable(getattr(pt.math, name)), name


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_logsumexp_is_stable_and_matches_scipy(axis, keepdims, dtype, rng):
    x = pt.matrix("x", dtype=dtype)
    a = (rng.normal(size=(3, 4)) * 300).astype(dtype)
    a[1, :] = -np.inf
    for mode in MODES:
        got = fn([x], pt.logsumexp(x, axis=axis, keepdims=keepdims), mode=mode)(a)
        with np.errstate(all="ignore"):
            want = sp.logsumexp(a.astype(np.float64), axis=axis, keepdims=keepdims)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-13)


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_softmax_and_log_softmax_match_scipy(axis, rng):
    x = pt.dmatrix("x")
    a = rng.normal(size=(3, 5)) * 200
    for mode in MODES:
        got = fn([x], [pt.special.softmax(x, axis=axis), pt.special.log_softmax(x, axis=axis)], mode=mode)(a)
        np.testing.assert_allclose(got[0], sp.softmax(a, axis=axis), rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(got[1], sp.log_softmax(a, axis=axis), rtol=1e-12)


def test_logaddexp_matches_numpy(rng):
    a, b = pt.dvector("a"), pt.dvector("b")
    av = np.concatenate([rng.normal(size=5) * 800, [np.inf, -np.inf, np.inf, np.nan]])
    bv = np.concatenate([rng.normal(size=5) * 800, [np.inf, -np.inf, -np.inf, 1.0]])
    for mode in MODES:
        got = fn([a, b], pt.logaddexp(a, b), mode=mode)(av, bv)
        np.testing.assert_allclose(got, np.logaddexp(av, bv), rtol=1e-14)
    f32 = pt.fvector("f")
    assert pt.logaddexp(f32, 1.0).dtype == "float32"
