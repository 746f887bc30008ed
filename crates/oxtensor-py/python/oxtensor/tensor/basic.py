"""Constructors, constants and shape/layout functions of ``oxtensor.tensor``."""

from __future__ import annotations

import builtins

import numpy as np

from oxtensor import _core
from oxtensor._convert import SUPPORTED_DTYPES, dtype_name
from oxtensor.configdefaults import config

TensorVariable = _core.TensorVariable

__all__ = [
    "tensor",
    "scalar",
    "vector",
    "matrix",
    "row",
    "col",
    "tensor3",
    "tensor4",
    "tensor5",
    "scalars",
    "vectors",
    "matrices",
    "rows",
    "cols",
    "tensor3s",
    "tensor4s",
    "as_tensor_variable",
    "as_tensor",
    "constant",
    "cast",
    "reshape",
    "flatten",
    "transpose",
    "expand_dims",
    "squeeze",
    "shape",
    "specify_shape",
    "shape_padleft",
    "shape_padright",
    "shape_padaxis",
    "broadcast_to",
    "alloc",
    "zeros",
    "ones",
    "full",
    "zeros_like",
    "ones_like",
    "full_like",
    "arange",
    "eye",
    "stack",
    "concatenate",
    "join",
    "split",
]


def _dtype(dtype) -> str:
    return config.floatX if dtype is None else dtype_name(dtype)


def tensor(name=None, dtype=None, shape=None, broadcastable=None):
    """A symbolic input of ``dtype`` (default ``config.floatX``) and static ``shape``
    (``None`` for unknown extents): ``pt.tensor("x", dtype="int32", shape=(None, 3))``."""
    if isinstance(name, str) and dtype is None and (name in SUPPORTED_DTYPES or name == "floatX"):
        # PyTensor's older ``tensor(dtype, shape)`` order.
        name, dtype = None, name
    if shape is None:
        if broadcastable is None:
            raise TypeError("tensor() needs shape= (use None for unknown extents)")
        shape = tuple(1 if b else None for b in broadcastable)
    return _core.tensor(name, _dtype(dtype), [None if s is None else int(s) for s in shape])


def scalar(name=None, dtype=None):
    """A 0-d symbolic input."""
    return tensor(name, dtype, ())


def vector(name=None, dtype=None, shape=(None,)):
    """A 1-d symbolic input."""
    return tensor(name, dtype, shape)


def matrix(name=None, dtype=None, shape=(None, None)):
    """A 2-d symbolic input."""
    return tensor(name, dtype, shape)


def row(name=None, dtype=None):
    """A 2-d symbolic input with one row (shape ``(1, None)``)."""
    return tensor(name, dtype, (1, None))


def col(name=None, dtype=None):
    """A 2-d symbolic input with one column (shape ``(None, 1)``)."""
    return tensor(name, dtype, (None, 1))


def tensor3(name=None, dtype=None, shape=(None,) * 3):
    """A 3-d symbolic input."""
    return tensor(name, dtype, shape)


def tensor4(name=None, dtype=None, shape=(None,) * 4):
    """A 4-d symbolic input."""
    return tensor(name, dtype, shape)


def tensor5(name=None, dtype=None, shape=(None,) * 5):
    """A 5-d symbolic input."""
    return tensor(name, dtype, shape)


def _plural(single):
    def many(*names, dtype=None):
        if len(names) == 1 and isinstance(names[0], int):
            names = (None,) * names[0]
        elif len(names) == 1 and isinstance(names[0], (str, list, tuple)):
            # PyTensor iterates a single argument: "xyz" names x, y and z; a list names each.
            names = tuple(names[0])
        out = [single(n, dtype=dtype) for n in names]
        return out

    many.__doc__ = f"Several {single.__name__} inputs: one per name, per character of a single string, or ``n`` unnamed."
    return many


scalars = _plural(scalar)
vectors = _plural(vector)
matrices = _plural(matrix)
rows = _plural(row)
cols = _plural(col)
tensor3s = _plural(tensor3)
tensor4s = _plural(tensor4)
for _f, _n in [
    (scalars, "scalars"),
    (vectors, "vectors"),
    (matrices, "matrices"),
    (rows, "rows"),
    (cols, "cols"),
    (tensor3s, "tensor3s"),
    (tensor4s, "tensor4s"),
]:
    _f.__name__ = _f.__qualname__ = _n

