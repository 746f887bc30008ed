"""The extra tensor ops (``Op::Extra``): cumulative sums and products, stable sorts,
``searchsorted``, ``repeat``, and, since eager torch knows every value when an op runs, the
ops whose output length depends on values (``unique``, ``bincount``, ``nonzero``). An ``axis``
of ``None`` means the flattened array, as in NumPy."""

from __future__ import annotations

import torch

from oxtensor.link.pytorch.dispatch import op_label, out_dtypes, register, tensor, torch_dtype


def _along(x, axis):
    """``x`` and the dim to work along (the flattened array for ``axis=None``)."""
    x = tensor(x)
    return (x.reshape(-1), 0) if axis is None else (x, axis)


def _cumulate(op, dtype):
    fn = torch.cumprod if op["mul"] else torch.cumsum

    def go(x):
        x, dim = _along(x, op["axis"])
        return (fn(x, dim=dim, dtype=dtype),)

    return go


def _sort(op, dtype, arg):
    def go(x):
        x, dim = _along(x, op["axis"])
        if x.dtype == torch.bool:
            x = x.to(torch.uint8)
        if arg:
            return (torch.argsort(x, dim=dim, stable=True).to(dtype),)
        return (torch.sort(x, dim=dim, stable=True).values.to(dtype),)

    return go


def _searchsorted(op, dtype):
    def go(a, v):
        a, v = tensor(a), tensor(v)
        common = torch.promote_types(a.dtype, v.dtype)
        return (torch.searchsorted(a.to(common), v.to(common), right=bool(op["right"])).to(dtype),)

    return go


def _repeat(op):
    def go(x, repeats):
        x, dim = _along(x, op["axis"])
        repeats = tensor(repeats).to(torch.int64)
        if repeats.ndim == 0:
            repeats = repeats.expand(x.shape[dim])
        return (torch.repeat_interleave(x, repeats, dim=dim),)

    return go


def _unique(op, node):
    dtypes = [torch_dtype(d) for d in out_dtypes(node)]
    inverse_rank = len(node["types"][2 if op["index"] else 1]["shape"]) if op["inverse"] else 1

    def go(x):
        x = tensor(x)
        flat = x.reshape(-1)
        values, inverse, counts = torch.unique(flat, sorted=True, return_inverse=True, return_counts=True)
        outs = [values]
        if op["index"]:
            # The first position of each value: the smallest position mapped to it.
            first = torch.full((values.shape[0],), flat.shape[0], dtype=torch.int64)
            positions = torch.arange(flat.shape[0], dtype=torch.int64)
            outs.append(first.scatter_reduce(0, inverse, positions, reduce="amin"))
        if op["inverse"]:
            outs.append(inverse.reshape(x.shape) if inverse_rank == x.ndim and x.ndim != 1 else inverse)
        if op["counts"]:
            outs.append(counts)
        return tuple(o.to(d) for o, d in zip(outs, dtypes))

    return go


def _bincount(op, dtype):
    def go(x, *weights):
        x = tensor(x).to(torch.int64)
        if x.numel() and int(x.min()) < 0:
            raise ValueError("bincount: the values must be non-negative")
        w = tensor(weights[0]).to(torch.float64) if weights else None
        return (torch.bincount(x, weights=w, minlength=int(op["minlength"] or 0)).to(dtype),)

    return go


def _nonzero(node):
    dtypes = [torch_dtype(d) for d in out_dtypes(node)]

    def go(x):
        x = tensor(x)
        found = torch.nonzero(x).T
        if len(dtypes) == 1 and len(node["types"][0]["shape"]) == 2:
            return (found.to(dtypes[0]),)
        return tuple(row.to(d) for row, d in zip(found, dtypes))

    return go


@register("Extra")
def _extra(op, node, doc):
    dtype = torch_dtype(out_dtypes(node)[0])
    kind = op["name"]
    if kind == "cumulate":
        return _cumulate(op, dtype)
    if kind in ("sort", "argsort"):
        return _sort(op, dtype, kind == "argsort")
    if kind == "searchsorted":
        return _searchsorted(op, dtype)
    if kind == "repeat":
        return _repeat(op)
    if kind == "unique":
        return _unique(op, node)
    if kind == "bincount":
        return _bincount(op, dtype)
    if kind == "nonzero":
        return _nonzero(node)
    raise NotImplementedError(f"no PyTorch translation for op {op_label(op)}")


