"""Matrix and contraction functions of ``pt`` (PyTensor's ``pt.trace``, ``pt.diag``,
``pt.tensordot``, ``pt.einsum``, ``pt.matvec`` …), composed from products, transposes,
broadcasting and reductions, so every one of them is differentiable."""

from __future__ import annotations

from oxtensor import _core
from oxtensor.tensor import basic as _basic
from oxtensor.tensor import math as _math

__all__ = [
    "trace",
    "diag",
    "diagonal",
    "tril",
    "triu",
    "tensordot",
    "einsum",
    "batched_dot",
    "matvec",
    "vecmat",
    "vecdot",
    "matrix_transpose",
]


def _var(x):
    return _basic.as_tensor_variable(x)


def _to_end(x, axis1, axis2):
    """``x`` with ``axis1`` and ``axis2`` moved (in that order) to the end."""
    nd = x.ndim
    a1, a2 = axis1 % nd, axis2 % nd
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    rest = [d for d in range(nd) if d not in (a1, a2)]
    return _basic.transpose(x, rest + [a1, a2])


def diagonal(a, offset=0, axis1=0, axis2=1):
    """``np.diagonal``: the ``offset`` diagonal of the (``axis1``, ``axis2``) planes, as the
    last axis."""
    a = _var(a)
    return _core.matrix_fn("diagonal", _to_end(a, axis1, axis2), int(offset))


def trace(a, offset=0, axis1=0, axis2=1):
    """``np.trace``: sum of the ``offset`` diagonal."""
    return _math.sum(diagonal(a, offset, axis1, axis2), axis=-1)


def _diag_off(v, k):
    """The square matrix of extent ``len(v) + |k|`` with ``v`` on its ``k``-th diagonal: the
    ``k``-th diagonal of ones, times ``v`` padded with ``|k|`` zeros and broadcast along the
    rows (``k > 0``: entry ``(i, i + k)`` is ``v[i]``) or the columns (``k < 0``: entry
    ``(j - k, j)`` is ``v[j]``)."""
    n = v.shape[0] + abs(k)
    padded = _basic.concatenate([v, _basic.zeros((abs(k),), dtype=v.dtype)])
    band = _basic.eye(n, n, k, dtype=v.dtype)
    along = _basic.shape_padright(padded) if k > 0 else _basic.shape_padleft(padded)
    return band * along


def diag(v, k=0):
    """``np.diag``: the ``k``-th diagonal of a matrix, or the square matrix with vector ``v``
    on its ``k``-th diagonal."""
    v = _var(v)
    if v.ndim == 1:
        k = int(k)
        if k != 0:
            return _diag_off(v, k)
        return _core.matrix_fn("diag_embed", v)
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError(f"diag: input must be 1- or 2-d, got {v.ndim} dimensions")


def tril(m, k=0):
    """``np.tril``: zeros above the ``k``-th diagonal of the last two axes."""
    return _core.matrix_fn("tril", m, int(k))


def triu(m, k=0):
    """``np.triu``: zeros below the ``k``-th diagonal of the last two axes."""
    return _core.matrix_fn("triu", m, int(k))


def matrix_transpose(x):
    """``x`` with its last two axes swapped (``x.mT``)."""
    return _core.matrix_fn("matrix_transpose", x)


def matvec(x1, x2, dtype=None):
    """``np.matvec``: matrix (…, m, n) times vector (…, n)."""
    out = _math.matmul(x1, _basic.expand_dims(x2, -1))
    out = _basic.squeeze(out, -1)
    return out if dtype is None else _basic.cast(out, dtype)


def vecmat(x1, x2, dtype=None):
    """``np.vecmat``: vector (…, m) times matrix (…, m, n)."""
    out = _math.matmul(_basic.expand_dims(x1, -2), x2)
    out = _basic.squeeze(out, -2)
    return out if dtype is None else _basic.cast(out, dtype)


def vecdot(x1, x2, dtype=None):
    """``np.vecdot``: dot product over the last axis, broadcasting the others."""
    out = _math.sum(_var(x1) * _var(x2), axis=-1)
    return out if dtype is None else _basic.cast(out, dtype)


def batched_dot(a, b):
    """Products of matching slices along the first axis: matrix·matrix, matrix·vector,
    vector·vector."""
    a, b = _var(a), _var(b)
    if a.ndim == 2 and b.ndim == 2:
        return _math.sum(a * b, axis=-1)
    if b.ndim == 2:
        return matvec(a, b)
    if a.ndim == 2:
        return vecmat(a, b)
    return _math.matmul(a, b)


def tensordot(a, b, axes=2):
    """``np.tensordot``: sums products over ``axes`` of ``a`` and ``b`` (an int: the last
    ``axes`` of ``a`` with the first of ``b``; or two sequences of axes)."""
    a, b = _var(a), _var(b)
    if isinstance(axes, int):
        ax_a = list(range(a.ndim - axes, a.ndim))
        ax_b = list(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, int) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, int) else list(ax_b)
    if len(ax_a) != len(ax_b):
        raise ValueError("tensordot: axes of a and b must have the same length")
    ax_a = [x % a.ndim for x in ax_a]
    ax_b = [x % b.ndim for x in ax_b]
    free_a = [d for d in range(a.ndim) if d not in ax_a]
    free_b = [d for d in range(b.ndim) if d not in ax_b]
    # One matrix product: (free_a, contracted) @ (contracted, free_b), then the free shapes.
    at = _basic.transpose(a, free_a + ax_a)
    bt = _basic.transpose(b, ax_b + free_b)
    one = _basic.constant(1, dtype="int64")

    def size(x, ds):
        return _product([x.shape[d] for d in ds], one)

    m = _basic.reshape(at, [size(a, free_a), size(a, ax_a)], ndim=2)
    n = _basic.reshape(bt, [size(b, ax_b), size(b, free_b)], ndim=2)
    out = _math.matmul(m, n)
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    return _basic.reshape(out, shape, ndim=len(shape))


def _product(xs, one):
    out = one
    for v in xs:
        out = out * v
    return out


def einsum(subscripts, *operands, optimize=None):
    """``np.einsum`` as matrix products along a contraction order chosen when the graph is
    built (``oxtensor.tensor._linalg_einsum``; ``optimize`` must be ``None``, as in PyTensor)."""
    from oxtensor.tensor._linalg_einsum import einsum as lowered

    return lowered(subscripts, *operands, optimize=optimize)
