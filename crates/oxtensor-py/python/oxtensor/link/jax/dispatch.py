"""Which module translates which op: one registry from the document's op names to
translators ``(op, node, document) -> callable(*inputs) -> tuple of outputs``."""

from __future__ import annotations

import numpy as np

_REGISTRY = {}


def register(*names):
    """Registers the decorated translator for the ops called ``names``."""

    def deco(fn):
        for n in names:
            _REGISTRY[n] = fn
        return fn

    return deco


def op_label(op):
    """How an op is named in messages (``Elemwise{Exp}``, ``Linalg{Eig}``, ``Random{normal}``)."""
    name = op.get("op", "?")
    detail = op.get("scalar") or op.get("name") or op.get("dist") or op.get("fn")
    return f"{name}{{{detail}}}" if detail else name


def translate(node, doc):
    """The JAX callable of one apply node; ``NotImplementedError`` naming the op when it has
    no translation."""
    from oxtensor.link.jax import ops  # noqa: F401  (fills the registry)

    op = node["op"]
    fn = _REGISTRY.get(op["op"])
    if fn is None:
        raise NotImplementedError(f"no JAX translation for op {op_label(op)}")
    return fn(op, node, doc)


def out_dtypes(node):
    """The NumPy dtypes of a node's outputs."""
    return [np.dtype(t["dtype"]) for t in node["types"]]


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
