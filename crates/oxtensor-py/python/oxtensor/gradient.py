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


# ---- the rest of pytensor.gradient ---------------------------------------------------------


#: Raised when a gradient is undefined (PyTensor's ``NullType`` gradient); a ``TypeError``.
NullTypeGradError = _core.NullTypeGradError


class GradientError(Exception):
    """Raised by :func:`verify_grad` when the symbolic and numeric gradients disagree."""

    def __init__(self, arg, err_pos, shape, val1, val2, abs_err, rel_err, abs_tol, rel_tol):
        super().__init__()
        self.arg = arg
        self.err_pos = err_pos
        self.shape = shape
        self.val1 = val1
        self.val2 = val2
        self.abs_err = abs_err
        self.rel_err = rel_err
        self.abs_tol = abs_tol
        self.rel_tol = rel_tol

    def __str__(self):
        return (
            f"GradientError: numeric gradient and analytic gradient exceed tolerance:\n"
            f"  At position {self.err_pos} of argument {self.arg} with shape {self.shape},\n"
            f"    val1 = {self.val1:f}  (analytic)\n    val2 = {self.val2:f}  (numeric)\n"
            f"    abs. error = {self.abs_err:f},  abs. tolerance = {self.abs_tol:f}\n"
            f"    rel. error = {self.rel_err:f},  rel. tolerance = {self.rel_tol:f}"
        )


__all__ += [
    "NullTypeGradError",
    "GradientError",
    "zero_grad",
    "disconnected_grad",
    "grad_clip",
    "grad_scale",
    "grad_undefined",
    "grad_not_implemented",
    "numeric_grad",
    "verify_grad",
    "subgraph_grad",
    "hessian_vector_product",
    "pushforward_through_pullback",
    "zero_grad_",
    "disconnected_grad_",
    "undefined_grad",
    "undefined_grad_",
]


def _tensor(x):
    from oxtensor.tensor.basic import as_tensor_variable

    return as_tensor_variable(x)


def zero_grad(x):
    """``x`` in the forward pass, with a zero gradient (``x`` stays connected)."""
    return _core.grad_marker("zero", _tensor(x))


def disconnected_grad(x):
    """``x`` in the forward pass, treated as a constant by differentiation."""
    return _core.grad_marker("disconnected", _tensor(x))


def undefined_grad(x):
    """``x`` in the forward pass, with an undefined gradient: ``grad`` through it to a requested
    variable raises :class:`NullTypeGradError` (or gives ``None`` with
    ``null_gradients="return"``)."""
    return _core.grad_marker("undefined", _tensor(x))


zero_grad_ = zero_grad
disconnected_grad_ = disconnected_grad
undefined_grad_ = undefined_grad


def grad_clip(x, lower_bound, upper_bound):
    """``x`` in the forward pass; the gradient flowing into ``x`` is clipped elementwise to
    ``[lower_bound, upper_bound]``."""
    return _core.grad_marker("clip", _tensor(x), _tensor(lower_bound), _tensor(upper_bound))


def grad_scale(x, multiplier):
    """``x`` in the forward pass; the gradient flowing into ``x`` is multiplied by
    ``multiplier``. Built as ``x + (multiplier - 1) * (x - disconnected_grad(x))``: the added
    term is exactly zero for finite ``x`` and its gradient is ``multiplier - 1``."""
    x = _tensor(x)
    return x + (multiplier - 1) * (x - disconnected_grad(x))


def grad_undefined(op, x_pos, x, comment=""):
    """PyTensor's marker for an undefined gradient inside an ``Op.grad``; oxtensor has no
    Python-defined ops, so asking for one is the error it would become."""
    raise NullTypeGradError(f"grad of {op} with respect to input {x_pos} ({x}) is undefined. {comment}".strip())


def grad_not_implemented(op, x_pos, x, comment=""):
    """PyTensor's marker for an unimplemented gradient inside an ``Op.grad``; raises, as
    requesting that gradient would."""
    raise NotImplementedError(f"grad of {op} with respect to input {x_pos} ({x}) is not implemented. {comment}".strip())


def hessian_vector_product(cost, wrt, p, **grad_kwargs):
    """The product of the Hessian of ``cost`` with ``p`` (one per ``wrt``):
    ``grad(sum(grad(cost, wrt) * p), wrt)``."""
    single, wrt_list = _as_list(wrt)
    _, p_list = _as_list(p)
    g = grad(cost, wrt_list, **grad_kwargs)
    from oxtensor.tensor.math import sum as _sum

    inner = None
    for gi, pi in zip(g, p_list):
        term = _sum(gi * pi)
        inner = term if inner is None else inner + term
    out = grad(inner, wrt_list, **grad_kwargs)
    return out[0] if single else out


def pushforward_through_pullback(outputs, inputs, tangents, disconnected_outputs="raise", return_disconnected="zero"):
    """Forward-mode products computed by transposing the pullback (how oxtensor computes every
    pushforward)."""
    return pushforward(outputs, inputs, tangents, disconnected_outputs, return_disconnected)


