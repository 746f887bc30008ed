"""Shared helpers for the oxtensor Python tests."""

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


def fn(inputs, outputs, **kwargs):
    """Compiles a function (a thin alias, so tests read like PyTensor programs)."""
    return oxtensor.function(inputs, outputs, **kwargs)


def sym_like(value, name="x"):
    """A symbolic input with the dtype and rank of ``value``."""
    value = np.asarray(value)
    return pt.tensor(name, dtype=value.dtype.name, shape=(None,) * value.ndim)


def random_array(rng, shape, dtype):
    """Random values of ``dtype``: small integers, or floats in [-3, 3]."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        return rng.integers(0, 20, size=shape).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(-20, 20, size=shape).astype(dtype)
    return (rng.random(shape) * 6 - 3).astype(dtype)


def assert_matches(got, expected, rtol=None, atol=0.0, check_dtype=True):
    """``got`` equals ``expected`` in values (NaNs equal), shape and dtype."""
    got = np.asarray(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if check_dtype:
        assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if rtol is None:
        rtol = 1e-5 if got.dtype in (np.float32, np.complex64) else 1e-12
    if got.dtype.kind in "fc" or expected.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)
