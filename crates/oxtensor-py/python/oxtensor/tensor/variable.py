"""The symbolic variable classes (implemented in Rust)."""

from oxtensor._core import TensorConstant, TensorVariable

Variable = TensorVariable

__all__ = ["TensorVariable", "TensorConstant", "Variable"]
