"""Shared variables: ``oxtensor.shared``."""

from __future__ import annotations

import numpy as np

from oxtensor import _core

__all__ = ["shared", "SharedVariable"]

SharedVariable = _core.TensorSharedVariable


def shared(value, name=None, strict=False, allow_downcast=None, borrow=False, shape=None, **kwargs):
    """A shared variable holding ``value`` (an array, list or Python number), as
    ``pytensor.shared``: its value persists across calls, is read with ``get_value`` and
    replaced with ``set_value`` or by a function's ``updates``.

    The value is always copied (``borrow`` is accepted for compatibility): the shared
    variable never aliases the caller's array. ``shape`` may give static extents; it is
    checked against the value but not recorded (shared values may change shape).
    """
    if isinstance(value, np.random.Generator):
        from oxtensor.tensor.random.variable import _shared_generator

        return _shared_generator(value, name)
    var = _core.shared(value, name)
    if shape is not None:
        actual = var.get_value(borrow=True).shape
        if len(shape) != len(actual) or any(
            s is not None and s != a for s, a in zip(shape, actual)
        ):
            raise ValueError(f"shared value of shape {actual} does not match shape={shape}")
    return var