def subgraph_grad(wrt, end, start=None, cost=None, details=False):
    """Gradients through a sub-graph: of ``cost`` (plus the ``start`` gradients, a dict from
    variables to their known gradients) with respect to ``wrt`` and to ``end``. Returns
    ``(wrt_grads, end_grads)``."""
    if cost is None and not start:
        raise ValueError("subgraph_grad: give a cost or known start gradients")
    params = list(wrt) + list(end)
    known = dict(start) if start else None
    grads = grad(cost, params, known_grads=known, consider_constant=list(end), disconnected_inputs="ignore")
    wrt_grads, end_grads = grads[: len(wrt)], grads[len(wrt) :]
    if details:
        return wrt_grads, end_grads, None, None
    return wrt_grads, end_grads


class numeric_grad:
    """Central finite-difference gradient of a NumPy function ``f`` at the point ``pt`` (a list
    of arrays); ``gf`` holds one array per input. PyTensor's helper of :func:`verify_grad`."""

    type_eps = {"float64": 1e-7, "float32": 3e-4}

    def __init__(self, f, pt, eps=None, out_type=None):
        import numpy as np

        pt = [np.array(p) for p in pt]
        self.gf = []
        for k, p in enumerate(pt):
            e = eps or self.type_eps.get(str(p.dtype), 1e-7)
            g = np.zeros(p.shape, dtype="float64")
            flat = p.reshape(-1)
            for i in range(flat.size):
                old = flat[i].copy()
                flat[i] = old + e
                hi = float(f(*pt))
                flat[i] = old - e
                lo = float(f(*pt))
                flat[i] = old
                g.reshape(-1)[i] = (hi - lo) / (2 * e)
            self.gf.append(g)

    @staticmethod
    def abs_rel_err(a, b):
        """Absolute and relative errors between ``a`` and ``b``."""
        import numpy as np

        abs_err = np.abs(a - b)
        rel_err = abs_err / np.maximum(np.abs(a) + np.abs(b), 1e-8)
        return abs_err, rel_err

    def max_err(self, g_pt, abs_tol, rel_tol):
        """The worst ``(argument, position, abs_err, rel_err)`` where both tolerances are
        exceeded, by the error relative to tolerance."""
        import numpy as np

        worst = (None, None, 0.0, 0.0, -1.0)
        for k, (a, b) in enumerate(zip(g_pt, self.gf)):
            abs_err, rel_err = self.abs_rel_err(np.asarray(a, dtype="float64"), b)
            score = np.minimum(abs_err / abs_tol, rel_err / rel_tol)
            if score.size and float(score.max()) > worst[4]:
                pos = int(score.argmax())
                worst = (k, pos, float(abs_err.reshape(-1)[pos]), float(rel_err.reshape(-1)[pos]), float(score.max()))
        return worst


def verify_grad(
    fun,
    pt,
    n_tests=2,
    rng=None,
    eps=None,
    out_type=None,
    abs_tol=None,
    rel_tol=None,
    mode=None,
    cast_to_output_type=False,
    no_debug_ref=True,
):
    """Checks the symbolic gradient of ``fun`` (a function of symbolic inputs) at ``pt`` (a
    list of arrays) against central finite differences of a random projection of its output,
    as ``pytensor.gradient.verify_grad``; raises :class:`GradientError` on a mismatch."""
    import numpy as np

    import oxtensor
    from oxtensor.tensor.basic import constant, tensor
    from oxtensor.tensor.math import sum as _sum

    if not isinstance(pt, (list, tuple)):
        raise TypeError("verify_grad: pt must be a list of arrays")
    pt = [np.asarray(p) for p in pt]
    if rng is None:
        rng = np.random.default_rng(0)
    float32 = any(p.dtype == np.float32 for p in pt)
    abs_tol = abs_tol if abs_tol is not None else (1e-2 if float32 else 1e-4)
    rel_tol = rel_tol if rel_tol is not None else (1e-2 if float32 else 1e-4)
    # Differentiate in float64 for the numeric side, whatever the inputs' dtype.
    xs = [tensor(f"input {i}", dtype=str(p.dtype), shape=p.shape) for i, p in enumerate(pt)]
    out = fun(*xs)
    out_shape = oxtensor.function(xs, out.shape, mode=mode, on_unused_input="ignore")(*pt)
    for _ in range(n_tests):
        proj_val = rng.random(tuple(int(s) for s in out_shape)) + 0.5
        proj = constant(proj_val.astype(out.dtype if str(out.dtype).startswith("float") else "float64"))
        cost = _sum(out * proj)
        cost_fn = oxtensor.function(xs, cost, mode=mode, on_unused_input="ignore")
        grads = grad(cost, xs, disconnected_inputs="ignore")
        grad_fn = oxtensor.function(xs, grads, mode=mode, on_unused_input="ignore")
        analytic = grad_fn(*pt)
        num = numeric_grad(lambda *a: cost_fn(*[np.asarray(v, dtype=p.dtype) for v, p in zip(a, pt)]), [p.astype("float64") for p in pt], eps=eps or (1e-3 if float32 else 1e-6))
        k, pos, a_err, r_err, score = num.max_err(analytic, abs_tol, rel_tol)
        if score > 1.0:
            a_val = float(np.asarray(analytic[k]).reshape(-1)[pos])
            n_val = float(num.gf[k].reshape(-1)[pos])
            raise GradientError(k, pos, pt[k].shape, a_val, n_val, a_err, r_err, abs_tol, rel_tol)
