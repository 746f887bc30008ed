"""The PyTensor functions that were partial compositions (issue 15): ``median`` with NaNs,
``unique`` along an axis, ``pad``'s ramp and statistic modes with symbolic widths,
``pack``/``unpack`` with ``keep_axes``, ``cov``, ``mgrid``/``ogrid`` and ``empty``. Values
against NumPy over random shapes and dtypes in both modes; dtypes and shapes against PyTensor
where it decides them; gradients by finite differences."""

import numpy as np
import pytensor
import pytensor.tensor as ptr
import pytest

import oxtensor
import oxtensor.tensor as pt
from oxtensor.gradient import verify_grad
from conftest import assert_matches, random_array

MODES = ["FAST_RUN", "interp"]


def run(inputs, outputs, args, mode):
    return oxtensor.function(inputs, outputs, mode=mode)(*args)


def sym(a, name="x"):
    return pt.tensor(name, dtype=a.dtype.name, shape=(None,) * a.ndim)


def random_shape(rng, min_ndim=1, max_ndim=3, lo=1, hi=5):
    nd = int(rng.integers(min_ndim, max_ndim + 1))
    return tuple(int(s) for s in rng.integers(lo, hi, size=nd))


# ---- median -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8"])
def test_median_propagates_nan(rng, mode, dtype):
    for _ in range(4):
        shape = random_shape(rng)
        a = random_array(rng, shape, dtype)
        if dtype.startswith("float"):
            a.flat[rng.integers(0, a.size, size=max(1, a.size // 5))] = np.nan
        x = sym(a)
        axes = [None, int(rng.integers(-a.ndim, a.ndim)), tuple(range(a.ndim))]
        outs = run([x], [pt.median(x, axis=ax) for ax in axes], [a], mode)
        for o, ax in zip(outs, axes):
            assert_matches(o, np.median(a, axis=ax), check_dtype=False, rtol=1e-6)


# ---- unique along an axis -----------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["int64", "int32", "float64", "uint8"])
def test_unique_along_axis(rng, mode, dtype):
    for _ in range(4):
        shape = random_shape(rng, hi=6)
        a = rng.integers(0, 2, size=shape).astype(dtype)
        x = sym(a)
        axis = int(rng.integers(-a.ndim, a.ndim))
        outs = run([x], list(pt.unique(x, True, True, True, axis=axis)) + [pt.unique(x, axis=axis)], [a], mode)
        expected = list(np.unique(a, True, True, True, axis=axis)) + [np.unique(a, axis=axis)]
        for o, e in zip(outs, expected):
            assert_matches(o, e)


def test_unique_axis_errors():
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        pt.unique(pt.dmatrix(), axis=2)
    with pytest.raises(ValueError, match="axis must be None for a 0-d"):
        pt.unique(pt.dscalar(), axis=0)
    with pytest.raises(TypeError, match="axis must be an integer"):
        pt.unique(pt.dmatrix(), axis=0.5)


# ---- pad ----------------------------------------------------------------------------------

PAD_CASES = [
    ("linear_ramp", {}),
    ("linear_ramp", {"end_values": ((5, -4), (1, 2))}),
    ("mean", {}),
    ("maximum", {}),
    ("minimum", {}),
    ("median", {}),
    ("mean", {"stat_length": ((1, 2), (3, 1))}),
    ("median", {"stat_length": 2}),
    ("maximum", {"stat_length": (1, 3)}),
    ("constant", {"constant_values": ((1, 2), (3, 4))}),
    ("edge", {}),
    ("wrap", {}),
    ("reflect", {}),
    ("symmetric", {}),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
def test_pad_modes_against_numpy(rng, mode, dtype):
    a = random_array(rng, random_shape(rng, min_ndim=2, max_ndim=2, lo=2), dtype)
    x = sym(a)
    widths = [tuple(int(v) for v in rng.integers(0, 4, size=2)) for _ in range(2)]
    outs = run([x], [pt.pad(x, widths, mode=m, **k) for m, k in PAD_CASES], [a], mode)
    for o, (m, k) in zip(outs, PAD_CASES):
        assert_matches(o, np.pad(a, widths, mode=m, **k), rtol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_pad_symbolic_widths(rng, mode):
    a = random_array(rng, (3, 4, 2), "float64")
    x, w, s = sym(a), pt.lmatrix("w"), pt.lscalar("s")
    cases = ["constant", "edge", "wrap", "reflect", "symmetric", "linear_ramp", "mean", "maximum", "median"]
    widths = np.array([[1, 2], [0, 3], [2, 1]])
    extra = [pt.pad(x, s, mode="minimum"), pt.pad(x, [(s, 1), (0, s), (1, 0)], mode="linear_ramp", end_values=s)]
    outs = run([x, w, s], [pt.pad(x, w, mode=m) for m in cases] + extra, [a, widths, np.int64(2)], mode)
    expected = [np.pad(a, widths, mode=m) for m in cases]
    expected += [np.pad(a, 2, mode="minimum"), np.pad(a, [(2, 1), (0, 2), (1, 0)], mode="linear_ramp", end_values=2)]
    for o, e in zip(outs, expected):
        assert_matches(o, e, rtol=1e-12)


@pytest.mark.parametrize(
    "mode, kwargs",
    [("linear_ramp", {"end_values": (1.0, -2.0)}), ("mean", {}), ("maximum", {"stat_length": 2}), ("median", {}), ("constant", {})],
)
def test_pad_gradients(rng, mode, kwargs):
    verify_grad(lambda v: pt.pad(v, ((1, 2), (2, 1)), mode=mode, **kwargs), [rng.random((3, 4))], rng=rng)


def test_pad_errors():
    x = pt.dmatrix("x")
    with pytest.raises(ValueError, match="mode must be one of"):
        pt.pad(x, 1, mode="nearest")
    with pytest.raises(ValueError, match="takes no keyword argument"):
        pt.pad(x, 1, mode="edge", constant_values=1)
    with pytest.raises(NotImplementedError, match="reflect_type 'odd'"):
        pt.pad(x, 1, mode="reflect", reflect_type="odd")
    with pytest.raises(TypeError, match="pad_width must be integers"):
        pt.pad(x, 1.5)
    with pytest.raises(TypeError, match="pad_width must be integers"):
        pt.pad(x, pt.dvector())
    with pytest.raises(ValueError, match="pad_width must be non-negative"):
        pt.pad(x, -1)
    with pytest.raises(ValueError, match="does not fit a tensor of rank 2"):
        pt.pad(x, ((1, 2), (3, 4), (5, 6)))


# ---- pack / unpack ------------------------------------------------------------------------

PACK_CASES = [
    (None, [(2, 3), (4,), ()]),
    (0, [(2, 3), (2, 5, 6), (2,)]),
    ((-2, -1), [(4, 2, 3), (5, 2, 3)]),
    ((0, -1), [(2, 4, 3), (2, 5, 3), (2, 3)]),
    ((0, 1), [(2, 3, 4, 1), (2, 3)]),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("keep_axes, shapes", PACK_CASES)
def test_pack_unpack_keep_axes(rng, mode, keep_axes, shapes):
    arrs = [rng.random(s) for s in shapes]
    xs = [pt.tensor(f"x{i}", dtype="float64", shape=(None,) * len(s)) for i, s in enumerate(shapes)]
    packed, packed_shapes = pt.pack(*xs, keep_axes=keep_axes)
    unpacked = pt.unpack(packed, packed_shapes, keep_axes=keep_axes)
    got = run(xs, [packed] + list(packed_shapes) + unpacked, arrs, mode)
    ys = [ptr.tensor(f"x{i}", dtype="float64", shape=(None,) * len(s)) for i, s in enumerate(shapes)]
    ref_packed, ref_shapes = ptr.pack(*ys, keep_axes=keep_axes)
    ref = pytensor.function(ys, [ref_packed] + list(ref_shapes), on_unused_input="ignore")(*arrs)
    for g, r in zip(got, ref):
        assert_matches(g, r)
    for g, a in zip(got[len(ref):], arrs):
        assert_matches(g, a)


def test_pack_unpack_gradient(rng):
    def f(v):
        packed, shapes = pt.pack(v, v[:, :2] * 2.0, keep_axes=0)
        first, second = pt.unpack(packed ** 2, shapes, keep_axes=0)
        return pt.concatenate([first, second * 3.0], axis=1)

    verify_grad(f, [rng.random((2, 3))], rng=rng)


def test_pack_unpack_errors():
    x = pt.dmatrix("x")
    with pytest.raises(ValueError, match="ambiguous"):
        pt.pack(x, keep_axes=[])
    with pytest.raises(ValueError, match="non-negative axes must be 0, 1"):
        pt.pack(x, keep_axes=1)
    with pytest.raises(ValueError, match="negative axes must be …, -2, -1"):
        pt.pack(x, keep_axes=-2)
    with pytest.raises(ValueError, match="must come after"):
        pt.pack(x, keep_axes=(-1, 0))
    with pytest.raises(ValueError, match="input 0 has 2 dimensions"):
        pt.pack(x, keep_axes=(0, 1, -1))
    with pytest.raises(ValueError, match="one dimension more than keep_axes"):
        pt.unpack(x, [(2,)])
    with pytest.raises(TypeError, match="keep_axes must be an int"):
        pt.pack(x, keep_axes=1.5)


# ---- cov ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_cov(rng, mode, dtype):
    n = int(rng.integers(3, 7))
    a, b, v = random_array(rng, (3, n), dtype), random_array(rng, (2, n), dtype), random_array(rng, (n,), dtype)
    m, y, x = sym(a, "m"), sym(b, "y"), sym(v, "v")
    outs = run(
        [m, y, x],
        [
            pt.cov(m), pt.cov(m, y), pt.cov(m.T, rowvar=False), pt.cov(x), pt.cov(x, rowvar=False),
            pt.cov(m, bias=True), pt.cov(m, ddof=2), pt.cov(x, m),
        ],
        [a, b, v],
        mode,
    )
    expected = [
        np.cov(a), np.cov(a, b), np.cov(a.T, rowvar=False), np.cov(v), np.cov(v, rowvar=False),
        np.cov(a, bias=True), np.cov(a, ddof=2), np.cov(v, a),
    ]
    for o, e in zip(outs, expected):
        assert_matches(o, e, check_dtype=False, rtol=1e-4 if dtype == "float32" else 1e-10)


def test_cov_gradient_and_weights(rng):
    verify_grad(lambda v: pt.cov(v), [rng.random((3, 5))], rng=rng)
    with pytest.raises(NotImplementedError, match="fweights"):
        pt.cov(pt.dmatrix(), fweights=[1, 2])
    with pytest.raises(NotImplementedError, match="aweights"):
        pt.cov(pt.dmatrix(), aweights=[1.0, 2.0])


# ---- mgrid / ogrid / empty ----------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_mgrid_ogrid(mode):
    from oxtensor.tensor.basic import mgrid, ogrid

    assert mgrid is pt.mgrid and ogrid is pt.ogrid
    n = pt.lscalar("n")
    grids = [pt.mgrid[0:5, 1:n:2], pt.ogrid[0:5, 0.5:3:0.5], pt.mgrid[2:n, -1:1:5j, 0:2]]
    # Integer grids only: for float bounds PyTensor's ``arange`` picks float32 when the
    # constants fit it (its autocast), ours float64 as NumPy.
    refs = [ptr.mgrid[0:5, 1:7:2], ptr.ogrid[0:5, 1:3]]
    flat = [g for grid in grids for g in grid] + [pt.mgrid[0:4], pt.ogrid[1:n]]
    outs = run([n], flat, [np.int64(7)], mode)
    expected = list(np.mgrid[0:5, 1:7:2]) + list(np.ogrid[0:5, 0.5:3:0.5]) + list(np.mgrid[2:7, -1:1:5j, 0:2])
    expected += [np.mgrid[0:4], np.ogrid[1:7]]
    for o, e in zip(outs, expected):
        assert_matches(o, e, check_dtype=False)
    for ours, theirs in zip(grids[0] + pt.ogrid[0:5, 1:3], refs[0] + refs[1]):
        assert ours.dtype == theirs.dtype and ours.ndim == theirs.ndim
    with pytest.raises(ValueError, match="needs a stop"):
        pt.mgrid[0:]
    with pytest.raises(TypeError, match="index with slices"):
        pt.mgrid[0:2, 3]


@pytest.mark.parametrize("mode", MODES)
def test_empty_like_pytensor(mode):
    s = pt.lscalar("s")
    cases = [
        (lambda m: m.empty((2, 3)), (2, 3)),
        (lambda m: m.empty(4, dtype="int32"), (4,)),
        (lambda m: m.empty_like(m.lmatrix("p"), dtype="uint8"), None),
        (lambda m: m.empty_like(m.ftensor3("p")), None),
    ]
    for make, shape in cases:
        ours, theirs = make(pt), make(ptr)
        assert (ours.dtype, ours.ndim) == (theirs.dtype, theirs.ndim)
        if shape is not None:
            (v,) = run([], [ours], [], mode)
            assert v.shape == shape and v.dtype == theirs.dtype
    (v,) = run([s], [pt.empty((s, 3), dtype="int64")], [np.int64(2)], mode)
    assert v.shape == (2, 3) and v.dtype == np.int64
