"""``pytensor.tensor.pad``: ``np.pad`` as a composition.

Each axis is padded in turn (as NumPy does, so later axes see the earlier axes' padding): the
padded positions ``i`` in ``[-before, n + after)`` are mapped back into the input and read with
one ``take``, then a ``switch`` puts the mode's values (a constant, a statistic of the edge
area, a linear ramp) where ``i`` falls outside ``[0, n)``. Widths may be symbolic, and the
result is differentiable wherever its pieces are.
"""

from __future__ import annotations

import numpy as np

from oxtensor import _core
from oxtensor.tensor import basic as _basic
from oxtensor.tensor import math as _math
from oxtensor.tensor.variable import Variable

__all__ = ["pad"]

# The keyword arguments each mode takes (NumPy's; PyTensor refuses any other).
_MODE_KWARGS = {
    "constant": ("constant_values",),
    "edge": (),
    "linear_ramp": ("end_values",),
    "maximum": ("stat_length",),
    "mean": ("stat_length",),
    "median": ("stat_length",),
    "minimum": ("stat_length",),
    "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
    "wrap": (),
}


def _holds_variable(value):
    """Whether the (nested) sequence ``value`` holds a symbolic variable."""
    if isinstance(value, (tuple, list)):
        return any(_holds_variable(v) for v in value)
    return isinstance(value, Variable)


def _pairs(value, ndim, what, integer):
    """Per-axis ``(before, after)`` pairs broadcast as ``np.pad`` broadcasts ``pad_width``
    and friends: Python numbers for a constant, symbolic scalars for a tensor (or for
    nested sequences holding tensors)."""
    if isinstance(value, (tuple, list)) and _holds_variable(value):
        from oxtensor.tensor.basic import stacklists

        value = stacklists(value)
    if isinstance(value, Variable):
        if integer and not (value.dtype.startswith(("int", "uint"))):
            raise TypeError(f"pad: {what} must be integers, got dtype {value.dtype}")
        v = _basic.cast(value, "int64") if integer else value
        if v.ndim > 2:
            raise ValueError(f"pad: {what} must have at most 2 dimensions, got {v.ndim}")
        w = _basic.broadcast_to(v, (ndim, 2))
        return [(w[d, 0], w[d, 1]) for d in range(ndim)]
    arr = np.asarray(value)
    if integer and arr.dtype.kind not in "iu":
        raise TypeError(f"pad: {what} must be integers, got {value!r}")
    try:
        w = np.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(f"pad: {what} {value!r} does not fit a tensor of rank {ndim}") from None
    pairs = [(a.item(), b.item()) for a, b in w]
    if integer and any(a < 0 or b < 0 for a, b in pairs):
        raise ValueError(f"pad: {what} must be non-negative, got {value!r}")
    return pairs


def _along(v, d, ndim):
    """The vector ``v`` as a tensor of rank ``ndim`` varying along axis ``d``."""
    pattern = ["x"] * ndim
    pattern[d] = 0
    return v.dimshuffle(*pattern)


def _stat(mode, chunk, d):
    """The statistic of ``mode`` of ``chunk`` along axis ``d``, kept as an axis of extent 1,
    in ``chunk``'s dtype (integers rounded half to even first, as ``np.pad``)."""
    if mode == "maximum":
        return _math.max(chunk, axis=d, keepdims=True)
    if mode == "minimum":
        return _math.min(chunk, axis=d, keepdims=True)
    if mode == "mean":
        s = _math.mean(chunk, axis=d, keepdims=True)
    else:
        from oxtensor.tensor._math_extra import median

        s = _basic.shape_padaxis(median(chunk, axis=d), d)
    if not chunk.dtype.startswith("float"):
        s = _math.round(s)
    return _basic.cast(s, chunk.dtype)


def _source(mode, i, n):
    """The input position read at padded position ``i`` (``n`` the input extent)."""
    if mode == "wrap":
        return _math.mod(i, n)
    if mode == "reflect":
        period = _math.maximum(2 * (n - 1), 1)
        r = _math.mod(i, period)
        return _math.switch(_math.ge(r, n), period - r, r)
    if mode == "symmetric":
        r = _math.mod(i, 2 * n)
        return _math.switch(_math.ge(r, n), 2 * n - 1 - r, r)
    return _math.clip(i, 0, n - 1)


