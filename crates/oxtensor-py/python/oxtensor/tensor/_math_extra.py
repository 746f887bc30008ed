"""The rest of ``pytensor.tensor.math`` outside the special functions: rounding and integer
division helpers, ``deg2rad``/``rad2deg``, the ``isfinite`` family, ``nan_to_num``,
``median``/``ptp``/``cov``, ``max_and_argmax``, ``largest``/``smallest``, and the contraction
aliases. All are compositions of existing ops (``median`` sorts with the ``sort`` primitive).
Imported into ``oxtensor.tensor.math``.
"""

from __future__ import annotations

import numpy as np

from oxtensor.tensor import math as _m

__all__ = [
    "ceil_intdiv",
    "cov",
    "deg2rad",
    "dense_dot",
    "divmod",
    "iround",
    "isfinite",
    "isneginf",
    "isposinf",
    "largest",
    "matvec",
    "max_and_argmax",
    "median",
    "nan_to_num",
    "ptp",
    "rad2deg",
    "round_half_away_from_zero",
    "smallest",
    "tensordot",
    "vecdot",
    "vecmat",
]


def _var(x):
    from oxtensor.tensor.basic import as_tensor_variable

    return as_tensor_variable(x)


def _cast(x, dtype):
    from oxtensor.tensor.basic import cast

    return cast(x, dtype)


def _float(x):
    """``x`` itself when it is a float tensor, else cast to ``float64`` (PyTensor's
    ``upgrade_to_float`` for the integer inputs of ``deg2rad`` and friends)."""
    x = _var(x)
    return x if x.dtype.startswith("float") else _cast(x, "float64")


def deg2rad(x):
    """Degrees to radians."""
    return _float(x) * (np.pi / 180.0)


def rad2deg(x):
    """Radians to degrees."""
    return _float(x) * (180.0 / np.pi)


def ceil_intdiv(a, b):
    """``ceil(a / b)`` for integers, as PyTensor: ``a // b`` plus one where the division is
    inexact."""
    a, b = _var(a), _var(b)
    div = _m.int_div(a, b)
    return div + _cast(_m.neq(_m.mod(a, b), 0), div.dtype)


def divmod(x, y):
    """``(x // y, x % y)``."""
    return _m.floor_div(x, y), _m.mod(x, y)


def round_half_away_from_zero(x):
    """Rounds to the nearest integer, halves away from zero (C's ``round``), exactly: the
    fractional part ``x - trunc(x)`` is exact in floating point."""
    x = _var(x)
    if not x.dtype.startswith("float"):
        return x
    t = _m.trunc(x)
    up = _cast(_m.ge(_m.abs(x - t), 0.5), x.dtype)
    return t + _m.sign(x) * up


def iround(a, mode=None):
    """``round(a, mode)`` as ``int64``."""
    if mode is None:
        mode = "half_away_from_zero"
    if mode == "half_away_from_zero":
        r = round_half_away_from_zero(a)
    else:
        r = _m.round(a, mode)
    return _cast(r, "int64")


def isfinite(a):
    """Neither NaN nor infinite."""
    a = _var(a)
    return _m.invert(_m.or_(_m.isnan(a), _m.isinf(a)))


def isposinf(x):
    """``+inf``."""
    x = _var(x)
    return _m.and_(_m.isinf(x), _m.gt(x, 0))


