"""The rest of ``pytensor.tensor.basic``: layout helpers (``moveaxis``, ``roll``, ``tile``,
``flip``, ``atleast_Nd``…), triangle helpers (``tri``, ``tril_indices``…), ``nonzero`` and
friends, ``take_along_axis``, ``stacklists``, ``choose`` and the rank-6/7 constructors.

Only ``nonzero`` is a graph primitive (its length depends on the values); everything else is
composed from slices, transposes, joins, broadcasting and ``take``, so it is differentiable
wherever its pieces are. Imported into ``oxtensor.tensor.basic``.
"""

from __future__ import annotations

import numpy as np

from oxtensor import _core
from oxtensor.tensor import basic as _basic
from oxtensor.tensor import math as _math
from oxtensor.tensor._matrix import diag, diagonal, matrix_transpose, trace, tril, triu
from oxtensor.tensor.math import switch, where

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "atleast_Nd",
    "choose",
    "diag",
    "diagonal",
    "empty",
    "empty_like",
    "extract_diag",
    "fill",
    "flatnonzero",
    "flip",
    "get_scalar_constant_value",
    "get_underlying_scalar_constant_value",
    "get_vector_length",
    "horizontal_stack",
    "identity",
    "identity_like",
    "inverse_permutation",
    "is_flat",
    "join_dims",
    "matrix_transpose",
    "moveaxis",
    "nonzero",
    "nonzero_values",
    "permute_row_elements",
    "roll",
    "scalar_from_tensor",
    "second",
    "slice_at_axis",
    "split_dims",
    "stacklists",
    "swapaxes",
    "switch",
    "take_along_axis",
    "tensor_copy",
    "tensor_from_scalar",
    "tile",
    "trace",
    "transfer",
    "tri",
    "tril",
    "tril_indices",
    "tril_indices_from",
    "triu",
    "triu_indices",
    "triu_indices_from",
    "vertical_stack",
    "where",
]


class NotScalarConstantError(ValueError):
    """Raised by ``get_scalar_constant_value`` for a variable that is not a constant scalar."""


def _var(x):
    return _basic.as_tensor_variable(x)


def _norm(axis, ndim, what):
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of bounds for a tensor of rank {ndim}")
    return axis % ndim


# ---- constructors of rank 6 and 7 -------------------------------------------------------


def _rank_ctor(n):
    def make(name=None, dtype=None, shape=(None,) * n):
        return _basic.tensor(name, dtype=dtype, shape=shape)

    make.__name__ = make.__qualname__ = f"tensor{n}"
    make.__doc__ = f"A {n}-d symbolic input."
    return make


tensor6 = _rank_ctor(6)
tensor7 = _rank_ctor(7)
__all__ += ["tensor6", "tensor7"]
for _p, _dt in _basic._PREFIXES.items():
    for _k, _base in (("tensor6", tensor6), ("tensor7", tensor7)):
        globals()[_p + _k] = _basic._prefixed(_base, _dt, _p + _k)
        __all__.append(_p + _k)


# ---- layout -------------------------------------------------------------------------------


def atleast_Nd(arry, *, n=1, left=True):
    """``arry`` with broadcastable dimensions added (on the left, or right) up to rank ``n``."""
    x = _var(arry)
    if x.ndim >= n:
        return x
    k = n - x.ndim
    return _basic.shape_padleft(x, k) if left else _basic.shape_padright(x, k)


