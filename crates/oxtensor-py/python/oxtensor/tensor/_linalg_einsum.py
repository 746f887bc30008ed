"""``pt.einsum``: a thin wrapper over the Rust builder (``oxtensor_graph::build::einsum``,
through ``_core.einsum``), which parses NumPy's subscripts, checks the extents, chooses the
contraction order and lowers each pairwise contraction to transposes, reshapes and a
(batched) ``matmul``. This module only turns the interleaved sublist form into subscripts and
checks ``optimize`` as PyTensor does.
"""

from __future__ import annotations

import operator

from oxtensor import _core
from oxtensor.tensor import basic as _basic


def _sublist(sublist, what):
    """One sublist of the interleaved form as integers, ``None`` for ``Ellipsis`` (the range
    of the integers is checked by the Rust builder)."""
    if isinstance(sublist, str) or not hasattr(sublist, "__iter__"):
        raise TypeError(
            f"einsum: {what} must be a list of integers and Ellipsis, got {type(sublist).__name__}"
        )
    out = []
    for s in sublist:
        if s is Ellipsis:
            out.append(None)
        elif hasattr(s, "__index__"):
            out.append(operator.index(s))
        else:
            raise TypeError(
                f"einsum: {what} must hold integers and Ellipsis, got {type(s).__name__} {s!r}"
            )
    return out


def split_arguments(subscripts, operands):
    """The subscripts string and the operands of either call form: ``(subscripts, operands)``
    unchanged for the string form, or the interleaved form's sublists as a string."""
    if isinstance(subscripts, str):
        return subscripts, list(operands)
    args = [subscripts, *operands]
    if len(args) < 2:
        raise ValueError(
            "einsum: expected a subscripts string or operands each followed by its sublist, "
            f"got one argument of type {type(subscripts).__name__}"
        )
    ops, sublists = args[0::2], args[1::2]
    out = None
    if len(args) % 2 == 1:
        # An odd count ends with the output sublist, taken above as one more operand.
        out = ops.pop()
    sublists = [_sublist(s, f"the sublist of operand {k}") for k, s in enumerate(sublists)]
    if out is not None:
        out = _sublist(out, "the output sublist")
    return _core.einsum_sublists(sublists, out), ops


def greedy_path(terms, out, sizes):
    """The pairwise steps (positions in the current list, the result appended last) of
    NumPy's ``greedy`` contraction order for ``terms`` (one string of labels per operand) to
    ``out``, with ``sizes`` the extent of each label."""
    return _core.einsum_path("greedy", list(terms), out, dict(sizes))


def einsum(subscripts, *operands, optimize=None):
    """``np.einsum`` (explicit or implicit output, ellipses, the interleaved sublist form)
    lowered to matrix products. As in PyTensor, ``optimize`` must be ``None``: the contraction
    order is chosen when the graph is built, NumPy's ``optimal`` path when every operand's
    shape is static and right to left otherwise; in that case (more than two operands) the
    einsum is one ``Einsum{subscripts}`` node, planned again when compiled if its operands'
    shapes are static by then (after ``clone_replace`` with static-shaped variables)."""
    if optimize is not None:
        raise NotImplementedError(
            f"einsum: optimize={optimize!r} is not supported; as in PyTensor, only "
            "optimize=None is, and the contraction order is chosen when the graph is built "
            "(NumPy's 'optimal' path when every operand's shape is static, right to left "
            "otherwise)"
        )
    subscripts, operands = split_arguments(subscripts, operands)
    ops = [_basic.as_tensor_variable(o) for o in operands]
    return _core.einsum(subscripts, ops)
