"""Reductions: ``Reduce``, ``ArgReduce`` and ``FusedReduce`` (a Composite's program reduced)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from oxtensor.link.jax.dispatch import out_dtypes, register


def _reducer(fn_name, out_dtype):
    def go(x, axes):
        x = jnp.asarray(x)
        if fn_name == "Sum":
            acc = np.float64 if out_dtype == np.float32 else out_dtype
            return jnp.sum(x.astype(acc), axis=axes).astype(out_dtype)
        if fn_name == "Prod":
            acc = np.float64 if out_dtype == np.float32 else out_dtype
            return jnp.prod(x.astype(acc), axis=axes).astype(out_dtype)
        if fn_name == "Max":
            return jnp.max(x, axis=axes).astype(out_dtype)
        if fn_name == "Min":
            return jnp.min(x, axis=axes).astype(out_dtype)
        if fn_name == "All":
            return jnp.all(x.astype(bool), axis=axes)
        if fn_name == "Any":
            return jnp.any(x.astype(bool), axis=axes)
        raise NotImplementedError(f"no JAX translation for op Reduce{{{fn_name}}}")

    return go


@register("Reduce")
def _reduce(op, node, doc):
    go = _reducer(op["fn"], out_dtypes(node)[0])
    axes = tuple(op["axes"])
    return lambda x: (go(x, axes),)


@register("FusedReduce")
def _fused_reduce(op, node, doc):
    body = doc.frozen(op["body"])
    go = _reducer(op["fn"], out_dtypes(node)[0])
    axes = tuple(op["axes"])
    def run(*xs):
        (value,) = body(*xs)
        full = jnp.broadcast_shapes(*[jnp.shape(x) for x in xs])
        value = jnp.broadcast_to(jnp.asarray(value), full)
        return (go(value, axes),)

    return run


@register("ArgReduce")
def _arg_reduce(op, node, doc):
    axis = op["axis"]
    fn = jnp.argmax if op["fn"] == "argmax" else jnp.argmin

    def run(x):
        x = jnp.asarray(x)
        return (fn(x if axis is not None else x.reshape(-1), axis=axis if axis is not None else 0).astype(np.int64),)

    return run
