"""A registry from the document's op names (``docs/serialization.md``) to an engine's
translators ``(op, node, document) -> callable(*inputs) -> tuple of outputs``; each engine
(``oxtensor.link.jax``, ``oxtensor.link.pytorch``) has its own."""

from __future__ import annotations

import importlib

import numpy as np


def op_label(op):
    """How an op is named in messages (``Elemwise{Exp}``, ``Linalg{Eig}``, ``Random{normal}``)."""
    name = op.get("op", "?")
    detail = op.get("scalar") or op.get("name") or op.get("dist") or op.get("fn")
    return f"{name}{{{detail}}}" if detail else name


def out_dtypes(node):
    """The NumPy dtypes of a node's outputs."""
    return [np.dtype(t["dtype"]) for t in node["types"]]


class Registry:
    """One engine's translators. ``engine`` names it in messages; ``ops_module`` is the package
    whose import registers the translators (imported on first use, so that importing the
    engine stays cheap and free of cycles)."""

    def __init__(self, engine, ops_module):
        self.engine = engine
        self.ops_module = ops_module
        self._table = {}

    def register(self, *names):
        """Registers the decorated translator for the ops called ``names``."""

        def deco(fn):
            for n in names:
                self._table[n] = fn
            return fn

        return deco

    def translate(self, node, doc):
        """The engine's callable of one apply node; ``NotImplementedError`` naming the op when
        it has no translation."""
        importlib.import_module(self.ops_module)
        op = node["op"]
        fn = self._table.get(op["op"])
        if fn is None:
            raise NotImplementedError(f"no {self.engine} translation for op {op_label(op)}")
        return fn(op, node, doc)
