"""Which module translates which op in PyTorch: the PyTorch engine's registry, NumPy ↔ torch
dtype and value conversions, and the helpers the translators share.

Torch has no arithmetic on ``uint16``/``uint32``/``uint64``, so values of those dtypes are held
as ``int64``: exactly for ``uint16``/``uint32`` (every op producing one is masked to its width,
which is NumPy's wraparound), and for ``uint64`` as long as the values stay below 2**63 (every
op producing one checks, and raises ``OverflowError`` naming the op otherwise: beyond that,
int64 comparisons, divisions and conversions would be wrong). Values convert back to the
document's dtypes when they leave the function."""

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
    np.dtype(np.complex64): torch.complex64,
    np.dtype(np.complex128): torch.complex128,
}

#: The unsigned dtypes held as int64, with the mask that wraps a value to their width (None:
#: uint64, checked to stay below 2**63 instead).
WIDE_UNSIGNED = {np.dtype(np.uint16): 0xFFFF, np.dtype(np.uint32): 0xFFFFFFFF, np.dtype(np.uint64): None}


def torch_dtype(dtype):
    """The torch dtype holding values of a NumPy dtype (``int64`` for the wide unsigned ones)."""
    dtype = np.dtype(dtype)
    if dtype in WIDE_UNSIGNED:
        return torch.int64
    if dtype not in _DTYPES:
        raise NotImplementedError(f"no PyTorch translation for values of dtype {dtype}")
    return _DTYPES[dtype]


def _held_as_int64(fn, node):
    """``fn`` with its wide unsigned outputs wrapped to their width, or checked below 2**63."""
    label = op_label(node["op"])
    wide = [(k, WIDE_UNSIGNED[d]) for k, d in enumerate(out_dtypes(node)) if d in WIDE_UNSIGNED]
    if not wide:
        return fn

    def go(*xs):
        outs = list(fn(*xs))
        for k, mask in wide:
            if mask is not None:
                outs[k] = outs[k] & mask
            elif bool((outs[k] < 0).any()):
                raise OverflowError(
                    f"{label} gave a uint64 value of 2**63 or more, which the PyTorch engine (holding "
                    "uint64 as int64) does not represent"
                )
        return tuple(outs)

    return go


def translate(node, doc):
    """The torch callable of one apply node; ``NotImplementedError`` naming the op when it has
    no translation."""
    return _held_as_int64(REGISTRY.translate(node, doc), node)


def tensor(value):
    """A tensor of ``value`` (a tensor, a NumPy array or scalar), sharing a NumPy array's memory
    when torch can (writable, aligned, native byte order, non-negative strides), else a copy;
    wide unsigned values become int64 (``OverflowError`` for a uint64 one of 2**63 or more)."""
    if isinstance(value, torch.Tensor):
        return value
    arr = np.asarray(value)
    if arr.dtype in WIDE_UNSIGNED:
        if arr.dtype == np.uint64 and arr.size and arr.max() >= 2**63:
            raise OverflowError("the PyTorch engine holds uint64 as int64: values of 2**63 or more are not supported")
        return torch.from_numpy(arr.astype(np.int64))
    torch_dtype(arr.dtype)
    ok = arr.flags.writeable and arr.flags.aligned and arr.dtype.isnative and all(s >= 0 for s in arr.strides)
    return torch.from_numpy(arr if ok else np.array(arr))


def to_numpy(value, dtype):
    """A tensor's value as a NumPy array of ``dtype`` of its own (never a view of an input or
    shared value)."""
    return np.array(tensor(value).detach().cpu().numpy()).astype(dtype, copy=False)


def as_int(value):
    """A scalar tensor (an extent, a bound, an index) as a Python int."""
    return int(tensor(value).item())
