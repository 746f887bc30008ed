"""Gradients: ``oxtensor.grad`` (``pytensor.grad``), ``jacobian`` and ``hessian``, computed
symbolically by the Rust core."""

from __future__ import annotations

from oxtensor import _core

HAVE_GRAD = hasattr(_core, "grad")

__all__ = ["HAVE_GRAD", "grad", "jacobian", "hessian", "DisconnectedInputError"]


class DisconnectedInputError(ValueError):
    """Raised by ``grad`` for a ``wrt`` variable the cost does not depend on (the Rust core
    raises a ``ValueError`` with the same meaning)."""


def _as_list(wrt):
    single = not isinstance(wrt, (list, tuple))
    return single, [wrt] if single else list(wrt)


def grad(
    cost,
    wrt,
    consider_constant=None,
    disconnected_inputs="raise",
    add_names=True,
    known_grads=None,
    return_disconnected="zero",
    null_gradients="raise",
):
    """Symbolic gradient of the scalar ``cost`` with respect to ``wrt`` (a variable, or a list
    of them), as ``pytensor.grad``: returns a variable, or a list in the same order."""
    single, wrt_list = _as_list(wrt)
    known = list(known_grads.items()) if known_grads else []
    out = _core.grad(
        cost,
        wrt_list,
        list(consider_constant or []),
        disconnected_inputs,
        return_disconnected,
        null_gradients,
        known,
    )
    if add_names and cost is not None and getattr(cost, "name", None):
        for g, w in zip(out, wrt_list):
            if g is not None and g.name is None and w.name:
                g.name = f"(d{cost.name}/d{w.name})"
    return out[0] if single else out


def jacobian(expression, wrt, consider_constant=None, disconnected_inputs="raise"):
    """The Jacobian of ``expression`` with respect to ``wrt``: shape
    ``expression.shape + wrt.shape`` (the expression needs a static shape)."""
    single, wrt_list = _as_list(wrt)
    out = _core.jacobian(expression, wrt_list, list(consider_constant or []), disconnected_inputs)
    return out[0] if single else out


def hessian(cost, wrt, consider_constant=None, disconnected_inputs="raise"):
    """The Hessian of the scalar ``cost`` with respect to ``wrt``."""
    single, wrt_list = _as_list(wrt)
    out = _core.hessian(cost, wrt_list, list(consider_constant or []), disconnected_inputs)
    return out[0] if single else out