def _atleast(n, arys):
    out = [atleast_Nd(a, n=n) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    """``np.atleast_1d``."""
    return _atleast(1, arys)


def atleast_2d(*arys):
    """``np.atleast_2d``."""
    return _atleast(2, arys)


def atleast_3d(*arys):
    """``np.atleast_3d`` (a vector becomes ``(1, n, 1)``, a matrix ``(m, n, 1)``)."""
    out = []
    for a in arys:
        x = _var(a)
        if x.ndim == 0:
            x = x.dimshuffle("x", "x", "x")
        elif x.ndim == 1:
            x = x.dimshuffle("x", 0, "x")
        elif x.ndim == 2:
            x = x.dimshuffle(0, 1, "x")
        out.append(x)
    return out[0] if len(out) == 1 else out


def moveaxis(a, source, destination):
    """``np.moveaxis``: the axes ``source`` moved to ``destination``, the others in order."""
    x = _var(a)
    src = [source] if isinstance(source, (int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of elements")
    src = [_norm(s, x.ndim, "moveaxis") for s in src]
    dst = [_norm(d, x.ndim, "moveaxis") for d in dst]
    order = [d for d in range(x.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _basic.transpose(x, order)


def swapaxes(x, axis1, axis2):
    """``np.swapaxes``."""
    x = _var(x)
    a1, a2 = _norm(axis1, x.ndim, "swapaxes"), _norm(axis2, x.ndim, "swapaxes")
    order = list(range(x.ndim))
    order[a1], order[a2] = order[a2], order[a1]
    return _basic.transpose(x, order)


def flip(arr, axis=None):
    """``np.flip``: the entries reversed along ``axis`` (all axes when ``None``)."""
    x = _var(arr)
    axes = range(x.ndim) if axis is None else ([axis] if isinstance(axis, (int, np.integer)) else axis)
    axes = {_norm(a, x.ndim, "flip") for a in axes}
    return x[tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(x.ndim))]


def roll(x, shift, axis=None):
    """``np.roll``: entries shifted by ``shift`` along ``axis`` (of the flattened ``x`` when
    ``None``), wrapping around."""
    x = _var(x)
    if axis is None:
        return _basic.reshape(roll(_basic.flatten(x, 1), shift, 0), _basic.shape(x))
    if isinstance(axis, (tuple, list)):
        shifts = shift if isinstance(shift, (tuple, list)) else [shift] * len(axis)
        for s, a in zip(shifts, axis):
            x = roll(x, s, a)
        return x
    a = _norm(axis, x.ndim, "roll")
    n = x.shape[a]
    s = _math.mod(_basic.cast(_var(shift), "int64"), _math.maximum(n, 1))
    idx = _math.mod(_basic.arange(n) - s + n, _math.maximum(n, 1))
    return _core.take(x, idx, a)


def tile(A, reps):
    """``np.tile``: ``A`` repeated ``reps`` times along each axis (``reps`` integers)."""
    x = _var(A)
    reps = [int(reps)] if isinstance(reps, (int, np.integer)) else [int(r) for r in reps]
    nd = max(x.ndim, len(reps))
    x = atleast_Nd(x, n=nd)
    reps = [1] * (nd - len(reps)) + reps
    for d, r in enumerate(reps):
        if r < 0:
            raise ValueError(f"tile: reps must be non-negative, got {r}")
        if r != 1:
            x = _basic.concatenate([x] * r, axis=d) if r > 0 else x[tuple([slice(None)] * d + [slice(0, 0)])]
    return x


def horizontal_stack(*args):
    """``np.hstack``: along axis 1 (axis 0 for vectors)."""
    vs = [_var(a) for a in args]
    if all(v.ndim == 1 for v in vs):
        return _basic.concatenate(vs, axis=0)
    return _basic.concatenate(vs, axis=1)


def vertical_stack(*args):
    """``np.vstack``: along axis 0, vectors as rows."""
    return _basic.concatenate([atleast_Nd(a, n=2) for a in args], axis=0)


def split_dims(x, shape, axis=0):
    """``x`` with dimension ``axis`` split into ``shape`` (its extents must multiply to it)."""
    x = _var(x)
    a = _norm(axis, x.ndim, "split_dims")
    shape = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    dims = [x.shape[d] for d in range(a)] + shape + [x.shape[d] for d in range(a + 1, x.ndim)]
    return _basic.reshape(x, dims)


def join_dims(x, start_axis=0, n_axes=None):
    """``x`` with ``n_axes`` dimensions from ``start_axis`` on merged into one."""
    x = _var(x)
    a = _norm(start_axis, x.ndim, "join_dims") if x.ndim else 0
    n = x.ndim - a if n_axes is None else n_axes
    merged = 1
    for d in range(a, a + n):
        merged = merged * x.shape[d]
    dims = [x.shape[d] for d in range(a)] + [merged] + [x.shape[d] for d in range(a + n, x.ndim)]
    return _basic.reshape(x, dims)


def slice_at_axis(sl, axis):
    """The index tuple applying slice ``sl`` at dimension ``axis`` (``(:,) * axis + (sl, ...)``)."""
    return (slice(None),) * axis + (sl,) + (Ellipsis,)


def stacklists(arg):
    """A tensor from nested lists of scalars or tensors (``stack`` at every level)."""
    if isinstance(arg, (tuple, list)):
        return _basic.stack([stacklists(a) for a in arg])
    return _var(arg)


class _nd_grid:
    """``pt.mgrid``/``pt.ogrid`` (NumPy's ``np.mgrid``/``np.ogrid``): indexed with slices,
    one ``arange`` per slice (``linspace`` with ``abs(step)`` points, the stop included, for
    a complex step as NumPy), broadcast to the full grid (``sparse=False``, a list of dense
    tensors) or left as open axes (``sparse=True``). One slice gives its range alone."""

    def __init__(self, sparse=False):
        self.sparse = sparse

    @staticmethod
    def _range(sl):
        if not isinstance(sl, slice):
            raise TypeError(f"mgrid/ogrid: index with slices, got {sl!r}")
        if sl.stop is None:
            raise ValueError("mgrid/ogrid: every slice needs a stop")
        start = 0 if sl.start is None else sl.start
        step = 1 if sl.step is None else sl.step
        if isinstance(step, complex):
            from oxtensor.tensor.extra_ops import linspace

            return linspace(start, sl.stop, int(abs(step)))
        return _basic.arange(start, sl.stop, step)

    def __getitem__(self, key):
        if isinstance(key, slice):
            return self._range(key)
        ranges = [self._range(sl) for sl in key]
        nd = len(ranges)
        opened = [r.dimshuffle(*["x" if d != j else 0 for d in range(nd)]) for j, r in enumerate(ranges)]
        if self.sparse:
            return opened
        shape = [r.shape[0] for r in ranges]
        return [_basic.broadcast_to(r, shape) for r in opened]


mgrid = _nd_grid()
ogrid = _nd_grid(sparse=True)
__all__ += ["mgrid", "ogrid"]


# ---- values and constants -----------------------------------------------------------------


def empty(shape, dtype=None):
    """PyTensor's ``empty`` (``np.empty``): a tensor of ``shape`` (an int, a sequence or a
    symbolic vector) and ``dtype`` (default ``floatX``) whose values are unspecified; here
    zeros."""
    return _basic.zeros(shape, dtype=dtype)


def empty_like(prototype, dtype=None):
    """PyTensor's ``empty_like`` (``np.empty_like``): unspecified values (here zeros) of
    ``prototype``'s shape and ``dtype`` (default ``prototype``'s)."""
    return _basic.zeros_like(prototype, dtype=dtype)


def second(a, b):
    """``b`` broadcast against ``a`` (PyTensor's ``second``/``fill``)."""
    from oxtensor.tensor.extra_ops import broadcast_shape

    a, b = _var(a), _var(b)
    return _basic.broadcast_to(b, broadcast_shape(a, b))


def fill(model, value):
    """``value`` broadcast to the shape of ``model``."""
    return second(model, value)


def identity(x):
    """``x`` itself (PyTensor's identity op; graphs are values here, so no copy is needed)."""
    return _var(x)


tensor_copy = identity


def transfer(var, target):
    """``var`` on ``target``; only ``"cpu"`` exists here."""
    if target not in ("cpu", None):
        raise ValueError(f"transfer: unknown target {target!r}; oxtensor runs on 'cpu'")
    return _var(var)


def identity_like(x, dtype=None):
    """An identity matrix of ``x``'s (matrix) shape."""
    x = _var(x)
    if x.ndim != 2:
        raise TypeError(f"identity_like: x must be a matrix, got {x.ndim} dimensions")
    return _basic.eye(x.shape[0], x.shape[1], dtype=dtype or x.dtype)


def tensor_from_scalar(s):
    """A 0-d tensor from a scalar (scalars are 0-d tensors here)."""
    return _var(s)


def scalar_from_tensor(t):
    """The scalar of a 0-d tensor (scalars are 0-d tensors here)."""
    v = _var(t)
    if v.ndim != 0:
        raise TypeError(f"scalar_from_tensor: expected a 0-d tensor, got {v.ndim} dimensions")
    return v


def get_underlying_scalar_constant_value(v, elemwise=True, only_process_constants=False, max_recur=10):
    """The value of a constant scalar (a NumPy scalar); ``NotScalarConstantError`` otherwise."""
    if isinstance(v, (int, float, bool, np.number, np.bool_)):
        return np.asarray(v)
    if isinstance(v, np.ndarray):
        if v.size == 1:
            return v.reshape(())
        raise NotScalarConstantError(f"{v!r} is not a scalar constant")
    data = getattr(v, "data", None)
    if data is not None:
        data = np.asarray(data)
        if data.size == 1:
            return data.reshape(())
    raise NotScalarConstantError(f"{v} is not a scalar constant")


def get_scalar_constant_value(v, elemwise=True, only_process_constants=False, max_recur=10, raise_not_constant=True):
    """As ``get_underlying_scalar_constant_value``; returns ``v`` unchanged instead of raising
    when ``raise_not_constant`` is false."""
    try:
        return get_underlying_scalar_constant_value(v, elemwise, only_process_constants, max_recur)
    except NotScalarConstantError:
        if raise_not_constant:
            raise
        return v


def get_vector_length(v):
    """The static length of a vector (a list/tuple's length, or the static extent)."""
    if isinstance(v, (list, tuple)):
        return len(v)
    x = _var(v)
    if x.ndim != 1:
        raise ValueError(f"get_vector_length: {x} is not a vector (rank {x.ndim})")
    n = x.type.shape[0]
    if n is None:
        raise ValueError(f"get_vector_length: the length of {x} is not known statically")
    return int(n)


def is_flat(var, ndim=1):
    """Whether ``var`` has rank ``ndim``."""
    return _var(var).ndim == ndim


# ---- non-zero entries ---------------------------------------------------------------------


def nonzero(a, return_matrix=False):
    """``np.nonzero(a)``: a tuple of coordinate vectors, or one ``(ndim, n)`` matrix."""
    x = _var(a)
    m = _core.extra("nonzero", [x])[0]
    if return_matrix:
        return m
    return tuple(m[d] for d in range(x.ndim))


def flatnonzero(a):
    """``np.flatnonzero(a)``: indices of the non-zero entries of the flattened ``a``."""
    return _core.extra("nonzero", [_basic.flatten(_var(a), 1)])[0][0]


def nonzero_values(a):
    """The non-zero entries of the flattened ``a``."""
    flat = _basic.flatten(_var(a), 1)
    return _core.take(flat, flatnonzero(flat), 0)


# ---- indexing compositions ----------------------------------------------------------------


def take_along_axis(arr, indices, axis=0):
    """``np.take_along_axis`` (``axis=None``: of the flattened ``arr``)."""
    x, i = _var(arr), _var(indices)
    if not i.dtype.startswith(("int", "uint")):
        raise TypeError(f"take_along_axis: indices must be integers, got dtype {i.dtype}")
    if axis is not None:
        _norm(axis, x.ndim, "take_along_axis")
    return _core.extra("take_along_axis", [x, i], axis=axis)[0]


def inverse_permutation(perm):
    """The inverse of a permutation (along the last axis): ``argsort(perm)``."""
    return _core.extra("argsort", [_var(perm)], axis=-1)[0]


def permute_row_elements(x, y, inverse=False):
    """``x`` with the entries of each row (last axis) permuted by ``y``: ``out[..., i] =
    x[..., y[..., i]]``, or the inverse permutation."""
    x, y = _var(x), _var(y)
    if inverse:
        y = inverse_permutation(y)
    nd = max(x.ndim, y.ndim)
    x, y = atleast_Nd(x, n=nd), atleast_Nd(y, n=nd)
    from oxtensor.tensor.extra_ops import broadcast_shape

    shape = broadcast_shape(x, y)
    return take_along_axis(_basic.broadcast_to(x, shape), _basic.broadcast_to(y, shape), axis=-1)


def choose(a, choices, mode="raise"):
    """``np.choose(a, choices)``: ``out[i] = choices[a[i]][i]`` (broadcasting ``a`` and every
    choice)."""
    if mode != "raise":
        raise NotImplementedError("choose: only mode='raise' is supported")
    from oxtensor.tensor.extra_ops import broadcast_arrays

    a = _var(a)
    cs = list(choices) if isinstance(choices, (list, tuple)) else [choices[k] for k in range(get_vector_length(_var(choices).shape))]
    parts = broadcast_arrays(a, *cs)
    stacked = _basic.stack(list(parts[1:]), axis=0)
    idx = _basic.shape_padleft(_basic.cast(parts[0], "int64"), 1)
    return take_along_axis(stacked, idx, axis=0)[0]


def extract_diag(x):
    """The main diagonal of a matrix."""
    return diagonal(x)


# ---- triangles ----------------------------------------------------------------------------


def tri(N, M=None, k=0, dtype=None):
    """``np.tri``: ones at and below diagonal ``k``."""
    from oxtensor.configdefaults import config

    M = N if M is None else M
    i = _basic.arange(N).dimshuffle(0, "x")
    j = _basic.arange(M).dimshuffle("x", 0)
    return _basic.cast(_math.ge(i + k, j), dtype or config.floatX)


def tril_indices(n, k=0, m=None):
    """``np.tril_indices``: the coordinates of the lower triangle of an ``(n, m)`` matrix."""
    return nonzero(tri(n, m, k, dtype="bool"))


def triu_indices(n, k=0, m=None):
    """``np.triu_indices``: the coordinates of the upper triangle."""
    return nonzero(_math.invert(tri(n, m, k - 1, dtype="bool")))


def tril_indices_from(a, k=0):
    """``np.tril_indices_from``."""
    a = _var(a)
    if a.ndim != 2:
        raise ValueError(f"tril_indices_from: a must be a matrix, got {a.ndim} dimensions")
    return tril_indices(a.shape[0], k, a.shape[1])


def triu_indices_from(a, k=0):
    """``np.triu_indices_from``."""
    a = _var(a)
    if a.ndim != 2:
        raise ValueError(f"triu_indices_from: a must be a matrix, got {a.ndim} dimensions")
    return triu_indices(a.shape[0], k, a.shape[1])


# ---- padding and interpolation ------------------------------------------------------------

from oxtensor.tensor.pad import pad  # noqa: E402


def interp(x, xp, fp, left=None, right=None, period=None):
    """``np.interp``: piecewise-linear interpolation of the points ``(xp, fp)`` (``xp``
    increasing) at ``x``; ``left``/``right`` outside (default ``fp[0]``/``fp[-1]``)."""
    from oxtensor.tensor.extra_ops import searchsorted

    if period is not None:
        raise NotImplementedError("interp: period is not supported")
    x, xp, fp = _var(x), _var(xp), _var(fp)
    xf = "float64" if not x.dtype.startswith("float") else x.dtype
    x, xp, fp = _basic.cast(x, xf), _basic.cast(xp, xf), _basic.cast(fp, xf)
    n = xp.shape[0]
    i = _math.clip(searchsorted(xp, x, side="right"), 1, n - 1)
    x0, x1 = _core.take(xp, i - 1, 0), _core.take(xp, i, 0)
    y0, y1 = _core.take(fp, i - 1, 0), _core.take(fp, i, 0)
    out = y0 + (x - x0) * (y1 - y0) / (x1 - x0)
    out = _math.switch(_math.eq(x, x1), y1, out)
    left = fp[0] if left is None else _basic.cast(_var(left), xf)
    right = fp[-1] if right is None else _basic.cast(_var(right), xf)
    out = _math.switch(_math.lt(x, xp[0]), left, out)
    return _math.switch(_math.gt(x, xp[-1]), right, out)


def interpolate1d(x, y, method="linear", left_pad=None, right_pad=None, extrapolate=True):
    """A function interpolating the points ``(x, y)`` (PyTensor's ``interpolate1d``); the
    ``linear`` method, with ``np.interp``'s constant ends when ``extrapolate`` is false."""
    if method != "linear":
        raise NotImplementedError(f"interpolate1d: method {method!r} is not supported; use 'linear'")
    if extrapolate:
        xv, yv = _var(x), _var(y)

        def linear(xn):
            xn = _var(xn)
            out = interp(xn, xv, yv)
            lo = yv[0] + (xn - xv[0]) * (yv[1] - yv[0]) / (xv[1] - xv[0])
            hi = yv[-1] + (xn - xv[-1]) * (yv[-1] - yv[-2]) / (xv[-1] - xv[-2])
            out = _math.switch(_math.lt(xn, xv[0]), lo, out)
            return _math.switch(_math.gt(xn, xv[-1]), hi, out)

        return linear
    return lambda xn: interp(xn, x, y, left=left_pad, right=right_pad)


__all__ += ["pad", "interp", "interpolate1d"]


# ---- packing and batched contractions -----------------------------------------------------


def _keep_axes(keep_axes):
    """``(n_before, n_after)``: how many leading and trailing axes ``keep_axes`` keeps, by
    PyTensor's rules (non-negative axes contiguous from 0, negative ones contiguous to -1,
    non-negative ones first)."""
    if keep_axes is None:
        return 0, 0
    axes = (keep_axes,) if isinstance(keep_axes, (int, np.integer)) else keep_axes
    try:
        axes = [int(a) for a in axes]
    except TypeError:
        raise TypeError(f"keep_axes must be an int, a sequence of ints or None, got {keep_axes!r}") from None
    if not axes:
        raise ValueError("keep_axes=[] is ambiguous; use None to ravel every axis")
    pos = [a for a in axes if a >= 0]
    neg = [a for a in axes if a < 0]
    if axes != pos + neg:
        raise ValueError(f"keep_axes: the negative axes must come after the non-negative ones, got {axes}")
    if pos != list(range(len(pos))):
        raise ValueError(f"keep_axes: the non-negative axes must be 0, 1, … in order, got {pos}")
    if neg != list(range(-len(neg), 0)):
        raise ValueError(f"keep_axes: the negative axes must be …, -2, -1 in order, got {neg}")
    return len(pos), len(neg)


def pack(*tensors, keep_axes=None):
    """PyTensor's ``pack``: each tensor with the axes between the ``keep_axes`` (leading and
    trailing ones, see ``_keep_axes``) merged into one, joined along that axis; returns the
    packed tensor and each tensor's merged extents (the vectors ``unpack`` takes).
    ``keep_axes=None`` ravels every tensor into one vector."""
    n_before, n_after = _keep_axes(keep_axes)
    packed, shapes = [], []
    for k, t in enumerate(tensors):
        v = _var(t)
        n_merged = v.ndim - n_before - n_after
        if n_merged < 0:
            raise ValueError(
                f"pack: input {k} has {v.ndim} dimensions, but keep_axes={keep_axes!r} needs at least {n_before + n_after}"
            )
        shapes.append(_basic.shape(v)[n_before : n_before + n_merged])
        packed.append(join_dims(v, n_before, n_merged) if n_merged else _basic.shape_padaxis(v, n_before))
    return _basic.concatenate(packed, axis=n_before), shapes


def unpack(packed_input, packed_shapes, keep_axes=None):
    """PyTensor's ``unpack``, the inverse of ``pack`` with the same ``keep_axes``: the one
    axis of ``packed_input`` not kept is split into pieces of ``prod(shape)`` entries, each
    reshaped to its entry of ``packed_shapes``."""
    packed = _var(packed_input)
    n_before, n_after = _keep_axes(keep_axes)
    if packed.ndim != n_before + n_after + 1:
        raise ValueError(
            f"unpack: packed_input must have one dimension more than keep_axes={keep_axes!r} keeps "
            f"({n_before + n_after + 1}), got {packed.ndim}"
        )
    out, start = [], 0
    for s in packed_shapes:
        s = _var(s) if not isinstance(s, (tuple, list)) else s
        n = get_vector_length(s)
        size = 1
        for d in range(n):
            size = size * s[d]
        piece = packed[(slice(None),) * n_before + (slice(start, start + size),)]
        out.append(split_dims(piece, [s[d] for d in range(n)], n_before))
        start = start + size
    return out


def batched_tensordot(x, y, axes=2):
    """``tensordot`` of each pair ``x[i]``, ``y[i]`` along the leading (batch) dimension:
    ``axes`` an int (the last ``axes`` of ``x`` with the first ``axes`` after the batch of
    ``y``) or two sequences of axes (counted with the batch)."""
    from oxtensor.tensor._matrix import einsum

    x, y = _var(x), _var(y)
    letters = "bcdefghijklmnopqrstuvwxyz"
    if isinstance(axes, (int, np.integer)):
        ax_x = list(range(x.ndim - axes, x.ndim))
        ax_y = list(range(1, 1 + axes))
    else:
        ax_x, ax_y = [a % x.ndim for a in axes[0]], [a % y.ndim for a in axes[1]]
    sx = ["a"] + [letters[i] for i in range(x.ndim - 1)]
    sy = ["a"] + [letters[x.ndim - 1 + i] for i in range(y.ndim - 1)]
    for i, j in zip(ax_x, ax_y):
        sy[j] = sx[i]
    out = ["a"] + [sx[i] for i in range(1, x.ndim) if i not in ax_x] + [sy[j] for j in range(1, y.ndim) if j not in ax_y]
    return einsum(f"{''.join(sx)},{''.join(sy)}->{''.join(out)}", x, y)


__all__ += ["pack", "unpack", "batched_tensordot"]


# ---- vectorize ----------------------------------------------------------------------------


def _parse_signature(signature):
    def dims(group):
        group = group.strip()
        return [d for d in group.strip("()").split(",") if d.strip()]

    ins, outs = signature.replace(" ", "").split("->")
    split = lambda s: [g + ")" for g in s.split(")")[:-1]] if s else []  # noqa: E731
    return [len(dims(g.lstrip(","))) for g in split(ins)], [len(dims(g.lstrip(","))) for g in split(outs)]


def vectorize(func, signature=None):
    """``np.vectorize`` for symbolic functions: the returned function applies ``func`` to each
    batch entry of its inputs (leading dimensions beyond the core dimensions of
    ``signature``, ``"(m,n),(n)->(m)"``; all inputs and outputs scalars when ``None``), as a
    ``scan`` over the flattened batch, and reshapes the results to the batch shape."""

    def vectorized(*inputs):
        import oxtensor

        from oxtensor.tensor.extra_ops import broadcast_shape

        vs = [_var(v) for v in inputs]
        core_in, core_out = _parse_signature(signature) if signature else ([0] * len(vs), None)
        if len(core_in) != len(vs):
            raise TypeError(f"vectorize: the signature has {len(core_in)} inputs, got {len(vs)}")
        batch_nd = max(v.ndim - c for v, c in zip(vs, core_in))
        batch_parts = []
        for v, c in zip(vs, core_in):
            if v.ndim - c < 0:
                raise ValueError(f"vectorize: input {v} has fewer than {c} core dimensions")
            batch_parts.append(_basic.shape_padleft(v, batch_nd - (v.ndim - c)))
        batch = broadcast_shape(*[_math.sum(p, axis=tuple(range(batch_nd, p.ndim))) if p.ndim > batch_nd else p for p in batch_parts])
        flat = []
        for p, c in zip(batch_parts, core_in):
            target = list(batch) + [p.shape[d] for d in range(batch_nd, p.ndim)]
            b = _basic.broadcast_to(p, target)
            flat.append(_basic.reshape(b, [-1] + [p.shape[d] for d in range(batch_nd, p.ndim)]))
        res, _ = oxtensor.scan(lambda *row: func(*row), sequences=flat)
        single = not isinstance(res, (list, tuple))
        res = [res] if single else list(res)
        out = [_basic.reshape(r, list(batch) + [r.shape[d] for d in range(1, r.ndim)]) for r in res]
        return out[0] if single else out

    return vectorized


__all__ += ["vectorize"]
