"""Extra ops (issue 15): ``pt.extra_ops``, ``pt.sort``, the compositions added to ``pt.basic``
and ``pt.math``, and ``pytensor.gradient``'s helpers, against NumPy over random shapes and
dtypes in the interpreter and the native backend."""

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt
from oxtensor.gradient import verify_grad
from conftest import assert_matches, random_array

MODES = ["FAST_RUN", "interp"]
DTYPES = ["float64", "float32", "int64", "int32", "uint8"]


def run(inputs, outputs, args, mode):
    return oxtensor.function(inputs, outputs, mode=mode)(*args)


def sym(a, name="x"):
    return pt.tensor(name, dtype=a.dtype.name, shape=(None,) * a.ndim)


def shapes(rng, n=4, max_ndim=3):
    for _ in range(n):
        nd = int(rng.integers(1, max_ndim + 1))
        yield tuple(int(s) for s in rng.integers(1, 5, size=nd))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cumsum_cumprod(rng, mode, dtype):
    for shape in shapes(rng):
        a = random_array(rng, shape, dtype)
        if dtype == "uint8":
            a = a % 3
        x = sym(a)
        axis = int(rng.integers(-len(shape), len(shape)))
        outs = run([x], [pt.cumsum(x, axis), pt.cumprod(x, axis), pt.cumsum(x)], [a], mode)
        # PyTensor keeps the input dtype (NumPy widens small integers).
        assert_matches(outs[0], np.cumsum(a, axis).astype(a.dtype))
        assert_matches(outs[1], np.cumprod(a, axis).astype(a.dtype), rtol=1e-4 if dtype == "float32" else None)
        assert_matches(outs[2], np.cumsum(a).astype(a.dtype))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_argsort_with_nans_and_ties(rng, mode, dtype):
    for shape in shapes(rng):
        a = random_array(rng, shape, dtype)
        if dtype.startswith("float"):
            a = np.round(a)
            a.flat[:: 5] = np.nan
        x = sym(a)
        for axis in [-1, 0, None]:
            s, i = run([x], [pt.sort(x, axis), pt.argsort(x, axis)], [a], mode)
            assert_matches(s, np.sort(a, axis, kind="stable"))
            assert_matches(i, np.argsort(a, axis, kind="stable"))


@pytest.mark.parametrize("mode", MODES)
def test_searchsorted(rng, mode):
    for n in [0, 1, 5, 9]:
        a = np.sort(np.round(rng.random(n) * 6))
        v = np.round(rng.random((2, 3)) * 7) - 0.5 * rng.integers(0, 2, (2, 3))
        xa, xv = pt.dvector("a"), pt.dmatrix("v")
        for side in ["left", "right"]:
            (got,) = run([xa, xv], [pt.searchsorted(xa, xv, side=side)], [a, v], mode)
            assert_matches(got, np.searchsorted(a, v, side=side))
    a = rng.random(6)
    sorter = np.argsort(a)
    xa, xs, xv = pt.dvector("a"), pt.lvector("s"), pt.dvector("v")
    (got,) = run([xa, xs, xv], [pt.searchsorted(xa, xv, sorter=xs)], [a, sorter, a], mode)
    assert_matches(got, np.searchsorted(a, a, sorter=sorter))
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        pt.searchsorted(xa, xv, side="middle")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float64", "int32", "uint8"])
def test_repeat(rng, mode, dtype):
    for shape in shapes(rng):
        a = random_array(rng, shape, dtype)
        x = sym(a)
        axis = int(rng.integers(0, len(shape)))
        counts = rng.integers(0, 3, size=shape[axis])
        r = pt.lvector("r")
        o1, o2, o3 = run([x, r], [pt.repeat(x, r, axis), pt.repeat(x, 2, axis), pt.repeat(x, 3)], [a, counts], mode)
        assert_matches(o1, np.repeat(a, counts, axis))
        assert_matches(o2, np.repeat(a, 2, axis))
        assert_matches(o3, np.repeat(a, 3))
    with pytest.raises(TypeError, match="repeats must be integers"):
        pt.repeat(pt.dvector(), 1.5)


