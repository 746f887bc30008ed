"""Layout, shape, indexing and matrix-product ops. Extents and index bounds that JAX needs
while tracing must be concrete (from constants or from the static shapes of arrays); a
bound computed from input values is refused when the function is built or traced."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from oxtensor.link.jax.dispatch import is_concrete, out_dtypes, register, static_int


def _xp(*args):
    return np if is_concrete(*args) else jnp


@register("DimShuffle")
def _dimshuffle(op, node, doc):
    order = op["order"]

    def run(x):
        xp = _xp(x)
        x = xp.asarray(x)
        kept = [o for o in order if o is not None]
        dropped = [d for d in range(x.ndim) if d not in kept]
        y = xp.transpose(x, kept + dropped) if x.ndim else x
        shape = tuple(x.shape[o] if o is not None else 1 for o in order)
        return (xp.reshape(y, shape),)

    return run


@register("Reshape")
def _reshape(op, node, doc):
    def run(x, shape):
        if not is_concrete(shape):
            raise NotImplementedError("JAX needs the target shape of Reshape while tracing")
        xp = _xp(x)
        return (xp.reshape(xp.asarray(x), tuple(int(s) for s in np.asarray(shape))),)

    return run


@register("Shape")
def _shape(op, node, doc):
    return lambda x: (np.asarray(np.shape(x), dtype=np.int64),)


@register("ShapeI")
def _shape_i(op, node, doc):
    axis = op["axis"]
    return lambda x: (np.asarray(np.shape(x)[axis], dtype=np.int64),)


@register("SpecifyShape")
def _specify_shape(op, node, doc):
    want = op["shape"]

    def run(x, *_dims):
        got = np.shape(x)
        if len(got) != len(want) or any(w is not None and w != g for w, g in zip(want, got)):
            raise ValueError(f"SpecifyShape: expected shape {want}, got {got}")
        return (x,)

    return run


@register("GradMarker")
def _grad_marker(op, node, doc):
    return lambda x, *_bounds: (x,)


@register("Alloc")
def _alloc(op, node, doc):
    dtype = out_dtypes(node)[0]

    def run(value, *dims):
        shape = tuple(static_int(d, "extent", op) for d in dims)
        xp = _xp(value)
        return (xp.broadcast_to(xp.asarray(value).astype(dtype), shape),)

    return run


@register("Arange")
def _arange(op, node, doc):
    dtype = np.dtype(op["dtype"])

    def run(start, stop, step):
        if not is_concrete(start, stop, step):
            raise NotImplementedError("JAX needs the bounds of ARange while tracing")
        return (np.arange(np.asarray(start).item(), np.asarray(stop).item(), np.asarray(step).item()).astype(dtype),)

    return run


@register("Eye")
def _eye(op, node, doc):
    dtype = np.dtype(op["dtype"])
    return lambda n, m, k: (
        np.eye(static_int(n, "n", op), static_int(m, "m", op), static_int(k, "k", op), dtype=dtype),
    )


@register("MakeVector")
def _make_vector(op, node, doc):
    dtype = np.dtype(op["dtype"])

    def run(*xs):
        xp = _xp(*xs)
        return (xp.stack([xp.asarray(x).astype(dtype) for x in xs]) if xs else np.zeros(0, dtype),)

    return run


@register("Join")
def _join(op, node, doc):
    axis = op["axis"]
    dtype = out_dtypes(node)[0]

    def run(*xs):
        xp = _xp(*xs)
        return (xp.concatenate([xp.asarray(x).astype(dtype) for x in xs], axis=axis),)

    return run


@register("Split")
def _split(op, node, doc):
    axis = op["axis"]

    def run(x, sizes):
        if not is_concrete(sizes):
            raise NotImplementedError("JAX needs the sizes of Split while tracing")
        cuts = np.cumsum(np.asarray(sizes))[:-1]
        return tuple(_xp(x).split(x, cuts, axis=axis))

    return run


def _index(spec, values, op):
    """The Python index of a basic-index pattern from its scalar inputs."""
    out, k = [], 0
    for entry in spec:
        if entry == "index":
            v = values[k]
            out.append(int(np.asarray(v)) if is_concrete(v) else jnp.asarray(v))
            k += 1
            continue
        bounds = []
        for part in ("start", "stop", "step"):
            if entry[part]:
                bounds.append(static_int(values[k], f"slice {part}", op))
                k += 1
            else:
                bounds.append(None)
        out.append(slice(*bounds))
    return tuple(out)


@register("Subtensor")
def _subtensor(op, node, doc):
    spec = op["index"]

    def run(x, *idx):
        index = _index(spec, idx, op)
        xp = _xp(x, *[i for i in index if not isinstance(i, slice)])
        return (xp.asarray(x)[index],)

    return run


@register("IncSubtensor")
def _inc_subtensor(op, node, doc):
    spec, setting = op["index"], op["set"]
    dtype = out_dtypes(node)[0]

    def run(x, y, *idx):
        index = _index(spec, idx, op)
        at = jnp.asarray(x).at[index]
        y = jnp.asarray(y).astype(dtype)
        return ((at.set(y) if setting else at.add(y)),)

    return run


def _normalise(i, n):
    i = jnp.asarray(i)
    return jnp.where(i < 0, i + n, i)


@register("Take")
def _take(op, node, doc):
    axis = op["axis"]

    def run(x, i):
        x = jnp.asarray(x)
        return (jnp.take(x, _normalise(i, x.shape[axis]), axis=axis, mode="clip"),)

    return run


@register("IncTake")
def _inc_take(op, node, doc):
    axis, setting = op["axis"], op["set"]
    dtype = out_dtypes(node)[0]

    def run(x, y, i):
        x = jnp.asarray(x)
        index = (slice(None),) * axis + (_normalise(i, x.shape[axis]),)
        at = x.at[index]
        y = jnp.asarray(y).astype(dtype)
        return ((at.set(y) if setting else at.add(y)),)

    return run


@register("MatMul")
def _matmul(op, node, doc):
    dtype = out_dtypes(node)[0]
    return lambda a, b: (jnp.matmul(jnp.asarray(a).astype(dtype), jnp.asarray(b).astype(dtype)),)


@register("FusedMatMul")
def _fused_matmul(op, node, doc):
    """A matrix product and its elementwise epilogue (the body's input 0 is the product)."""
    dtype = out_dtypes(node)[0]
    body = doc.frozen(op["body"])

    def run(a, b, *others):
        product = jnp.matmul(jnp.asarray(a).astype(dtype), jnp.asarray(b).astype(dtype))
        (value,) = body(product, *others)
        return (jnp.broadcast_to(jnp.asarray(value), product.shape).astype(dtype),)

    return run
