"""Conversions used by the Rust bindings off their fast paths.

The bindings wrap plain NumPy arrays without Python code. Everything else — lists, Python and
NumPy scalars, arrays of other dtypes or with a byte order or alignment the Rust side cannot
read — comes here first, and leaves as a native, aligned array of a supported dtype.
"""

from __future__ import annotations

import numpy as np

from oxtensor.configdefaults import config

SUPPORTED_DTYPES = frozenset(
    [
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ]
)


def dtype_name(obj) -> str:
    """The NumPy name of a dtype given as a string (``"floatX"`` included) or dtype-like."""
    if isinstance(obj, str) and obj == "floatX":
        return config.floatX
    return np.dtype(obj).name


def make_type(dtype: str, shape: tuple):
    """A ``TensorType`` (for ``TensorVariable.type``)."""
    from oxtensor.tensor.type import TensorType

    return TensorType(dtype, shape)


def _plain(arr: np.ndarray) -> np.ndarray:
    if arr.dtype.name not in SUPPORTED_DTYPES:
        raise TypeError(
            f"arrays of dtype {arr.dtype} are not supported (oxtensor supports "
            "bool, int8-64, uint8-64, float32, float64, complex64 and complex128)"
        )
    if not arr.dtype.isnative or not arr.flags.aligned:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr


def as_array(obj, dtype=None) -> np.ndarray:
    """``np.asarray(obj, dtype)`` as a plain supported array (for constants and shared values)."""
    try:
        arr = np.asarray(obj, dtype=dtype)
    except (OverflowError, ValueError) as e:
        raise TypeError(f"cannot convert {_short(obj)} to an array: {e}") from None
    return _plain(arr)


def _short(value) -> str:
    s = repr(value)
    return s if len(s) <= 80 else s[:75] + "(...)"


def _values_eq(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        with np.errstate(all="ignore"):
            return bool(
                np.array_equal(a.astype("complex128"), b.astype("complex128"), equal_nan=True)
            )
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        with np.errstate(all="ignore"):
            return bool(np.array_equal(a.astype("float64"), b.astype("float64"), equal_nan=True))
    return bool(np.array_equal(a, b))


def coerce(value, dtype: str, allow_downcast) -> np.ndarray:
    """Converts a function argument for an input of ``dtype`` as PyTensor's
    ``TensorType.filter`` does.

    Arrays of a supported dtype keep it (the Rust side then upcasts losslessly or raises).
    Other values are converted when nothing is lost: ``[1, 2]`` into a ``float32`` input is
    fine, ``0.1`` into ``float32`` is not — except that Python floats go into ``floatX``
    inputs unchecked, as in PyTensor. ``allow_downcast=True`` converts anything.
    """
    if isinstance(value, np.ndarray):
        if value.dtype.name in SUPPORTED_DTYPES:
            return _plain(value)
        if allow_downcast or np.can_cast(value.dtype, dtype, "safe"):
            return np.asarray(value, dtype=dtype)
        raise TypeError(
            f"expected dtype {dtype}, got {value.dtype}: the conversion would lose precision "
            "(cast the argument, or compile with allow_input_downcast=True)"
        )
    if allow_downcast:
        return as_array(value, dtype)
    if (
        allow_downcast is None
        and isinstance(value, (float, np.floating))
        and dtype == config.floatX
    ):
        return np.asarray(value, dtype=dtype)
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as e:
        raise TypeError(f"cannot convert {_short(value)} to an array: {e}") from None
    if arr.dtype.name == dtype:
        return _plain(arr)
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"expected an array of dtype {dtype}, got {_short(value)}")
    try:
        with np.errstate(all="ignore"):
            converted = np.asarray(value, dtype=dtype)
    except (OverflowError, ValueError):
        converted = None
    if converted is not None and _values_eq(arr, converted):
        return converted
    raise TypeError(
        f"value {_short(value)} (dtype {arr.dtype}) cannot be converted to dtype {dtype} "
        "without loss of precision; cast it, or compile with allow_input_downcast=True"
    )


def floatx() -> str:
    """The configured float type (``config.floatX``)."""
    return config.floatX
