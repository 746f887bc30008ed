"""``pytensor.tensor.sort``: ``sort`` and ``argsort`` (graph primitives; both stable, NaNs
last, as NumPy's ``kind="stable"``)."""

from __future__ import annotations

from oxtensor import _core
from oxtensor.tensor import basic as _basic

__all__ = ["sort", "argsort"]

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _check(kind, order):
    if kind not in _KINDS:
        raise ValueError(f"sort kind must be one of {_KINDS[1:]}, got {kind!r}")
    if order is not None:
        raise ValueError("sort: order= applies to structured arrays, which oxtensor does not have")


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``np.sort(a, axis)`` (``axis=None``: of the flattened ``a``). Every kind sorts stably."""
    _check(kind, order)
    return _core.extra("sort", [_basic.as_tensor_variable(a)], axis=axis)[0]


def argsort(a, axis=-1, kind=None, order=None, stable=None):
    """``np.argsort(a, axis)``: ``int64`` indices that sort ``a``, stable for every kind."""
    _check(kind, order)
    return _core.extra("argsort", [_basic.as_tensor_variable(a)], axis=axis)[0]
