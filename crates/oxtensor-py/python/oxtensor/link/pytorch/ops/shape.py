"""Layout, shape, indexing and matrix-product ops as eager torch calls. Shapes are tensors of
``int64`` as in the graph; extents and bounds are read from them when the op runs.

Torch slices take no negative step: such a slice is read as the same positions in increasing
order, then flipped (``_basic``), and written the same way with the values flipped."""

from __future__ import annotations

import numpy as np
import torch

from oxtensor.link.pytorch.dispatch import as_int, out_dtypes, register, tensor, torch_dtype


@register("DimShuffle")
def _dimshuffle(op, node, doc):
    order = op["order"]

    def run(x):
        x = tensor(x)
        kept = [o for o in order if o is not None]
        dropped = [d for d in range(x.ndim) if d not in kept]
        y = x.permute(kept + dropped) if x.ndim else x
        return (y.reshape(tuple(x.shape[o] if o is not None else 1 for o in order)),)

    return run


@register("Reshape")
def _reshape(op, node, doc):
    return lambda x, shape: (tensor(x).reshape(tuple(tensor(shape).tolist())),)


@register("Shape")
def _shape(op, node, doc):
    return lambda x: (torch.tensor(tuple(tensor(x).shape), dtype=torch.int64),)


@register("ShapeI")
def _shape_i(op, node, doc):
    axis = op["axis"]
    return lambda x: (torch.tensor(tensor(x).shape[axis], dtype=torch.int64),)


@register("SpecifyShape")
def _specify_shape(op, node, doc):
    want = op["shape"]

    def run(x, *_dims):
        got = tuple(tensor(x).shape)
        if len(got) != len(want) or any(w is not None and w != g for w, g in zip(want, got)):
            raise ValueError(f"SpecifyShape: expected shape {want}, got {got}")
        return (x,)

    return run


@register("GradMarker")
def _grad_marker(op, node, doc):
    return lambda x, *_bounds: (x,)


@register("Alloc")
def _alloc(op, node, doc):
    dtype = torch_dtype(out_dtypes(node)[0])
    return lambda value, *dims: (torch.broadcast_to(tensor(value).to(dtype), tuple(as_int(d) for d in dims)),)


@register("Arange")
def _arange(op, node, doc):
    dtype = np.dtype(op["dtype"])

    def run(start, stop, step):
        bounds = [tensor(b).item() for b in (start, stop, step)]
        return (torch.from_numpy(np.arange(*bounds).astype(dtype)),)

    return run


@register("Eye")
def _eye(op, node, doc):
    dtype = np.dtype(op["dtype"])
    return lambda n, m, k: (torch.from_numpy(np.eye(as_int(n), as_int(m), as_int(k), dtype=dtype)),)


@register("MakeVector")
def _make_vector(op, node, doc):
    dtype = torch_dtype(op["dtype"])

    def run(*xs):
        if not xs:
            return (torch.zeros(0, dtype=dtype),)
        return (torch.stack([tensor(x).to(dtype) for x in xs]),)

    return run


@register("Join")
def _join(op, node, doc):
    axis = op["axis"]
    dtype = torch_dtype(out_dtypes(node)[0])
    return lambda *xs: (torch.cat([tensor(x).to(dtype) for x in xs], dim=axis),)


@register("Split")
def _split(op, node, doc):
    axis = op["axis"]

    def run(x, sizes):
        x, sizes = tensor(x), tensor(sizes).tolist()
        if sum(sizes) != x.shape[axis] or min(sizes, default=0) < 0:
            raise ValueError(f"Split: sizes {sizes} do not split an axis of length {x.shape[axis]}")
        return tuple(torch.split(x, sizes, dim=axis))

    return run


def _index(spec, values):
    """The Python index of a basic-index pattern from its scalar inputs."""
    out, k = [], 0
    for entry in spec:
        if entry == "index":
            out.append(as_int(values[k]))
            k += 1
            continue
        bounds = []
        for part in ("start", "stop", "step"):
            if entry[part]:
                bounds.append(as_int(values[k]))
                k += 1
            else:
                bounds.append(None)
        out.append(slice(*bounds))
    return out


def _basic(x, index):
    """``index`` with every negative-step slice turned into the increasing slice of the same
    positions, and the result axes to flip back."""
    plain, flips, out_axis = [], [], 0
    for dim, entry in enumerate(index):
        if not isinstance(entry, slice):
            plain.append(entry)
            continue
        if entry.step is not None and entry.step < 0:
            positions = range(*entry.indices(x.shape[dim]))
            if len(positions):
                entry = slice(positions[-1], positions[0] + 1, -entry.step)
            else:
                entry = slice(0, 0)
            flips.append(out_axis)
        plain.append(entry)
        out_axis += 1
    return tuple(plain), flips


@register("Subtensor")
def _subtensor(op, node, doc):
    spec = op["index"]

    def run(x, *idx):
        x = tensor(x)
        index, flips = _basic(x, _index(spec, idx))
        y = x[index]
        return (y.flip(flips) if flips else y,)

    return run


@register("IncSubtensor")
def _inc_subtensor(op, node, doc):
    spec, setting = op["index"], op["set"]
    dtype = torch_dtype(out_dtypes(node)[0])

    def run(x, y, *idx):
        out = tensor(x).to(dtype).clone()
        index, flips = _basic(out, _index(spec, idx))
        view = out[index]
        y = torch.broadcast_to(tensor(y).to(dtype), view.shape)
        y = y.flip(flips) if flips else y
        if setting:
            view.copy_(y)
        else:
            view.add_(y)
        return (out,)

    return run


def _positions(i, n):
    i = tensor(i)
    return torch.where(i < 0, i + n, i)


@register("Take")
def _take(op, node, doc):
    axis = op["axis"]

    def run(x, i):
        x, i = tensor(x), tensor(i)
        picked = torch.index_select(x, axis, _positions(i, x.shape[axis]).reshape(-1))
        return (picked.reshape(x.shape[:axis] + i.shape + x.shape[axis + 1:]),)

    return run


@register("IncTake")
def _inc_take(op, node, doc):
    axis, setting = op["axis"], op["set"]
    dtype = torch_dtype(out_dtypes(node)[0])

    def run(x, y, i):
        out = tensor(x).to(dtype).clone()
        i = _positions(i, out.shape[axis])
        target = out.shape[:axis] + i.shape + out.shape[axis + 1:]
        y = torch.broadcast_to(tensor(y).to(dtype), target)
        # index_put_ indexes leading axes: move the indexed axis (and y's index axes) first;
        # the moved tensor is a view, so out is written.
        front = out.movedim(axis, 0)
        y = y.movedim(list(range(axis, axis + i.ndim)), list(range(i.ndim)))
        front.index_put_((i,), y, accumulate=not setting)
        return (out,)

    return run


@register("MatMul")
def _matmul(op, node, doc):
    dtype = torch_dtype(out_dtypes(node)[0])
    return lambda a, b: (torch.matmul(tensor(a).to(dtype), tensor(b).to(dtype)),)


@register("FusedMatMul")
def _fused_matmul(op, node, doc):
    """A matrix product and its elementwise epilogue (the body's input 0 is the product)."""
    dtype = torch_dtype(out_dtypes(node)[0])
    body = doc.frozen(op["body"])

    def run(a, b, *others):
        product = torch.matmul(tensor(a).to(dtype), tensor(b).to(dtype))
        (value,) = body(product, *others)
        return (tensor(value).to(dtype).expand(product.shape),)

    return run
