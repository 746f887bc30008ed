"""Which module translates which op in PyTorch: the PyTorch engine's registry, NumPy ↔ torch
dtype and value conversions, and the helpers the translators share."""

from __future__ import annotations

import numpy as np
import torch

from oxtensor.link.registry import Registry, op_label, out_dtypes

__all__ = ["register", "translate", "op_label", "out_dtypes", "torch_dtype", "tensor", "to_numpy", "as_int"]

REGISTRY = Registry("PyTorch", "oxtensor.link.pytorch.ops")
register = REGISTRY.register

_DTYPES = {
    np.dtype(np.bool_): torch.bool,
    np.dtype(np.int8): torch.int8,
    np.dtype(np.int16): torch.int16,
    np.dtype(np.int32): torch.int32,
    np.dtype(np.int64): torch.int64,
    np.dtype(np.uint8): torch.uint8,
    np.dtype(np.float32): torch.float32,
    np.dtype(np.float64): torch.float64,
}


class UnsupportedDtype(NotImplementedError):
    """A dtype PyTorch cannot compute with (its unsigned integers wider than 8 bits have no
    arithmetic)."""


def torch_dtype(dtype, what="a value"):
    """The torch dtype of a NumPy dtype; ``UnsupportedDtype`` for the unsigned integers wider
    than 8 bits."""
    dtype = np.dtype(dtype)
    if dtype not in _DTYPES:
        raise UnsupportedDtype(f"no PyTorch translation for {what} of dtype {dtype}: PyTorch has no {dtype} arithmetic")
    return _DTYPES[dtype]


def translate(node, doc):
    """The torch callable of one apply node; ``NotImplementedError`` naming the op when it has
    no translation (checked first: its reason is the more useful one) or computes in a dtype
    PyTorch lacks."""
    label = f"op {op_label(node['op'])}"
    try:
        fn = REGISTRY.translate(node, doc)
    except UnsupportedDtype:
        fn = None
    for t in node["types"]:
        torch_dtype(t["dtype"], label)
    if fn is None:
        raise UnsupportedDtype(f"no PyTorch translation for {label}: one of its inputs has a dtype PyTorch lacks")
    return fn


def tensor(value):
    """A tensor of ``value`` (a tensor, a NumPy array or scalar), sharing a NumPy array's memory
    when torch can (writable, aligned, native byte order, non-negative strides), else a copy."""
    if isinstance(value, torch.Tensor):
        return value
    arr = np.asarray(value)
    torch_dtype(arr.dtype)
    ok = arr.flags.writeable and arr.flags.aligned and arr.dtype.isnative and all(s >= 0 for s in arr.strides)
    return torch.from_numpy(arr if ok else np.array(arr))


def to_numpy(value):
    """A tensor's value as a NumPy array of its own (never a view of an input or shared value)."""
    return np.array(tensor(value).detach().cpu().numpy())


def as_int(value):
    """A scalar tensor (an extent, a bound, an index) as a Python int."""
    return int(tensor(value).item())