@pytest.mark.parametrize("mode", MODES)
def test_unique_bincount_nonzero(rng, mode):
    for shape in shapes(rng):
        a = rng.integers(-2, 4, size=shape)
        x = sym(a)
        outs = run([x], list(pt.unique(x, True, True, True)), [a], mode)
        for o, e in zip(outs, np.unique(a, True, True, True)):
            assert_matches(o, e.reshape(o.shape) if o.ndim != e.ndim else e, check_dtype=False)
        (u,) = run([x], [pt.unique(x)], [a], mode)
        assert_matches(u, np.unique(a))
        nz = run([x], list(pt.nonzero(x)) + [pt.flatnonzero(x), pt.nonzero_values(x)], [a], mode)
        for o, e in zip(nz, list(np.nonzero(a)) + [np.flatnonzero(a), a[a != 0]]):
            assert_matches(o, e, check_dtype=False)
    b = rng.integers(0, 6, size=10)
    w = rng.random(10)
    xb, xw = pt.lvector("b"), pt.dvector("w")
    c1, c2 = run([xb, xw], [pt.bincount(xb), pt.bincount(xb, xw, minlength=9)], [b, w], mode)
    assert_matches(c1, np.bincount(b), check_dtype=False)
    assert_matches(c2, np.bincount(b, w, minlength=9))
    f = oxtensor.function([xb], pt.bincount(xb), mode=mode)
    with pytest.raises(ValueError, match="non-negative"):
        f(np.array([1, -1]))


@pytest.mark.parametrize("mode", MODES)
def test_layout_compositions(rng, mode):
    a = random_array(rng, (2, 3, 4), "float64")
    x = sym(a)
    outs = run(
        [x],
        [
            pt.diff(x), pt.diff(x, n=2, axis=0), pt.roll(x, 2, axis=1), pt.roll(x, -1),
            pt.flip(x, 0), pt.flip(x), pt.moveaxis(x, 0, -1), pt.moveaxis(x, [0, 1], [2, 0]),
            pt.swapaxes(x, 0, 2), pt.tile(x, (2, 1, 2)), pt.atleast_Nd(x[0, 0], n=3),
            pt.horizontal_stack(x[0], x[1]), pt.vertical_stack(x[0, 0], x[1, 1]),
            pt.take_along_axis(x, pt.argsort(x, axis=1), axis=1), pt.median(x), pt.median(x, axis=1),
            pt.ptp(x, axis=2), pt.split_dims(x, (3, 1), axis=1), pt.join_dims(x, 1),
        ],
        [a],
        mode,
    )
    expected = [
        np.diff(a), np.diff(a, 2, 0), np.roll(a, 2, 1), np.roll(a, -1), np.flip(a, 0), np.flip(a),
        np.moveaxis(a, 0, -1), np.moveaxis(a, [0, 1], [2, 0]), np.swapaxes(a, 0, 2), np.tile(a, (2, 1, 2)),
        a[0, 0][None, None], np.hstack([a[0], a[1]]), np.vstack([a[0, 0], a[1, 1]]),
        np.take_along_axis(a, np.argsort(a, 1), 1), np.median(a), np.median(a, 1), np.ptp(a, 2),
        a.reshape(2, 3, 1, 4), a.reshape(2, 12),
    ]
    for o, e in zip(outs, expected):
        assert_matches(o, e)


@pytest.mark.parametrize("mode", MODES)
def test_constructors_and_indices(rng, mode):
    n = pt.lscalar("n")
    outs = run(
        [n],
        [
            pt.linspace(0.0, 1.0, n), pt.linspace(2.0, -1.0, n, endpoint=False), pt.logspace(0.0, 2.0, n),
            pt.geomspace(1.0, 1000.0, n), pt.tri(n, n + 1, -1), pt.eye(n),
        ]
        + list(pt.tril_indices(n, 1))
        + list(pt.triu_indices(n, -1, n + 2)),
        [np.int64(5)],
        mode,
    )
    expected = [
        np.linspace(0, 1, 5), np.linspace(2, -1, 5, endpoint=False), np.logspace(0, 2, 5),
        np.geomspace(1, 1000, 5), np.tri(5, 6, -1), np.eye(5),
    ] + list(np.tril_indices(5, 1)) + list(np.triu_indices(5, -1, 7))
    for o, e in zip(outs, expected):
        assert_matches(o, e, check_dtype=False, rtol=1e-12)
    idx = pt.lvector("i")
    flat = np.array([0, 5, 11, 7])
    outs = run([idx], list(pt.unravel_index(idx, (3, 4))) + [pt.ravel_multi_index(pt.unravel_index(idx, (3, 4)), (3, 4))], [flat], mode)
    for o, e in zip(outs, list(np.unravel_index(flat, (3, 4))) + [flat]):
        assert_matches(o, e, check_dtype=False)
    m = pt.dmatrix("m")
    a = rng.random((3, 4))
    outs = run([m], [pt.fill_diagonal(m, 9.0), pt.fill_diagonal_offset(m, 9.0, 1), pt.identity_like(m), pt.empty_like(m).shape], [a], mode)
    f1 = a.copy()
    np.fill_diagonal(f1, 9.0)
    f2 = a.copy()
    f2[np.arange(3), np.arange(1, 4)] = 9.0
    for o, e in zip(outs, [f1, f2, np.eye(3, 4), np.array(a.shape)]):
        assert_matches(o, e, check_dtype=False)


