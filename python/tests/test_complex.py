"""Complex dtypes (issue 15): complex64/complex128 values in and out, NumPy's promotion, the
arithmetic and functions against NumPy, reductions and matrix products, the ``c``/``z``
constructors, PyTensor's typing of ``real``/``imag``/``angle``/``complex``, and gradients in
PyTensor's convention (``dC/dx + 1j * dC/dy``) against finite differences and PyTensor."""

import pickle

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt
from conftest import assert_matches

MODES = ["FAST_RUN", "interp"]
CDTYPES = ["complex64", "complex128"]


def crandom(rng, shape, dtype, scale=2.0):
    re = rng.uniform(-scale, scale, size=shape)
    im = rng.uniform(-scale, scale, size=shape)
    return (re + 1j * im).astype(dtype)


def sym(a, name="z"):
    return pt.tensor(name, dtype=a.dtype.name, shape=tuple(1 if s == 1 else None for s in a.shape))


def tol(dtype):
    return dict(rtol=2e-5, atol=2e-6) if dtype in ("complex64", "float32") else dict(
        rtol=1e-12, atol=1e-13
    )


UNARY = {
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "arcsin": np.arcsin,
    "arccos": np.arccos,
    "arctan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "arcsinh": np.arcsinh,
    "arccosh": np.arccosh,
    "arctanh": np.arctanh,
    "reciprocal": np.reciprocal,
    "sqr": np.square,
    "neg": np.negative,
    "abs": np.abs,
    "sign": np.sign,
    "real": np.real,
    "imag": np.imag,
    "conj": np.conj,
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions_match_numpy(rng, mode, dtype, name):
    a = crandom(rng, (3, 7), dtype)
    z = sym(a)
    (got,) = oxtensor.function([z], [getattr(pt, name)(z)], mode=mode)(a)
    expected = UNARY[name](a)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert_matches(got, expected, **tol(dtype))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_angle_is_float64_as_in_pytensor(rng, mode, dtype):
    a = crandom(rng, (11,), dtype)
    z = sym(a)
    (got,) = oxtensor.function([z], [pt.angle(z)], mode=mode)(a)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.angle(a.astype("complex128")), **tol(dtype))
    import pytensor.tensor as ptt

    assert pt.angle(z).dtype == ptt.angle(ptt.tensor(dtype=dtype, shape=(None,))).dtype


BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "true_div": np.true_divide,
    "pow": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "lt": np.less,
    "ge": np.greater_equal,
    "eq": np.equal,
    "neq": np.not_equal,
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "da,db",
    [
        ("complex128", "complex128"),
        ("complex64", "complex64"),
        ("complex64", "float64"),
        ("float32", "complex64"),
        ("complex64", "int32"),
        ("int8", "complex64"),
    ],
)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ops_promote_and_compute_as_numpy(rng, mode, da, db, name):
    def value(dt, shape):
        if np.dtype(dt).kind == "c":
            return crandom(rng, shape, dt)
        if np.dtype(dt).kind == "i":
            return rng.integers(1, 4, size=shape).astype(dt)
        return rng.uniform(0.5, 2.0, size=shape).astype(dt)

    a, b = value(da, (4, 5)), value(db, (1, 5))
    if name in ("maximum", "minimum", "lt", "ge", "eq", "neq"):
        if a.dtype == b.dtype:
            b[0, :2] = a[0, :2]  # ties, compared lexicographically
    x, y = sym(a, "x"), sym(b, "y")
    (got,) = oxtensor.function([x, y], [getattr(pt, name)(x, y)], mode=mode)(a, b)
    expected = BINARY[name](a, b)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert_matches(got, expected, **tol(np.result_type(a, b).name))


