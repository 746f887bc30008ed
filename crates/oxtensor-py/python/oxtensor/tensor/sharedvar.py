"""Shared variables of tensor type."""

from oxtensor._core import TensorSharedVariable
from oxtensor.compile.sharedvalue import shared as tensor_constructor

__all__ = ["TensorSharedVariable", "tensor_constructor"]
