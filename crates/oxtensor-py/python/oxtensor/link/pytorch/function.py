"""``mode="PYTORCH"`` functions (``PyTorchFunction``) and ``pytorch_funcify``."""

from __future__ import annotations

import torch

from oxtensor.link.document import Translation
from oxtensor.link.pytorch import dispatch
from oxtensor.link.translated import TranslatedFunction, funcify_source

def _translation(text, shared):
    return Translation(text, shared, dispatch.translate, constant=dispatch.tensor)


class PyTorchFunction(TranslatedFunction):
    """A function compiled with ``mode="PYTORCH"`` (eager torch calls) or
    ``mode="PYTORCH_COMPILED"`` (the same function through ``torch.compile``): called like any
    ``Function`` (NumPy arrays in, taken by ``torch.from_numpy`` without a copy where torch can;
    NumPy arrays out, shared variables read and updated)."""

    engine = "PyTorch"

    def _translation_of(self, text, shared):
        return _translation(text, shared)

    def _prepare(self, run):
        if self._recipe["mode"][0] == "PYTORCH_COMPILED":
            return torch.compile(run)
        return run

    def _execute(self, fn, arrays, shared_values):
        with torch.no_grad():
            results = fn(*[dispatch.tensor(a) for a in arrays], *[dispatch.tensor(v) for v in shared_values])
        return [dispatch.to_numpy(r, d) for r, d in zip(results, self._translation.result_dtypes)]


def pytorch_funcify(obj, inputs=None):
    """A plain PyTorch function of a graph (as ``jax_funcify``): ``fn(*inputs)`` taking tensors
    (or NumPy arrays) and returning the tuple of output tensors, built from eager torch calls
    (so autograd, ``torch.func`` and ``torch.compile`` apply). Values of ``uint16``/``uint32``/
    ``uint64`` are int64 tensors (see ``dispatch``). ``obj`` is a compiled function
    (any mode: its rewritten graph is translated), or an output variable or list of them with
    their ``inputs``. Shared variables are read as constants (their values now); updates are
    not applied. An op without a translation raises ``NotImplementedError`` naming it."""
    text, shared = funcify_source(obj, inputs, PyTorchFunction)._serialized_graph()
    t = _translation(text, shared)
    constants = [dispatch.tensor(v.copy()) for v in t.shared_values()]
    n = t.n_outputs

    def torch_fn(*args):
        return t.run(*[dispatch.tensor(a) for a in args], *constants)[:n]

    return torch_fn
