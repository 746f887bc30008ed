"""Run-time checks (``Op::CheckAndRaise``, PyTensor's ``CheckAndRaise``/``Assert``) in PyTorch:
each condition is read when the op runs (eagerly, or at a graph break under
``torch.compile``), and a false one raises the check's exception, as PyTensor's PyTorch
backend does."""

from __future__ import annotations

from oxtensor.link.pytorch.dispatch import register, tensor


@register("CheckAndRaise")
def _check_and_raise(op, node, doc):
    from oxtensor.raise_op import _exception

    kind, msg = op["exc"], op["msg"]

    def run(x, *conds):
        if not all(bool(tensor(c)) for c in conds):
            raise _exception(kind, msg, f"raised by the PyTorch translation of CheckAndRaise{{{kind}}}")
        return (x,)

    return run
