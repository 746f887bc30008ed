"""Reductions against NumPy: axis as None, int, negative, tuple; keepdims; empty inputs."""

import numpy as np
import pytest

import oxtensor.tensor as pt
from conftest import assert_matches, fn, random_array, sym_like

AXES = [None, 0, -1, (0, 1), (-1, 0), 1, ()]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int64", "uint8", "bool"])
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "all", "any"])
def test_reductions_match_numpy(name, dtype, rng):
    if dtype == "bool" and name in ("sum", "prod"):
        pass
    a = random_array(rng, (3, 4, 2), dtype)
    if name == "prod" and dtype not in ("bool",):
        a = (a % 3).astype(dtype)  # keep products small
    x = sym_like(a)
    ref = {
        "sum": np.sum,
        "prod": np.prod,
        "max": np.max,
        "min": np.min,
        "all": np.all,
        "any": np.any,
    }[name]
    for axis in AXES:
        for keepdims in (False, True):
            out = fn([x], getattr(pt, name)(x, axis=axis, keepdims=keepdims))(a)
            expected = ref(a, axis=axis, keepdims=keepdims)
            # float32 sums accumulate in float64 here (NumPy: pairwise float32): compare
            # with an absolute tolerance on the scale of the data.
            assert_matches(
                out,
                np.asarray(expected),
                rtol=1e-5 if dtype == "float32" else 1e-12,
                atol=1e-5 if dtype == "float32" else 0,
            )
            meth = fn([x], getattr(x, name)(axis=axis, keepdims=keepdims))(a)
            assert_matches(meth, out)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_mean_var_std(dtype, rng):
    a = random_array(rng, (4, 5), dtype)
    x = sym_like(a)
    for axis in [None, 0, -1, (0, 1)]:
        for keepdims in (False, True):
            m, v, s, v1 = fn(
                [x],
                [
                    pt.mean(x, axis=axis, keepdims=keepdims),
                    pt.var(x, axis=axis, keepdims=keepdims),
                    pt.std(x, axis=axis, keepdims=keepdims),
                    x.var(axis=axis, ddof=1, keepdims=keepdims),
                ],
            )(a)
            rtol = 1e-5 if dtype == "float32" else 1e-10
            atol = 1e-5 if dtype == "float32" else 0
            kw = dict(rtol=rtol, atol=atol, check_dtype=False)
            assert_matches(m, np.mean(a, axis=axis, keepdims=keepdims), **kw)
            assert_matches(v, np.var(a, axis=axis, keepdims=keepdims), **kw)
            assert_matches(s, np.std(a, axis=axis, keepdims=keepdims), **kw)
            assert_matches(v1, np.var(a, axis=axis, ddof=1, keepdims=keepdims), **kw)
            if dtype != "int32":
                assert m.dtype == a.dtype and v.dtype == a.dtype
    if dtype == "int32":
        assert fn([x], pt.mean(x))(a).dtype == np.float64


@pytest.mark.parametrize("dtype", ["float64", "int64", "uint8"])
def test_argmax_argmin(dtype, rng):
    a = random_array(rng, (5, 6), dtype)
    x = sym_like(a)
    for axis in [None, 0, 1, -1]:
        for keepdims in (False, True):
            amax, amin = fn(
                [x], [pt.argmax(x, axis=axis, keepdims=keepdims), x.argmin(axis=axis, keepdims=keepdims)]
            )(a)
            assert_matches(amax, np.argmax(a, axis=axis, keepdims=keepdims))
            assert_matches(amin, np.argmin(a, axis=axis, keepdims=keepdims))


def test_argmax_nan_and_ties():
    a = np.array([1.0, 3.0, 3.0, np.nan, 2.0])
    x = pt.dvector("x")
    assert int(fn([x], pt.argmax(x))(a)) == np.argmax(a)
    b = np.array([1.0, 3.0, 3.0])
    assert int(fn([x], pt.argmax(x))(b)) == 1


def test_empty_reductions():
    x = pt.dmatrix("x")
    a = np.zeros((0, 3))
    s, p, an, al, m = fn([x], [x.sum(axis=0), x.prod(axis=0), pt.any(x, axis=0), pt.all(x), x.sum()])(a)
    assert_matches(s, np.zeros(3))
    assert_matches(p, np.ones(3))
    assert_matches(an, np.zeros(3, bool))
    assert bool(al) is True
    assert float(m) == 0.0
    with np.errstate(all="ignore"):
        mean = fn([x], pt.mean(x, axis=0))(a)
    assert np.all(np.isnan(mean))


def test_reduction_dtype_argument(rng):
    a = random_array(rng, (3,), "int8")
    x = pt.bvector("x")
    out = fn([x], pt.sum(x, dtype="int8"))(a)
    assert out.dtype == np.int8
    assert int(out) == int(np.sum(a, dtype="int8"))
    assert fn([x], x.sum())(a).dtype == np.int64


def test_bad_axis_raises():
    x = pt.dmatrix("x")
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        pt.sum(x, axis=2)
    with pytest.raises(ValueError, match="duplicate"):
        pt.sum(x, axis=(0, 0))
    with pytest.raises(TypeError):
        pt.sum(x, axis="rows")