# dtype-prefixed constructors, as PyTensor names them: b=int8, w=int16, i=int32, l=int64,
# f=float32, d=float64, c=complex64, z=complex128.
_PREFIXES = {
    "b": "int8",
    "w": "int16",
    "i": "int32",
    "l": "int64",
    "f": "float32",
    "d": "float64",
    "c": "complex64",
    "z": "complex128",
}
_KINDS = {
    "scalar": scalar,
    "vector": vector,
    "matrix": matrix,
    "row": row,
    "col": col,
    "tensor3": tensor3,
    "tensor4": tensor4,
    "tensor5": tensor5,
}
_PLURALS = {
    "scalars": scalars,
    "vectors": vectors,
    "matrices": matrices,
    "rows": rows,
    "cols": cols,
    "tensor3s": tensor3s,
    "tensor4s": tensor4s,
}


def _prefixed(base, dt, fname):
    def make(name=None, **kwargs):
        kwargs.setdefault("dtype", dt)
        return base(name, **kwargs)

    make.__name__ = make.__qualname__ = fname
    make.__doc__ = f"A {dt} {base.__name__} input."
    return make


def _prefixed_plural(base, dt, fname):
    def make(*names):
        return base(*names, dtype=dt)

    make.__name__ = make.__qualname__ = fname
    make.__doc__ = f"Several {dt} inputs (``{base.__name__}``)."
    return make


for _p, _dt in _PREFIXES.items():
    for _k, _base in _KINDS.items():
        globals()[_p + _k] = _prefixed(_base, _dt, _p + _k)
        __all__.append(_p + _k)
    for _k, _base in _PLURALS.items():
        globals()[_p + _k] = _prefixed_plural(_base, _dt, _p + _k)
        __all__.append(_p + _k)


def _autocast_dtype(x) -> str:
    """PyTensor's dtype for a Python number literal: the smallest integer type holding an int;
    for a float, ``floatX`` if it is ``float32``, else ``float32`` when exact, else ``float64``."""
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        for dt in ("int8", "int16", "int32", "int64"):
            info = np.iinfo(dt)
            if info.min <= x <= info.max:
                return dt
        return "uint64"
    if config.floatX == "float32":
        return "float32"
    with np.errstate(all="ignore"):
        return "float32" if float(np.float32(x)) == x else "float64"


def _is_python_number(x) -> bool:
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


def constant(x, name=None, ndim=None, dtype=None):
    """A constant: ``np.asarray(x, dtype)``; Python numbers get PyTensor's literal dtypes
    (``constant(3)`` is ``int8``, ``constant(1.5)`` ``float32``)."""
    if dtype is None and _is_python_number(x):
        dtype = _autocast_dtype(x)
    c = _core.constant(x, name, None if dtype is None else dtype_name(dtype))
    if ndim is not None and c.ndim != ndim:
        c = _fit_ndim(c, ndim)
    return c


def _fit_ndim(v, ndim):
    while v.ndim > ndim and v.broadcastable[0]:
        v = squeeze(v, 0)
    if v.ndim < ndim:
        v = shape_padleft(v, ndim - v.ndim)
    if v.ndim != ndim:
        raise ValueError(f"{v!r} has {v.ndim} dimensions, cannot make it {ndim}-d")
    return v


def as_tensor_variable(x, name=None, ndim=None, dtype=None):
    """``x`` as a symbolic tensor: variables unchanged, anything else a ``constant``."""
    if isinstance(x, TensorVariable):
        v = x
        if dtype is not None and v.dtype != dtype_name(dtype):
            v = cast(v, dtype)
    elif isinstance(x, (list, tuple)) and builtins.any(isinstance(i, TensorVariable) for i in x):
        v = stack([as_tensor_variable(i) for i in x])
    else:
        v = constant(x, name=name, dtype=dtype)
    if ndim is not None and v.ndim != ndim:
        v = _fit_ndim(v, ndim)
    return v


as_tensor = as_tensor_variable


def cast(x, dtype):
    """``x`` converted to ``dtype`` (NumPy ``astype``)."""
    return _core.cast(x, dtype)


def reshape(x, newshape, ndim=None):
    """``x`` with a new shape (ints, one of them -1; symbolic scalars; or a shape vector)."""
    return _core.reshape(x, newshape, ndim)


def flatten(x, ndim=1):
    """Collapses the dimensions from ``ndim - 1`` on into one."""
    return _core.flatten(x, ndim)


def transpose(x, axes=None):
    """Permutes the axes (reversed by default)."""
    return _core.transpose(x, axes)


def expand_dims(a, axis):
    """Inserts new axes of extent 1 at ``axis`` (an int or a tuple)."""
    return _core.expand_dims(a, axis)


def squeeze(x, axis=None):
    """Removes broadcastable dimensions (or those in ``axis``)."""
    return _core.squeeze(x, axis)


