"""``pytensor.tensor.extra_ops``: cumulative sums and products, ``diff``, ``repeat``,
``searchsorted``, ``unique``, ``bincount``, broadcasting helpers, ``linspace`` and friends,
index conversions and diagonal filling.

``cumsum``, ``cumprod``, ``repeat``, ``searchsorted``, ``unique`` and ``bincount`` are graph
primitives (``Op::Extra`` in the Rust core; ``unique`` along an axis is composed of them);
everything else here is composed from other ops.
"""

from __future__ import annotations

import numpy as np

from oxtensor import _core
from oxtensor.tensor import basic as _basic
from oxtensor.tensor import math as _math

__all__ = [
    "bartlett",
    "bincount",
    "broadcast_arrays",
    "broadcast_shape",
    "broadcast_to",
    "compress",
    "concat_with_broadcast",
    "cumprod",
    "cumsum",
    "diff",
    "fill_diagonal",
    "fill_diagonal_offset",
    "geomspace",
    "linspace",
    "logspace",
    "ravel_multi_index",
    "repeat",
    "searchsorted",
    "squeeze",
    "unique",
    "unravel_index",
]

broadcast_to = _basic.broadcast_to
squeeze = _basic.squeeze


def _var(x):
    return _basic.as_tensor_variable(x)


def _axis(axis):
    if axis is None:
        return None
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an integer or None, got {axis!r}")
    return int(axis)


def cumsum(x, axis=None):
    """``np.cumsum(x, axis)`` (``axis=None``: of the flattened ``x``)."""
    return _core.extra("cumsum", [_var(x)], axis=_axis(axis))[0]


def cumprod(x, axis=None):
    """``np.cumprod(x, axis)`` (``axis=None``: of the flattened ``x``)."""
    return _core.extra("cumprod", [_var(x)], axis=_axis(axis))[0]


def diff(x, n=1, axis=-1):
    """``np.diff(x, n, axis)``: the ``n``-th forward difference along ``axis``."""
    if int(n) < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    return _core.extra("diff", [_var(x)], axis=_axis(axis), n=int(n))[0]


def repeat(a, repeats, axis=None):
    """``np.repeat(a, repeats, axis)``: ``repeats`` an integer or one count per entry."""
    r = _var(repeats)
    if r.dtype.startswith("float") or r.dtype == "bool":
        raise TypeError(f"repeat: repeats must be integers, got dtype {r.dtype}")
    return _core.extra("repeat", [_var(a), r], axis=_axis(axis))[0]


