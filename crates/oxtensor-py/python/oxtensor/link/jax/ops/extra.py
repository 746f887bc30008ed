"""The extra tensor ops (``Op::Extra``): cumulative sums and products, stable sorts,
``searchsorted`` and ``repeat``. ``unique``, ``bincount`` and ``nonzero`` have outputs whose
length depends on the input values, which ``jax.jit`` cannot trace, so they fail at compile
time naming the op; ``repeat`` needs its counts while tracing (a constant)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from oxtensor.link.jax.dispatch import is_concrete, op_label, out_dtypes, register


def _cumulate(op, dtype):
    fn = jnp.cumprod if op["mul"] else jnp.cumsum
    return lambda x: (fn(jnp.asarray(x), axis=op["axis"], dtype=dtype),)


def _repeat(op):
    def go(x, repeats):
        if not is_concrete(repeats):
            raise NotImplementedError(
                f"JAX needs the counts of {op_label(op)} while tracing, but they depend on input values"
            )
        return (jnp.repeat(jnp.asarray(x), np.asarray(repeats), axis=op["axis"]),)

    return go


@register("Extra")
def _extra(op, node, doc):
    dtype = out_dtypes(node)[0]
    kind = op["name"]
    if kind == "cumulate":
        return _cumulate(op, dtype)
    if kind == "sort":
        return lambda x: (jnp.sort(jnp.asarray(x), axis=op["axis"], stable=True),)
    if kind == "argsort":
        return lambda x: (jnp.argsort(jnp.asarray(x), axis=op["axis"], stable=True).astype(dtype),)
    if kind == "searchsorted":
        side = "right" if op["right"] else "left"
        return lambda a, v: (jnp.searchsorted(jnp.asarray(a), jnp.asarray(v), side=side).astype(dtype),)
    if kind == "repeat":
        return _repeat(op)
    raise NotImplementedError(
        f"no JAX translation for op {op_label(op)}: its output length depends on input values"
    )