def shape(x):
    """The symbolic shape of ``x`` (an ``int64`` vector)."""
    return _core.shape(x)


def specify_shape(x, shape):
    """``x``, asserted to have ``shape`` (``None`` for any extent)."""
    if isinstance(shape, int):
        shape = (shape,)
    return _core.specify_shape(x, [None if s is None else int(s) for s in shape])


def shape_padleft(t, n_ones=1):
    """``t`` with ``n_ones`` broadcastable dimensions added on the left."""
    t = as_tensor_variable(t)
    return t.dimshuffle(["x"] * n_ones + list(range(t.ndim)))


def shape_padright(t, n_ones=1):
    """``t`` with ``n_ones`` broadcastable dimensions added on the right."""
    t = as_tensor_variable(t)
    return t.dimshuffle(list(range(t.ndim)) + ["x"] * n_ones)


def shape_padaxis(t, axis):
    """``t`` with a broadcastable dimension inserted at ``axis``."""
    return expand_dims(t, axis)


def alloc(value, *shape):
    """``value`` broadcast to ``shape`` (ints or symbolic scalars)."""
    return _core.alloc(value, *shape)


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape``."""
    return _core.alloc(x, shape)


def full(shape, fill_value, dtype=None):
    """A tensor of ``shape`` filled with ``fill_value``."""
    if dtype is None:
        dtype = fill_value.dtype if isinstance(fill_value, TensorVariable) else np.asarray(fill_value).dtype.name
        if dtype == "float64" and _is_python_number(fill_value):
            dtype = config.floatX
    value = cast(as_tensor_variable(fill_value), dtype)
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    return _core.alloc(value, shape)


def zeros(shape, dtype=None):
    """Zeros of ``shape`` (``dtype`` default ``floatX``)."""
    return full(shape, 0, _dtype(dtype))


def ones(shape, dtype=None):
    """Ones of ``shape`` (``dtype`` default ``floatX``)."""
    return full(shape, 1, _dtype(dtype))


def full_like(a, fill_value, dtype=None):
    """A tensor shaped like ``a`` filled with ``fill_value``."""
    return _core.full_like(a, fill_value, dtype)


def zeros_like(model, dtype=None):
    """Zeros shaped like ``model``."""
    return _core.full_like(model, 0, dtype)


def ones_like(model, dtype=None):
    """Ones shaped like ``model``."""
    return _core.full_like(model, 1, dtype)


def arange(start, stop=None, step=1, dtype=None):
    """``np.arange``: integer bounds give ``int64``, float bounds ``floatX``."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        kinds = []
        for b in (start, stop, step):
            if isinstance(b, TensorVariable):
                kinds.append(np.dtype(b.dtype).kind)
            else:
                kinds.append(np.asarray(b).dtype.kind)
        if builtins.all(k in "biu" for k in kinds):
            dtype = "int64"
        elif builtins.any(isinstance(b, TensorVariable) and b.dtype == "float64" for b in (start, stop, step)):
            dtype = "float64"
        else:
            dtype = config.floatX
    return _core.arange(start, stop, step, dtype_name(dtype))


def eye(n, m=None, k=0, dtype=None):
    """``np.eye(n, m, k)`` (``dtype`` default ``floatX``)."""
    return _core.eye(n, n if m is None else m, k, _dtype(dtype))


def stack(tensors, axis=0):
    """Joins tensors of equal shape along a new axis."""
    return _core.stack([as_tensor_variable(t) for t in tensors], axis)


def concatenate(tensor_list, axis=0):
    """Joins tensors along an existing axis."""
    return _core.concatenate([as_tensor_variable(t) for t in tensor_list], axis)


def join(axis, *tensors_list):
    """``concatenate(tensors_list, axis)`` with PyTensor's argument order."""
    if len(tensors_list) == 1 and isinstance(tensors_list[0], (list, tuple)):
        tensors_list = tuple(tensors_list[0])
    return concatenate(tensors_list, axis)


def split(x, splits_size, n_splits, axis=0):
    """Splits ``x`` along ``axis`` into ``n_splits`` pieces of the given sizes."""
    if isinstance(splits_size, TensorVariable):
        sizes = splits_size
    else:
        sizes = list(splits_size)
        if len(sizes) != n_splits:
            raise ValueError(f"split: {len(sizes)} sizes given for n_splits={n_splits}")
    return _core.split(x, sizes, axis)

from oxtensor.tensor._basic_extra import *  # noqa: E402,F401,F403
from oxtensor.tensor._basic_extra import __all__ as _extra_all  # noqa: E402
from oxtensor.tensor._basic_extra import NotScalarConstantError  # noqa: E402,F401

__all__ += _extra_all