def searchsorted(x, v, side="left", sorter=None):
    """``np.searchsorted(x, v, side, sorter)`` for a sorted vector ``x``."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    inputs = [_var(x), _var(v)] + ([_var(sorter)] if sorter is not None else [])
    return _core.extra("searchsorted", inputs, right=side == "right")[0]


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """``np.unique(ar, return_index, return_inverse, return_counts, axis)``: the sorted
    distinct values of the flattened ``ar`` (``axis=None``, the ``unique`` primitive) or the
    sorted distinct slices along ``axis`` (a composition, see ``_unique_along``), then the
    first indices, the inverse and the counts that were asked for."""
    x = _var(ar)
    if axis is not None:
        return _unique_along(x, _axis(axis), bool(return_index), bool(return_inverse), bool(return_counts))
    outs = _core.extra(
        "unique",
        [x],
        return_index=bool(return_index),
        return_inverse=bool(return_inverse),
        return_counts=bool(return_counts),
    )
    if return_inverse and x.ndim != 1:
        k = 1 + int(bool(return_index))
        outs[k] = _basic.reshape(outs[k], _basic.shape(x))
    return outs[0] if len(outs) == 1 else tuple(outs)


def _unique_along(x, axis, return_index, return_inverse, return_counts):
    """``np.unique`` along ``axis``: the slices along ``axis`` become the rows of a matrix
    ``r`` (``n`` rows), compared pairwise in lexicographic order, NumPy's order for slices.
    ``eq[i, k]`` says rows ``i`` and ``k`` are equal; ``less[i, k]`` that row ``i`` sorts
    before row ``k`` (at their first differing column, found with a ``cumsum`` of the
    differences). A row is kept where no earlier row equals it (so the index is the first
    occurrence); its inverse is the number of kept rows before it. This takes O(n²·m) work and
    memory for ``m`` columns, which suits the sizes unique along an axis is used for. Slices
    are compared by value, so a slice holding a NaN equals no other (NumPy may merge such
    slices)."""
    if x.ndim == 0:
        raise ValueError("unique: axis must be None for a 0-d tensor")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"unique: axis {axis} is out of bounds for a tensor of rank {x.ndim}")
    axis %= x.ndim
    moved = _basic.moveaxis(x, axis, 0)
    r = _basic.reshape(moved, [moved.shape[0], -1])
    a = r.dimshuffle(0, "x", 1)
    b = r.dimshuffle("x", 0, 1)
    differ = _basic.cast(_math.neq(a, b), "int64")
    before = _math.eq(cumsum(differ, axis=2) - differ, 0)
    less = _math.any(_math.and_(before, _math.lt(a, b)), axis=2)
    eq = _math.eq(_math.sum(differ, axis=2), 0)
    n = r.shape[0]
    idx = _basic.arange(n)
    earlier = _math.lt(idx.dimshuffle("x", 0), idx.dimshuffle(0, "x"))
    kept = _math.invert(_math.any(_math.and_(eq, earlier), axis=1))
    inverse = _math.sum(_math.and_(kept.dimshuffle(0, "x"), less), axis=0)
    kept_idx = _basic.flatnonzero(kept)
    from oxtensor.tensor.sort import argsort

    first = _core.take(kept_idx, argsort(_core.take(inverse, kept_idx, 0)), 0)
    outs = [_core.take(x, first, axis)]
    if return_index:
        outs.append(first)
    if return_inverse:
        outs.append(inverse)
    if return_counts:
        outs.append(_core.take(_math.sum(eq, axis=1), first, 0))
    return outs[0] if len(outs) == 1 else tuple(outs)


def bincount(x, weights=None, minlength=None, assert_nonneg=False):
    """``np.bincount(x, weights, minlength)`` (negative entries are an error at run time)."""
    inputs = [_var(x)] + ([_var(weights)] if weights is not None else [])
    return _core.extra("bincount", inputs, minlength=int(minlength or 0))[0]


def broadcast_shape(*arrays, arrays_are_shapes=False):
    """The broadcast shape of ``arrays`` (or of shapes given as tuples) as a tuple of
    ``int64`` scalars (constants where static)."""
    shapes = []
    for a in arrays:
        if arrays_are_shapes:
            shapes.append(tuple(_var(d) if not isinstance(d, int) else d for d in a))
        else:
            v = _var(a)
            shapes.append(tuple(s if s is not None else v.shape[i] for i, s in enumerate(v.type.shape)))
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(ndim):
        dims = [s[d - ndim + len(s)] for s in shapes if d - ndim + len(s) >= 0]
        known = [x for x in dims if isinstance(x, (int, np.integer)) and x != 1]
        if known:
            out.append(_basic.constant(np.int64(known[0])))
        elif all(isinstance(x, (int, np.integer)) for x in dims):
            out.append(_basic.constant(np.int64(1)))
        else:
            sym = [x for x in dims if not isinstance(x, (int, np.integer))]
            m = sym[0]
            for x in sym[1:]:
                m = _math.maximum(m, x)
            out.append(_basic.cast(m, "int64"))
    return tuple(out)


def broadcast_arrays(*args):
    """``np.broadcast_arrays``: each argument broadcast to the common shape."""
    vs = [_var(a) for a in args]
    shape = broadcast_shape(*vs)
    return tuple(_basic.broadcast_to(v, shape) for v in vs)


def compress(condition, x, axis=None):
    """``np.compress(condition, x, axis)``: the entries of ``x`` along ``axis`` where the
    vector ``condition`` is true."""
    from oxtensor.tensor.basic import flatnonzero

    idx = flatnonzero(_var(condition))
    x = _var(x)
    if axis is None:
        return _core.take(_basic.flatten(x, 1), idx, 0)
    return _core.take(x, idx, int(axis))


def concat_with_broadcast(tensor_list, axis=0):
    """Concatenates along ``axis`` after broadcasting every other dimension."""
    vs = [_var(t) for t in tensor_list]
    ndim = max(v.ndim for v in vs)
    vs = [_basic.shape_padleft(v, ndim - v.ndim) if v.ndim < ndim else v for v in vs]
    ax = axis % ndim
    shapes = broadcast_shape(*[_basic.shape_padaxis(_math.sum(v, axis=ax), ax) for v in vs])
    out = []
    for v in vs:
        target = list(shapes)
        target[ax] = v.shape[ax]
        out.append(_basic.broadcast_to(v, target))
    return _basic.concatenate(out, axis=ax)


def fill_diagonal_offset(a, val, offset):
    """``a`` (a matrix) with its ``offset`` diagonal set to ``val`` (PyTensor's
    ``fill_diagonal_offset``)."""
    a = _var(a)
    if a.ndim != 2:
        raise TypeError(f"fill_diagonal_offset: a must be a matrix, got {a.ndim} dimensions")
    n, m = a.shape[0], a.shape[1]
    i = _basic.arange(n).dimshuffle(0, "x")
    j = _basic.arange(m).dimshuffle("x", 0)
    mask = _math.eq(j - i, offset)
    return _math.switch(mask, _basic.cast(_var(val), a.dtype), a)


def fill_diagonal(a, val):
    """``a`` with its main diagonal set to ``val`` (any rank: entries with all indices
    equal, ``np.fill_diagonal``)."""
    a = _var(a)
    if a.ndim < 2:
        raise TypeError(f"fill_diagonal: a must have at least 2 dimensions, got {a.ndim}")
    if a.ndim == 2:
        return fill_diagonal_offset(a, val, 0)
    mask = None
    first = _basic.arange(a.shape[0])
    for d in range(1, a.ndim):
        pattern = ["x"] * a.ndim
        pattern[d] = 0
        p0 = ["x"] * a.ndim
        p0[0] = 0
        eq = _math.eq(first.dimshuffle(*p0), _basic.arange(a.shape[d]).dimshuffle(*pattern))
        mask = eq if mask is None else _math.and_(mask, eq)
    return _math.switch(mask, _basic.cast(_var(val), a.dtype), a)


def _float_dtype(dtype, *vals):
    if dtype is not None:
        return dtype
    from oxtensor.configdefaults import config

    return config.floatX


def linspace(start, stop=None, num=50, endpoint=True, retstep=False, dtype=None, axis=0, end=None, steps=None):
    """``np.linspace``: ``num`` evenly spaced values from ``start`` to ``stop``."""
    stop = end if stop is None else stop
    num = steps if steps is not None else num
    dt = _float_dtype(dtype)
    start = _basic.cast(_var(start), "float64")
    stop = _basic.cast(_var(stop), "float64")
    num_v = _basic.cast(_var(num), "float64")
    div = num_v - 1.0 if endpoint else num_v
    step = (stop - start) / _math.maximum(div, 1.0)
    ramp = _basic.cast(_basic.arange(_basic.cast(_var(num), "int64")), "float64")
    nd = max(start.ndim, stop.ndim)
    if nd:
        ramp = ramp.dimshuffle(*([0] + ["x"] * nd))
        start_b, step_b = _basic.shape_padleft(start, 1), _basic.shape_padleft(step, 1)
    else:
        start_b, step_b = start, step
    out = start_b + ramp * step_b
    if endpoint:
        last = _math.eq(ramp, num_v - 1.0)
        stop_b = _basic.shape_padleft(stop, 1) if nd else stop
        out = _math.switch(_math.and_(last, _math.gt(num_v, 1.0)), stop_b, out)
    if nd and axis != 0:
        out = moveaxis_(out, 0, axis)
    out = _basic.cast(out, dt)
    if retstep:
        return out, _basic.cast(step, dt)
    return out


def moveaxis_(x, src, dst):
    from oxtensor.tensor.basic import moveaxis

    return moveaxis(x, src, dst)


def logspace(start, stop=None, num=50, base=10.0, endpoint=True, dtype=None, axis=0, end=None, steps=None):
    """``np.logspace``: ``base ** linspace(start, stop, num)``."""
    lin = linspace(start, stop, num, endpoint=endpoint, dtype="float64", axis=axis, end=end, steps=steps)
    return _basic.cast(_math.pow(_basic.cast(_var(base), "float64"), lin), _float_dtype(dtype))


def geomspace(start, stop=None, num=50, base=10.0, endpoint=True, dtype=None, axis=0, end=None, steps=None):
    """``np.geomspace``: values spaced evenly on a log scale from ``start`` to ``stop``
    (both of the same sign, non-zero)."""
    stop = end if stop is None else stop
    start = _basic.cast(_var(start), "float64")
    stop = _basic.cast(_var(stop), "float64")
    sign = _math.sign(start)
    lo = _math.log10(_math.abs(start))
    hi = _math.log10(_math.abs(stop))
    out = logspace(lo, hi, num, base=10.0, endpoint=endpoint, dtype="float64", axis=axis, steps=steps)
    nd = max(start.ndim, stop.ndim)
    if nd and axis == 0:
        sign_b = _basic.shape_padleft(sign, 1)
    else:
        sign_b = sign
    out = out * sign_b
    # The ends exactly as given, as NumPy does.
    n = _basic.cast(_var(num if steps is None else steps), "int64")
    if nd == 0:
        out = _core.set_subtensor(out[0], start)
        if endpoint:
            out = _math.switch(_math.gt(n, 1), _core.set_subtensor(out[-1], stop), out)
    return _basic.cast(out, _float_dtype(dtype))


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """``np.ravel_multi_index``: flat indices from a tuple of coordinate arrays."""
    if mode != "raise":
        raise NotImplementedError("ravel_multi_index: only mode='raise' is supported")
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    coords = [_basic.cast(_var(c), "int64") for c in multi_index]
    dims_v = _var(dims)
    n = len(coords)
    dlist = [_basic.cast(dims_v[i], "int64") for i in range(n)]
    axes = range(n) if order == "C" else reversed(range(n))
    out = None
    for i in axes:
        out = coords[i] if out is None else out * dlist[i] + coords[i]
    return out


def unravel_index(indices, dims, order="C"):
    """``np.unravel_index``: a tuple of coordinate arrays from flat indices."""
    if order not in ("C", "F"):
        raise ValueError(f"unravel_index: order must be 'C' or 'F', got {order!r}")
    idx = _basic.cast(_var(indices), "int64")
    dims_v = _var(dims)
    n = _basic.get_vector_length(dims_v)
    dlist = [_basic.cast(dims_v[i], "int64") for i in range(n)]
    out = [None] * n
    axes = list(reversed(range(n))) if order == "C" else list(range(n))
    rest = idx
    for i in axes:
        out[i] = _math.mod(rest, dlist[i])
        rest = _math.floor_div(rest, dlist[i])
    return tuple(out)


def bartlett(M):
    """``np.bartlett(M)``: the triangular window of ``M`` points."""
    m = _basic.cast(_var(M), "float64")
    n = _basic.cast(_basic.arange(_basic.cast(_var(M), "int64")), "float64")
    half = (m - 1.0) / 2.0
    w = 1.0 - _math.abs(n - half) / _math.maximum(half, 1e-300)
    return _math.switch(_math.le(m, 1.0), _basic.ones_like(n), w)
