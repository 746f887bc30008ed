"""``TensorType``: a dtype and a static shape (``None`` where unknown)."""

from __future__ import annotations

from oxtensor import _core
from oxtensor._convert import dtype_name

__all__ = ["TensorType"]

_KIND = {0: "Scalar", 1: "Vector", 2: "Matrix"}


class TensorType:
    """The type of a symbolic tensor, as PyTensor's: ``TensorType("float64", shape=(None, 3))``.

    Calling it makes a new input variable of this type: ``TensorType("int32", (None,))("i")``.
    """

    def __init__(self, dtype, shape=None, name=None, broadcastable=None):
        if shape is None:
            if broadcastable is None:
                raise TypeError("TensorType needs shape= (or broadcastable=)")
            shape = tuple(1 if b else None for b in broadcastable)
        self.dtype = dtype_name(dtype)
        self.shape = tuple(None if s is None else int(s) for s in shape)
        self.name = name

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def broadcastable(self) -> tuple:
        """Which dimensions broadcast (static extent 1)."""
        return tuple(s == 1 for s in self.shape)

    def __call__(self, name=None):
        return _core.tensor(name, self.dtype, list(self.shape))

    def clone(self, dtype=None, shape=None):
        """The same type with another dtype and/or shape."""
        return TensorType(
            self.dtype if dtype is None else dtype, self.shape if shape is None else shape
        )

    def filter(self, data, strict=False, allow_downcast=None):
        """``data`` converted to an array of this type (PyTensor's conversion rules)."""
        import numpy as np

        from oxtensor._convert import coerce

        arr = coerce(data, self.dtype, True if allow_downcast else allow_downcast)
        if arr.dtype != np.dtype(self.dtype):
            if strict:
                raise TypeError(f"expected dtype {self.dtype}, got {arr.dtype}")
            if not np.can_cast(arr.dtype, self.dtype, "safe") and not allow_downcast:
                raise TypeError(f"cannot store dtype {arr.dtype} in {self} without loss")
            arr = arr.astype(self.dtype)
        if arr.ndim != self.ndim or any(
            s is not None and s != a for s, a in zip(self.shape, arr.shape)
        ):
            raise TypeError(f"a value of shape {arr.shape} does not fit {self}")
        return arr

    def __eq__(self, other):
        return isinstance(other, TensorType) and (self.dtype, self.shape) == (
            other.dtype,
            other.shape,
        )

    def __hash__(self):
        return hash((TensorType, self.dtype, self.shape))

    def __str__(self):
        if self.name:
            return self.name
        kind = _KIND.get(self.ndim, "Tensor")
        dims = ", ".join("?" if s is None else str(s) for s in self.shape)
        if self.ndim == 1:
            dims += ","
        return f"{kind}({self.dtype}, shape=({dims}))"

    def __repr__(self):
        return f"TensorType({self.dtype}, shape={self.shape})"