def _ramps(x, d, i, before, after, lo_end, hi_end):
    """NumPy's linear ramps along axis ``d``: before the input ``linspace(lo_end, edge,
    before, endpoint=False)``, after it the same from ``hi_end`` reversed, i.e. ``end + k *
    (edge - end) / width`` at the ``k``-th point from the outer end. Integer tensors take their
    end values cast to their dtype and floor the ramp (as NumPy's integer ``linspace``) with an
    exact integer floor division: in floats the rewrites may reassociate ``k * (d / w)`` into
    ``(k / w) * d``, a rounding that the floor would turn into an off-by-one."""
    n = x.shape[d]
    integer = not x.dtype.startswith("float")
    ft = "int64" if integer else x.dtype
    edge_lo = _basic.cast(_basic.shape_padaxis(x[(slice(None),) * d + (0,)], d), ft)
    edge_hi = _basic.cast(_basic.shape_padaxis(x[(slice(None),) * d + (-1,)], d), ft)
    lo_end = _basic.cast(_basic.cast(lo_end, x.dtype), ft)
    hi_end = _basic.cast(_basic.cast(hi_end, x.dtype), ft)
    k_lo = _basic.cast(_along(i + before, d, x.ndim), ft)
    k_hi = _basic.cast(_along(after - 1 - (i - n), d, x.ndim), ft)
    w_lo = _basic.cast(_math.maximum(before, 1), ft)
    w_hi = _basic.cast(_math.maximum(after, 1), ft)
    if integer:
        lo = lo_end + _math.floor_div(k_lo * (edge_lo - lo_end), w_lo)
        hi = hi_end + _math.floor_div(k_hi * (edge_hi - hi_end), w_hi)
    else:
        lo = lo_end + k_lo * ((edge_lo - lo_end) / w_lo)
        hi = hi_end + k_hi * ((edge_hi - hi_end) / w_hi)
    return _basic.cast(lo, x.dtype), _basic.cast(hi, x.dtype)


def _outside_values(mode, x, d, i, before, after, pairs):
    """The values ``(lo, hi)`` written before and after the input along axis ``d``, each
    broadcastable against the padded tensor."""
    n = x.shape[d]
    if mode == "constant":
        lo, hi = pairs[d]
        return _basic.cast(lo, x.dtype), _basic.cast(hi, x.dtype)
    if mode == "linear_ramp":
        return _ramps(x, d, i, before, after, *pairs[d])
    lo_len, hi_len = pairs[d] if pairs is not None else (None, None)
    lo_len = n if lo_len is None else _math.minimum(lo_len, n)
    hi_len = n if hi_len is None else _math.minimum(hi_len, n)
    lo = _stat(mode, _core.take(x, _basic.arange(lo_len), d), d)
    hi = _stat(mode, _core.take(x, _basic.arange(n - hi_len, n), d), d)
    return lo, hi


def pad(x, pad_width, mode="constant", **kwargs):
    """``np.pad(x, pad_width, mode, **kwargs)`` (PyTensor's ``pt.pad``): ``pad_width`` a
    constant or a symbolic integer tensor broadcastable to ``(x.ndim, 2)``; modes
    ``constant`` (``constant_values``), ``edge``, ``wrap``, ``reflect`` and ``symmetric``
    (``reflect_type="even"`` only, as PyTensor), ``linear_ramp`` (``end_values``) and the
    statistics ``maximum``, ``minimum``, ``mean`` and ``median`` (``stat_length``; PyTensor
    has no ``median``, this follows NumPy: integer statistics are rounded half to even)."""
    if mode not in _MODE_KWARGS:
        raise ValueError(f"pad: mode must be one of {sorted(_MODE_KWARGS)}, got {mode!r}")
    unknown = sorted(k for k in kwargs if k not in _MODE_KWARGS[mode])
    if unknown:
        raise ValueError(
            f"pad: mode {mode!r} takes no keyword argument(s) {unknown}; it takes {list(_MODE_KWARGS[mode])}"
        )
    if kwargs.get("reflect_type", "even") != "even":
        raise NotImplementedError(f"pad: reflect_type {kwargs['reflect_type']!r} is not supported; use 'even'")
    x = _basic.as_tensor_variable(x)
    widths = _pairs(pad_width, x.ndim, "pad_width", integer=True)
    pairs = None
    if mode == "constant":
        pairs = _pairs(kwargs.get("constant_values", 0), x.ndim, "constant_values", integer=False)
    elif mode == "linear_ramp":
        pairs = _pairs(kwargs.get("end_values", 0), x.ndim, "end_values", integer=False)
    elif kwargs.get("stat_length") is not None:
        pairs = _pairs(kwargs["stat_length"], x.ndim, "stat_length", integer=True)
    for d, (before, after) in enumerate(widths):
        if isinstance(before, int) and isinstance(after, int) and before == after == 0:
            continue
        n = x.shape[d]
        i = _basic.arange(-before, n + after)
        taken = _core.take(x, _source(mode, i, n), d)
        if mode in ("edge", "wrap", "reflect", "symmetric"):
            x = taken
            continue
        lo, hi = _outside_values(mode, x, d, i, before, after, pairs)
        after_input = _math.switch(_along(_math.ge(i, n), d, x.ndim), hi, taken)
        x = _math.switch(_along(_math.lt(i, 0), d, x.ndim), lo, after_input)
    return x