@pytest.mark.parametrize("mode", MODES)
def test_math_compositions(rng, mode):
    a = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.49, np.inf, -np.inf, np.nan, 0.49999999999999994])
    x = pt.dvector("x")
    outs = run(
        [x],
        [
            pt.round_half_away_from_zero(x), pt.isfinite(x), pt.isposinf(x), pt.isneginf(x),
            pt.nan_to_num(x), pt.nan_to_num(x, nan=-1.0, posinf=5.0, neginf=-5.0), pt.deg2rad(x), pt.rad2deg(x),
        ],
        [a],
        mode,
    )
    expected = [
        np.where(np.isfinite(a), np.sign(a) * np.floor(np.abs(a) + 0.5), a), np.isfinite(a), np.isposinf(a),
        np.isneginf(a), np.nan_to_num(a), np.nan_to_num(a, nan=-1.0, posinf=5.0, neginf=-5.0), np.deg2rad(a), np.rad2deg(a),
    ]
    expected[0][-1] = 0.0
    for o, e in zip(outs, expected):
        assert_matches(o, e)
    i, j = pt.lvector("i"), pt.lvector("j")
    ai, aj = np.array([7, -7, 6, 0, 5]), np.array([2, 2, 3, 4, -2])
    q, r, c = run([i, j], list(pt.divmod(i, j)) + [pt.ceil_intdiv(i, j)], [ai, aj], mode)
    assert_matches(q, ai // aj)
    assert_matches(r, ai % aj)
    m = pt.dmatrix("m")
    b = rng.random((3, 5))
    mx, am, cv, lg = run([m], list(pt.max_and_argmax(m, axis=1)) + [pt.cov(m), pt.largest(m, 0.5, m * 2)], [b], mode)
    assert_matches(mx, b.max(1))
    assert_matches(am, b.argmax(1))
    assert_matches(cv, np.cov(b))
    assert_matches(lg, np.maximum(np.maximum(b, 0.5), b * 2))


def test_axis_and_dtype_errors():
    x = pt.dmatrix("x")
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        pt.cumsum(x, axis=2)
    with pytest.raises(ValueError, match="axis 5 is out of bounds"):
        pt.sort(x, axis=5)
    with pytest.raises(TypeError, match="axis must be an integer"):
        pt.cumsum(x, axis=1.5)
    with pytest.raises(TypeError, match="integer"):
        pt.bincount(pt.dvector())
    with pytest.raises(TypeError, match="indices must be integers"):
        pt.take_along_axis(x, x, axis=0)
    with pytest.raises(ValueError, match="out of bounds"):
        pt.moveaxis(x, 3, 0)


@pytest.mark.parametrize(
    "f, shape",
    [
        (lambda x: pt.cumsum(x, axis=0), (4, 3)),
        (lambda x: pt.cumprod(x, axis=1), (3, 4)),
        (lambda x: pt.cumsum(x), (2, 3)),
        (lambda x: pt.sort(x, axis=0), (5, 2)),
        (lambda x: pt.repeat(x, 2, axis=1), (2, 3)),
        (lambda x: pt.diff(x, 2), (3, 5)),
        (lambda x: pt.roll(x, 1, axis=1), (2, 4)),
        (lambda x: pt.take_along_axis(x, pt.argsort(x, axis=1), axis=1), (3, 4)),
        (lambda x: pt.median(x, axis=1), (3, 5)),
        (lambda x: pt.tile(x, (2, 1)), (2, 3)),
    ],
)
def test_gradients(rng, f, shape):
    verify_grad(f, [rng.random(shape) + 0.5], rng=rng)


def test_gradient_helpers(rng):
    x = pt.dvector("x")
    a = rng.random(4) + 0.5
    g = oxtensor.function([x], [
        oxtensor.grad(pt.sum(oxtensor.gradient.grad_scale(x, 3.0) ** 2), x),
        oxtensor.grad(pt.sum(oxtensor.gradient.grad_clip(x, -0.1, 0.1) ** 2), x),
        oxtensor.grad(pt.sum(oxtensor.gradient.zero_grad(x) * x), x),
        oxtensor.gradient.hessian_vector_product(pt.sum(x ** 3), x, pt.ones_like(x)),
    ])(a)
    assert_matches(g[0], 6 * a)
    assert_matches(g[1], np.clip(2 * a, -0.1, 0.1))
    assert_matches(g[2], a)
    assert_matches(g[3], 6 * a)
    (v,) = oxtensor.function([x], [oxtensor.gradient.grad_scale(x, 3.0)])(a)
    assert_matches(v, a)
    with pytest.raises(oxtensor.gradient.GradientError):
        verify_grad(lambda v: oxtensor.gradient.grad_scale(v, 2.0), [a])
    wrt, end = oxtensor.gradient.subgraph_grad([x], [x * 2], cost=pt.sum(x * 2))
    (gw,) = oxtensor.function([x], wrt)(a)
    assert_matches(gw, np.zeros(4))
    assert oxtensor.Lop is oxtensor.gradient.Lop and oxtensor.pushforward is oxtensor.gradient.pushforward
    with pytest.raises(oxtensor.gradient.NullTypeGradError):
        oxtensor.gradient.grad_undefined("op", 0, x)


def test_undefined_grad(rng):
    x, y = pt.dvector("x"), pt.dvector("y")
    a = rng.random(3)
    u = oxtensor.gradient.undefined_grad(x)
    (v,) = oxtensor.function([x], [u])(a)
    assert_matches(v, a)
    cost = pt.sum(u * y)
    with pytest.raises(oxtensor.gradient.NullTypeGradError, match="undefined_grad of 'x'"):
        oxtensor.grad(cost, x)
    assert issubclass(oxtensor.gradient.NullTypeGradError, TypeError)
    assert oxtensor.grad(cost, x, null_gradients="return") is None
    (gy,) = oxtensor.function([x, y], [oxtensor.grad(cost, y)])(a, np.ones(3))
    assert_matches(gy, a)


def test_scalars_from_a_string():
    a, b, c = pt.scalars("xyz")
    assert [v.name for v in (a, b, c)] == ["x", "y", "z"]
    assert pt.tensor6("t").ndim == 6 and pt.dtensor7().ndim == 7


@pytest.mark.parametrize("mode", MODES)
def test_pad_and_interp(rng, mode):
    a = random_array(rng, (3, 4), "float64")
    x = sym(a)
    cases = [
        ((1, 2), "constant", {}), (((0, 1), (2, 0)), "constant", {"constant_values": 7.0}),
        (2, "edge", {}), (((1, 5), (3, 2)), "wrap", {}), (((2, 2), (3, 1)), "reflect", {}),
        (((2, 4), (1, 3)), "symmetric", {}),
    ]
    outs = run([x], [pt.pad(x, w, mode=m, **k) for w, m, k in cases], [a], mode)
    for o, (w, m, k) in zip(outs, cases):
        assert_matches(o, np.pad(a, w, mode=m, **k))
    xp = np.sort(rng.random(6))
    fp = rng.random(6)
    v = np.concatenate([rng.random(8) * 1.4 - 0.2, xp])
    xs, xps, fps = pt.dvector("v"), pt.dvector("xp"), pt.dvector("fp")
    (got,) = run([xs, xps, fps], [pt.interp(xs, xps, fps)], [v, xp, fp], mode)
    assert_matches(got, np.interp(v, xp, fp), rtol=1e-12, atol=1e-15)
    with pytest.raises(NotImplementedError, match="reflect_type 'odd'"):
        pt.pad(x, 1, mode="symmetric", reflect_type="odd")


def test_pad_gradient(rng):
    verify_grad(lambda v: pt.pad(v, ((1, 2), (2, 1)), mode="reflect"), [rng.random((3, 4))], rng=rng)


def test_pack_unpack_batched_tensordot(rng):
    a, b = rng.random((2, 3)), rng.random(4)
    x, y = pt.dmatrix("x"), pt.dvector("y")
    packed, shapes = pt.pack(x, y)
    ux, uy = pt.unpack(packed, shapes)
    p, gx, gy = oxtensor.function([x, y], [packed, ux, uy])(a, b)
    assert_matches(p, np.concatenate([a.ravel(), b]))
    assert_matches(gx, a)
    assert_matches(gy, b)
    u, v = rng.random((2, 3, 4)), rng.random((2, 4, 5))
    xu, xv = pt.tensor3("u"), pt.tensor3("v")
    (got,) = oxtensor.function([xu, xv], [pt.batched_tensordot(xu, xv, axes=[[2], [1]])])(u, v)
    assert_matches(got, np.einsum("aij,ajk->aik", u, v))


def test_vectorize(rng):
    a, b = rng.random((2, 3, 4)), rng.random(4)
    x, y = pt.tensor3("x"), pt.dvector("y")
    f = pt.vectorize(lambda m, v: pt.dot(m, v), signature="(m,n),(n)->(m)")
    g = pt.vectorize(lambda s: s * 2 + 1)
    got, twice = oxtensor.function([x, y], [f(x, y), g(x)])(a, b)
    assert_matches(got, a @ b)
    assert_matches(twice, a * 2 + 1)
