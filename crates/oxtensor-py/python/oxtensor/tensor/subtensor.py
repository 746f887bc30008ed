"""Functional updates of indexed tensors: ``set_subtensor`` and ``inc_subtensor``."""

from __future__ import annotations

from oxtensor import _core

__all__ = ["set_subtensor", "inc_subtensor", "take"]


def set_subtensor(x, y, inplace=False, tolerate_inplace_aliasing=False):
    """``x[idx] = y`` as a new tensor, where ``x`` is the result of indexing
    (``pt.set_subtensor(a[1:3], 0)``)."""
    return _core.set_subtensor(x, y)


def inc_subtensor(x, y, inplace=False, set_instead_of_inc=False, tolerate_inplace_aliasing=False, ignore_duplicates=False):
    """``x[idx] += y`` as a new tensor, where ``x`` is the result of indexing; with an
    integer-array index, repeated indices accumulate."""
    if set_instead_of_inc:
        return _core.set_subtensor(x, y)
    return _core.inc_subtensor(x, y)


def take(a, indices, axis=None, mode="raise"):
    """``np.take(a, indices, axis)`` (``axis=None``: of the flattened tensor)."""
    if mode != "raise":
        raise NotImplementedError("take: only mode='raise' is supported")
    if axis is None:
        return _core.take(_core.flatten(a, 1), indices, 0)
    return _core.take(a, indices, axis)
