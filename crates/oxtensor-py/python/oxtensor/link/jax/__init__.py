"""The JAX engine: ``mode="JAX"`` and ``jax_funcify`` (PyTensor's names).

A graph is rewritten with the ``JAX`` pass set (``FAST_RUN``'s rewrites without ``fusion``,
whose Composites would only hide ops from XLA, and without ``scan_last_only``), serialized in
the no-code format (``docs/serialization.md``) and translated from that document into one
Python function of ``jax.numpy``/``jax.lax`` calls (``graph.py``; one module per op family under
``ops/``). ``mode="JAX"`` jits it; ``jax_funcify`` hands it to the user, e.g. for
``jax.vmap``, numpyro or blackjax. Random draws use ``jax.random`` with the generator threaded
as a key (``ops/random.py``): not NumPy's numbers.

Importing this module turns on JAX's 64-bit mode (``jax_enable_x64``): oxtensor graphs compute
in ``float64`` and ``int64`` as NumPy does.
"""

from __future__ import annotations

import jax

jax.config.update("jax_enable_x64", True)

from oxtensor.link.jax.function import JAXFunction, jax_funcify  # noqa: E402

__all__ = ["jax_funcify", "JAXFunction"]