@pytest.mark.parametrize("mode", MODES)
def test_integer_and_special_powers(mode):
    a = np.array([1.5 - 2j, 0j, -3 + 0.5j, 1e-3 + 1e3j])
    z = pt.zvector("z")
    outs = [z**2, z**3, z**-1, z**0, z**0.5]
    got = oxtensor.function([z], outs, mode=mode)(a)
    with np.errstate(all="ignore"):
        for g, e in zip(got, [a**2, a**3, a**-1.0, a**0, a**0.5]):
            np.testing.assert_allclose(g, e, rtol=1e-13, equal_nan=True)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_reductions_match_numpy(rng, mode, dtype):
    a = crandom(rng, (3, 4, 5), dtype, scale=1.0)
    z = sym(a)
    outs = [
        pt.sum(z),
        pt.sum(z, axis=1),
        pt.prod(z, axis=(0, 2)),
        pt.mean(z, axis=0),
        pt.max(z, axis=2),
        pt.min(z),
        pt.cumsum(z, axis=1),
    ]
    got = oxtensor.function([z], outs, mode=mode)(a)
    expected = [
        a.sum(),
        a.sum(axis=1),
        a.prod(axis=(0, 2)),
        a.mean(axis=0),
        a.max(axis=2),
        a.min(),
        np.cumsum(a, axis=1),
    ]
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        assert_matches(g, e, **tol(dtype))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_matrix_products(rng, mode, dtype):
    a = crandom(rng, (2, 6, 9), dtype, scale=1.0)
    b = crandom(rng, (9, 4), dtype, scale=1.0)
    v = crandom(rng, (9,), dtype, scale=1.0)
    x, y, w = sym(a, "a"), sym(b, "b"), sym(v, "v")
    got = oxtensor.function([x, y, w], [pt.matmul(x, y), pt.dot(y.T, w), x @ w], mode=mode)(
        a, b, v
    )
    for g, e in zip(got, [a @ b, b.T @ v, a @ v]):
        assert g.dtype == e.dtype
        assert_matches(g, e, rtol=1e-4 if dtype == "complex64" else 1e-12, atol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_constructors_from_parts(rng, mode):
    re = rng.uniform(-2, 2, size=(6,))
    im = rng.uniform(-2, 2, size=(6,)).astype("float32")
    x, y = pt.dvector("x"), pt.fvector("y")
    f32 = pt.fvector("f")
    outs = [pt.complex(x, y), pt.complex_from_polar(x, y), pt.complex(f32, y)]
    got = oxtensor.function([x, y, f32], outs, mode=mode)(re, im, im)
    assert got[0].dtype == np.complex128 and got[2].dtype == np.complex64
    np.testing.assert_allclose(got[0], re + 1j * im.astype(np.float64), rtol=1e-15)
    np.testing.assert_allclose(got[1], re * np.exp(1j * im.astype(np.float64)), rtol=1e-14)
    np.testing.assert_allclose(got[2], (im + 1j * im).astype(np.complex64), rtol=1e-7)


def test_dtypes_follow_pytensor():
    import pytensor.tensor as ptt

    cases = [
        lambda m: m.complex(m.fvector(), m.fvector()),
        lambda m: m.complex(m.dvector(), m.fvector()),
        lambda m: m.complex(m.bvector(), m.bvector()),
        lambda m: m.complex(m.ivector(), m.bvector()),
        lambda m: m.complex_from_polar(m.fvector(), m.fvector()),
        lambda m: m.real(m.cvector()),
        lambda m: m.imag(m.zvector()),
        lambda m: m.abs(m.cvector()),
        lambda m: m.real(m.dvector()),
        lambda m: m.cvector() + m.fvector(),
        lambda m: m.cvector() * m.dvector(),
        lambda m: m.cvector() + 1j,
        lambda m: m.exp(m.cvector()),
        lambda m: m.cvector() / m.ivector(),
        lambda m: m.conj(m.zmatrix()),
    ]
    for k, case in enumerate(cases):
        assert case(pt).dtype == case(ptt).dtype, k


def test_prefixed_constructors():
    assert pt.cscalar("a").dtype == "complex64" and pt.cscalar().ndim == 0
    assert pt.zvector().dtype == "complex128" and pt.zvector().ndim == 1
    assert pt.cmatrix().ndim == 2 and pt.zrow().broadcastable == (True, False)
    assert pt.ztensor3().ndim == 3 and pt.ctensor4().ndim == 4 and pt.ztensor5().ndim == 5
    assert pt.ctensor6().ndim == 6 and pt.ztensor7().dtype == "complex128"
    a, b = pt.zvectors("a", "b")
    assert a.name == "a" and b.dtype == "complex128"


def test_methods_and_python_complex_scalars(rng):
    a = crandom(rng, (5,), "complex128")
    z = pt.zvector("z")
    outs = [z.real, z.imag, z.conj(), z.conjugate(), z * 2j + (1 - 1j), abs(z)]
    got = oxtensor.function([z], outs)(a)
    expected = [a.real, a.imag, a.conj(), a.conj(), a * 2j + (1 - 1j), np.abs(a)]
    for g, e in zip(got, expected):
        assert_matches(g, e)
    x = pt.dvector("x")
    assert (x.real).dtype == "float64"
    np.testing.assert_array_equal(oxtensor.function([x], [x.imag])(np.ones(3))[0], np.zeros(3))


def test_arrays_cross_without_copies_and_lists_convert(rng):
    from oxtensor import _core

    a = crandom(rng, (4, 3), "complex64")
    address, borrowed = _core._wrapped_address(a)
    assert borrowed and address == a.__array_interface__["data"][0]
    z = pt.cmatrix("z")
    f = oxtensor.function([z], [z * 2])
    np.testing.assert_array_equal(f(a)[0], a * 2)
    # A list of Python complex numbers converts when nothing is lost.
    w = pt.zvector("w")
    np.testing.assert_array_equal(
        oxtensor.function([w], [w + 1])([1 + 2j, 3j])[0], np.array([2 + 2j, 1 + 3j])
    )
    # complex128 data into a complex64 input would lose precision.
    with pytest.raises(TypeError, match="complex64"):
        f(a.astype("complex128"))


@pytest.mark.parametrize("name", ["floor", "erf", "int_div", "arctan2", "mod"])
def test_ops_without_a_complex_meaning_raise(name):
    z = pt.zvector("z")
    op = getattr(pt, name)
    with pytest.raises((TypeError, ValueError), match="complex"):
        op(z, z) if name in ("int_div", "arctan2", "mod") else op(z)


def finite_difference_grad(cost, a, h=1e-6):
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        for unit in (1.0, 1j):
            up, down = a.copy(), a.copy()
            up[i] += h * unit
            down[i] -= h * unit
            g[i] += unit * (cost(up) - cost(down)) / (2 * h)
    return g


@pytest.mark.parametrize("mode", MODES)
def test_gradients_match_finite_differences(rng, mode):
    a = crandom(rng, (2, 3), "complex128", scale=1.0)
    m = crandom(rng, (3, 3), "complex128", scale=1.0)
    z = pt.zmatrix("z")
    w = pt.exp(z) * z / (z + 3) + pt.sqrt(z + 4) + pt.matmul(z, m)
    cost = pt.sum(pt.abs(w) ** 2) + pt.sum(pt.angle(z) * pt.imag(z)) + pt.sum(pt.real(z.conj() ** 3))
    (g,) = oxtensor.grad(cost, [z])
    assert g.dtype == "complex128"
    (got,) = oxtensor.function([z], [g], mode=mode)(a)

    def ref(v):
        wv = np.exp(v) * v / (v + 3) + np.sqrt(v + 4) + v @ m
        return np.sum(np.abs(wv) ** 2) + np.sum(np.angle(v) * v.imag) + np.sum((v.conj() ** 3).real)

    np.testing.assert_allclose(got, finite_difference_grad(ref, a), rtol=1e-6, atol=1e-6)


def test_gradients_of_parts_follow_pytensors_pullbacks(rng):
    """PyTensor's pullbacks of ``real``, ``imag`` and ``complex`` define the convention
    (``complex(g, 0)``, ``complex(0, g)``, ``(real(g), imag(g))``); its gradient driver then
    rejects complex gradients ("illegally returned an integer-valued variable"), so the values
    are checked against the formulas here rather than against PyTensor's output."""
    a = crandom(rng, (4,), "complex128")
    r = rng.uniform(0.5, 2, size=4)
    z, x = pt.zvector("z"), pt.dvector("x")
    cost = pt.sum(pt.real(z) ** 2 + 3 * pt.imag(z)) + pt.sum(pt.abs(pt.complex(x, x**2)))
    gz, gx = oxtensor.function([z, x], oxtensor.grad(cost, [z, x]))(a, r)
    np.testing.assert_allclose(gz, 2 * a.real + 3j, rtol=1e-15)
    modulus = np.abs(r + 1j * r**2)
    np.testing.assert_allclose(gx, (r + r**2 * 2 * r) / modulus, rtol=1e-14)


def test_complex_constants_survive_pickling(rng):
    a = crandom(rng, (3,), "complex64")
    z = pt.cvector("z")
    f = oxtensor.function([z], [z * pt.constant(np.complex64(1 - 2j)) + 0.5])
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(g(a)[0], f(a)[0])
    np.testing.assert_allclose(f(a)[0], a * (1 - 2j) + 0.5, rtol=1e-6)


def test_printing_shows_numpy_style_values():
    c = pt.constant(np.array([1 + 2j, -0.5j]))
    assert c.dtype == "complex128"
    out = oxtensor.function([], [c * 1])()[0]
    np.testing.assert_array_equal(out, np.array([1 + 2j, -0.5j]))


@pytest.mark.parametrize("engine", ["JAX", "PYTORCH"])
def test_other_engines_compute_complex_graphs(rng, engine):
    pytest.importorskip("jax" if engine == "JAX" else "torch")
    a = crandom(rng, (3, 4), "complex128", scale=1.0)
    r = rng.uniform(0.5, 2, size=(4,))
    z, x = pt.zmatrix("z"), pt.dvector("x")
    outs = [
        pt.exp(z) * pt.conj(z) + pt.complex(x, x),
        pt.abs(z),
        pt.angle(z),
        pt.real(z) - pt.imag(z),
        pt.complex_from_polar(x, x),
        pt.sum(z, axis=0),
        pt.matmul(z, z.T),
    ]
    want = oxtensor.function([z, x], outs)(a, r)
    got = oxtensor.function([z, x], outs, mode=engine)(a, r)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("mode", MODES)
def test_verify_grad_through_complex_intermediates(rng, mode):
    from oxtensor.gradient import verify_grad

    def fun(r, t):
        z = pt.complex_from_polar(r, t)
        w = pt.complex(r * t, pt.sin(r))
        return (
            pt.real(z * z + pt.exp(w))
            + pt.angle(w) * pt.imag(pt.conj(z) / w)
            + pt.abs(pt.sqrt(z + 3) * pt.log(w + 4))
        )

    r = rng.uniform(0.5, 1.5, size=(3, 2))
    t = rng.uniform(-1, 1, size=(3, 2))
    verify_grad(fun, [r, t], rng=rng, mode=mode)