def isneginf(x):
    """``-inf``."""
    x = _var(x)
    return _m.and_(_m.isinf(x), _m.lt(x, 0))


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """``np.nan_to_num``: NaN to ``nan``, infinities to ``posinf``/``neginf`` (by default
    the largest finite values of the dtype)."""
    x = _var(x)
    if not x.dtype.startswith("float"):
        return x
    info = np.finfo(x.dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    out = _m.switch(_m.isnan(x), _cast(_var(nan), x.dtype), x)
    out = _m.switch(isposinf(x), _cast(_var(posinf), x.dtype), out)
    return _m.switch(isneginf(x), _cast(_var(neginf), x.dtype), out)


def largest(*args):
    """The elementwise maximum of all arguments."""
    if not args:
        raise ValueError("largest needs at least one argument")
    out = _var(args[0])
    for a in args[1:]:
        out = _m.maximum(out, a)
    return out


def smallest(*args):
    """The elementwise minimum of all arguments."""
    if not args:
        raise ValueError("smallest needs at least one argument")
    out = _var(args[0])
    for a in args[1:]:
        out = _m.minimum(out, a)
    return out


def max_and_argmax(a, axis=None, keepdims=False):
    """``(max(a, axis), argmax(a, axis))``."""
    return _m.max(a, axis=axis, keepdims=keepdims), _m.argmax(a, axis=axis, keepdims=keepdims)


def ptp(a, axis=None):
    """``np.ptp``: ``max - min`` along ``axis``."""
    return _m.max(a, axis=axis) - _m.min(a, axis=axis)


def median(x, axis=None):
    """``np.median`` along ``axis`` (an int, a tuple or ``None``): the middle of the sorted
    values, the mean of the two middle ones for an even count. As in NumPy, a lane holding a
    NaN gives NaN (the ``sort`` primitive puts NaNs last, so they are looked for apart)."""
    from oxtensor.tensor.basic import flatten, reshape, transpose
    from oxtensor.tensor.sort import sort

    x = _var(x)
    if axis is None:
        x = flatten(x, 1)
        ax = 0
    elif isinstance(axis, (tuple, list)):
        axes = sorted(a % x.ndim for a in axis)
        rest = [d for d in range(x.ndim) if d not in axes]
        x = transpose(x, rest + axes)
        dims = [x.shape[i] for i in range(len(rest))] + [-1]
        x = reshape(x, dims)
        ax = len(rest)
    else:
        ax = axis % x.ndim if x.ndim else 0
    s = sort(x, axis=ax)
    n = s.shape[ax]
    lo = _m.int_div(n - 1, 2)
    hi = _m.int_div(n, 2)
    index = [slice(None)] * ax
    a = s[tuple(index + [lo])]
    b = s[tuple(index + [hi])]
    xf = a.dtype if a.dtype.startswith("float") else "float64"
    out = (_cast(a, xf) + _cast(b, xf)) / 2
    if x.dtype.startswith("float"):
        out = _m.switch(_m.any(_m.isnan(x), axis=ax), _cast(np.nan, xf), out)
    return out


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """``np.cov(m, y, rowvar, bias, ddof)`` as PyTensor's ``cov``: the covariance of the rows
    (variables; the columns when ``rowvar`` is false) of ``m`` and ``y``, squeezed (a 0-d
    variance for one variable). PyTensor has no ``fweights``/``aweights``; neither has this."""
    from oxtensor.tensor.basic import atleast_Nd, concatenate, squeeze

    for name, w in (("fweights", fweights), ("aweights", aweights)):
        if w is not None:
            raise NotImplementedError(f"cov: {name} is not supported (PyTensor's cov has no weights either)")

    def variables(v):
        v = _var(v)
        if v.ndim > 2:
            raise ValueError(f"cov: m and y must have at most 2 dimensions, got {v.ndim}")
        x = atleast_Nd(v, n=2)
        return x.T if not rowvar and v.ndim == 2 and v.type.shape[0] != 1 else x

    x = variables(m)
    if y is not None:
        x = concatenate([x, variables(y)], axis=0)
    x = x if x.dtype.startswith("float") else _cast(x, "float64")
    if ddof is None:
        ddof = 0 if bias else 1
    n = _cast(x.shape[1], x.dtype)
    xc = x - _m.mean(x, axis=1, keepdims=True)
    return squeeze(_m.dot(xc, xc.T) / (n - ddof))


def dense_dot(a, b):
    """``dot`` (PyTensor's name for the dense product)."""
    return _m.dot(a, b)


def _contraction(name):
    def f(*args, **kwargs):
        from oxtensor.tensor import _matrix

        return getattr(_matrix, name)(*args, **kwargs)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``pt.{name}`` (see ``oxtensor.tensor._matrix``)."
    return f


tensordot = _contraction("tensordot")
matvec = _contraction("matvec")
vecmat = _contraction("vecmat")
vecdot = _contraction("vecdot")
