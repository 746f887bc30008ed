"""``pytensor.tensor.shape``: the shape functions, under the module path PyTensor gives them
(they are defined in ``oxtensor.tensor.basic``)."""

from __future__ import annotations

from oxtensor import _core
from oxtensor.tensor.basic import (
    reshape,
    shape,
    shape_padaxis,
    shape_padleft,
    shape_padright,
    specify_shape,
)

__all__ = [
    "reshape",
    "shape",
    "shape_i",
    "shape_padaxis",
    "shape_padleft",
    "shape_padright",
    "shape_tuple",
    "specify_broadcastable",
    "specify_shape",
]


def shape_i(var, i, fgraph=None):
    """The extent of ``var`` along dimension ``i`` (an ``int64`` scalar; a constant when
    static)."""
    return shape(var)[i]


def shape_tuple(x):
    """The shape of ``x`` as a tuple of ``int64`` scalars (constants where static)."""
    from oxtensor.tensor.basic import as_tensor_variable, constant

    x = as_tensor_variable(x)
    import numpy as np

    return tuple(
        constant(np.int64(s)) if s is not None else shape(x)[i] for i, s in enumerate(x.type.shape)
    )


def specify_broadcastable(x, *axes):
    """``x`` with the given dimensions declared of extent 1 (checked at run time)."""
    from oxtensor.tensor.basic import as_tensor_variable

    x = as_tensor_variable(x)
    if not axes:
        return x
    dims = list(x.type.shape)
    for a in axes:
        a = a % x.ndim
        if dims[a] not in (None, 1):
            raise ValueError(f"specify_broadcastable: dimension {a} of {x} has extent {dims[a]}, not 1")
        dims[a] = 1
    return specify_shape(x, tuple(dims))
