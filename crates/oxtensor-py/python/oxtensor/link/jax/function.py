"""``mode="JAX"`` functions (``JAXFunction``) and ``jax_funcify``."""

from __future__ import annotations

import jax
import numpy as np

from oxtensor.link.document import Translation
from oxtensor.link.jax import dispatch
from oxtensor.link.translated import TranslatedFunction, funcify_source


class JAXFunction(TranslatedFunction):
    """A function compiled with ``mode="JAX"``: called like any ``Function`` (arrays in, NumPy
    arrays out, shared variables read and updated), it runs one jitted JAX function."""

    engine = "JAX"

    def _translation_of(self, text, shared):
        return Translation(text, shared, dispatch.translate)

    def _prepare(self, run):
        return jax.jit(run)

    def _execute(self, fn, arrays, shared_values):
        return [np.array(r) for r in fn(*arrays, *shared_values)]


def jax_funcify(obj, inputs=None):
    """A plain JAX function of a graph (PyTensor's ``jax_funcify``): ``fn(*inputs)`` returning
    the tuple of outputs, built from jax.numpy/jax.lax calls, not jitted (``jax.jit``,
    ``jax.vmap``, ``jax.grad`` apply). ``obj`` is a compiled function (any mode: its rewritten
    graph is translated), or an output variable or list of them with their ``inputs`` (then
    rewritten with the JAX pass set). Shared variables are read as constants (their values
    now); updates are not applied, so a random draw from a shared generator gives the same
    numbers on every call (``jax.random`` numbers, not NumPy's). An op without a translation raises ``NotImplementedError``
    naming it."""
    text, shared = funcify_source(obj, inputs, JAXFunction)._serialized_graph()
    t = Translation(text, shared, dispatch.translate)
    constants = t.shared_values()
    n = t.n_outputs

    def jax_fn(*args):
        return t.run(*args, *constants)[:n]

    return jax_fn
