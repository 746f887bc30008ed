"""Random draws have no JAX translation: oxtensor draws NumPy's streams (PCG64, NumPy's
algorithms), which ``jax.random`` does not reproduce, and a graph run in JAX must give the
numbers it gives everywhere else. A graph with a draw fails to compile in ``mode="JAX"``,
naming the op."""

from __future__ import annotations

from oxtensor.link.jax.dispatch import register


@register("Random")
def _random(op, node, doc):
    raise NotImplementedError(
        f"no JAX translation for op Random{{{op['dist']}}}: oxtensor draws NumPy's random streams, "
        "which jax.random does not reproduce"
    )
