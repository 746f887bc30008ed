"""Which module translates which op in JAX: the JAX engine's registry (``register``,
``translate``) and the helpers its translators share."""

from __future__ import annotations

import numpy as np

from oxtensor.link.registry import Registry, op_label, out_dtypes

__all__ = ["register", "translate", "op_label", "out_dtypes", "is_concrete", "static_int"]

REGISTRY = Registry("JAX", "oxtensor.link.jax.ops")
register = REGISTRY.register
translate = REGISTRY.translate


def is_concrete(*values):
    """True when every value is known while tracing (NumPy data, not a JAX tracer): shapes
    and sizes computed from those stay static, as ``jit`` needs."""
    return all(isinstance(v, (np.ndarray, np.generic, int, float, bool)) for v in values)


def static_int(value, what, op):
    """A value that JAX needs while tracing (an extent, a bound, a step count)."""
    if not is_concrete(value):
        raise NotImplementedError(
            f"JAX needs the {what} of {op_label(op)} while tracing, but it depends on input values"
        )
    return int(np.asarray(value))
