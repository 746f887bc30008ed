"""Gradients: ``oxtensor.grad`` (``pytensor.grad``), ``jacobian`` and ``hessian``, computed
symbolically by the Rust core."""

from __future__ import annotations

from oxtensor import _core

HAVE_GRAD = hasattr(_core, "grad")

__all__ = [
    "HAVE_GRAD",
    "grad",
    "jacobian",
    "hessian",
    "pushforward",
    "pullback",
    "Rop",
    "Lop",
    "DisconnectedInputError",
]


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
    ``expression.shape + wrt.shape`` (rows unrolled for static sizes, a scan otherwise)."""
    single, wrt_list = _as_list(wrt)
    out = _core.jacobian(expression, wrt_list, list(consider_constant or []), disconnected_inputs)
    return out[0] if single else out


def hessian(cost, wrt, consider_constant=None, disconnected_inputs="raise"):
    """The Hessian of the scalar ``cost`` with respect to ``wrt``."""
    single, wrt_list = _as_list(wrt)
    out = _core.hessian(cost, wrt_list, list(consider_constant or []), disconnected_inputs)
    return out[0] if single else out


def pushforward(f, wrt, tangents, disconnected_outputs="raise", return_disconnected="zero", use_op_pushforward=False):
    """The Jacobian-vector products of ``f`` (a variable or a list) with respect to ``wrt`` in
    the directions ``tangents`` (one per ``wrt``, of its shape), as ``pytensor.gradient.pushforward``
    (``Rop``). Outputs that do not depend on ``wrt`` get zeros."""
    single, outs = _as_list(f)
    _, wrt_list = _as_list(wrt)
    _, tangent_list = _as_list(tangents)
    if len(wrt_list) != len(tangent_list):
        raise ValueError(f"pushforward: {len(wrt_list)} wrt variables but {len(tangent_list)} tangents")
    from oxtensor.tensor.basic import as_tensor_variable

    tangent_list = [as_tensor_variable(t) for t in tangent_list]
    out = _core.pushforward(outs, wrt_list, tangent_list)
    return out[0] if single else out


def Rop(f, wrt, eval_points, disconnected_outputs="raise", return_disconnected="zero", use_op_rop_implementation=False):
    """PyTensor's older name for :func:`pushforward`."""
    return pushforward(f, wrt, eval_points, disconnected_outputs, return_disconnected)


def pullback(f, wrt, cotangents, consider_constant=None, disconnected_inputs="raise", return_disconnected="zero"):
    """The vector-Jacobian products: the gradient, with respect to ``wrt``, of ``f`` (a variable
    or a list) weighted by ``cotangents`` (one per ``f``), as ``pytensor.gradient.pullback``
    (``Lop``)."""
    _, outs = _as_list(f)
    _, cots = _as_list(cotangents)
    if len(outs) != len(cots):
        raise ValueError(f"pullback: {len(outs)} outputs but {len(cots)} cotangents")
    from oxtensor.tensor.basic import as_tensor_variable

    known = {o: as_tensor_variable(c) for o, c in zip(outs, cots)}
    return grad(
        None,
        wrt,
        consider_constant=consider_constant,
        disconnected_inputs=disconnected_inputs,
        known_grads=known,
        return_disconnected=return_disconnected,
    )


def Lop(f, wrt, eval_points, consider_constant=None, disconnected_inputs="raise", return_disconnected="zero"):
    """PyTensor's older name for :func:`pullback`."""
    return pullback(f, wrt, eval_points, consider_constant, disconnected_inputs, return_disconnected)
