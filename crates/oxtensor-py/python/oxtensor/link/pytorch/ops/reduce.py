"""Reductions: ``Reduce``, ``ArgReduce`` and ``FusedReduce`` (a Composite's program reduced).
float32 sums and products accumulate in float64, as the other backends do."""

from __future__ import annotations

import torch

from oxtensor.link.pytorch.dispatch import out_dtypes, register, tensor, torch_dtype


def _each_axis(fn, x, axes):
    # Highest axis first, so the lower axes keep their numbers.
    for a in sorted(axes, reverse=True):
        x = fn(x, dim=a)
    return x


def _reducer(fn_name, out_dtype):
    out = torch_dtype(out_dtype)
    acc = torch.float64 if out == torch.float32 else out

    def go(x, axes):
        x = tensor(x)
        if not axes:
            return x.to(torch.bool if fn_name in ("All", "Any") else out)
        if fn_name == "Sum":
            return torch.sum(x.to(acc), dim=axes).to(out)
        if fn_name == "Prod":
            return _each_axis(torch.prod, x.to(acc), axes).to(out)
        if fn_name == "Max":
            return torch.amax(x, dim=axes).to(out)
        if fn_name == "Min":
            return torch.amin(x, dim=axes).to(out)
        if fn_name == "All":
            return _each_axis(torch.all, x.to(torch.bool), axes)
        if fn_name == "Any":
            return _each_axis(torch.any, x.to(torch.bool), axes)
        raise NotImplementedError(f"no PyTorch translation for op Reduce{{{fn_name}}}")

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
        full = torch.broadcast_shapes(*[tensor(x).shape for x in xs])
        return (go(tensor(value).expand(full), axes),)

    return run


@register("ArgReduce")
def _arg_reduce(op, node, doc):
    axis = op["axis"]
    fn = torch.argmax if op["fn"] == "argmax" else torch.argmin

    def run(x):
        x = tensor(x)
        if x.dtype == torch.bool:
            x = x.to(torch.uint8)
        if axis is None:
            return (fn(x.reshape(-1), dim=0).to(torch.int64),)
        return (fn(x, dim=axis).to(torch.int64),)

    return run
