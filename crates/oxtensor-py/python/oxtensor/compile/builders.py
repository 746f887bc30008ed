"""``OpFromGraph``: a graph used as an op (PyTensor's ``pytensor.compile.builders``)."""

import warnings

from oxtensor import _core
from oxtensor.tensor.basic import as_tensor_variable

__all__ = ["OpFromGraph"]


def _list(xs):
    return list(xs) if isinstance(xs, (list, tuple)) else [xs]


def _override(pullback, inputs, outputs, output_grads):
    """The gradients ``pullback`` gives: one callable (or ``OpFromGraph``) for all inputs, or
    (PyTensor's older form) one entry per input, ``None`` meaning the gradient through the
    graph."""
    if isinstance(pullback, OpFromGraph):
        return _list(pullback(*inputs, *outputs, *output_grads))
    if callable(pullback):
        return _list(pullback(inputs, outputs, output_grads))
    entries = list(pullback)
    if len(entries) != len(inputs):
        raise ValueError(f"pullback has {len(entries)} entries for {len(inputs)} inputs")
    from oxtensor.gradient import grad

    default = grad(
        None,
        inputs,
        known_grads=dict(zip(outputs, output_grads)),
        disconnected_inputs="ignore",
        return_disconnected="zero",
    )
    return [d if entry is None else entry(inputs, outputs, output_grads) for entry, d in zip(entries, default)]


def _forward(pushforward, inputs, outputs, tangents):
    """The output tangents ``pushforward`` gives: one callable (or ``OpFromGraph``) for all
    outputs, or one entry per output, ``None`` meaning the tangent through the graph."""
    if isinstance(pushforward, OpFromGraph):
        return _list(pushforward(*inputs, *tangents))
    if callable(pushforward):
        return _list(pushforward(inputs, tangents))
    entries = list(pushforward)
    if len(entries) != len(outputs):
        raise ValueError(f"pushforward has {len(entries)} entries for {len(outputs)} outputs")
    from oxtensor.gradient import Rop

    return [
        Rop(o, inputs, tangents) if entry is None else _list(entry(inputs, tangents))[0]
        for entry, o in zip(entries, outputs)
    ]


class OpFromGraph:
    """A graph from ``inputs`` to ``outputs`` turned into an op, called like a function on
    variables. Each call is one node holding the frozen graph, so the graph is rewritten and
    compiled once however often it is called; ``inline=True`` instead expands it at each call.

    Shared variables used by ``outputs`` become implicit inputs. The gradient comes from the
    graph, unless ``pullback`` (``lop_overrides`` is the older spelling) gives one: a callable
    ``pullback(inputs, outputs, output_grads)`` returning one gradient per input, called once
    here on symbolic variables. Forward mode (``Rop``) is derived from the gradient unless
    ``pushforward`` (``rop_overrides`` is the older spelling) gives a callable
    ``pushforward(inputs, tangents)`` returning one tangent per output. Either may also be an
    ``OpFromGraph`` called on those variables in order, or a list with one entry per input
    (per output for ``pushforward``), ``None`` standing for the default.
    """

    def __init__(
        self,
        inputs,
        outputs,
        *,
        inline=False,
        name=None,
        pullback=None,
        lop_overrides=None,
        pushforward=None,
        rop_overrides=None,
        grad_overrides=None,
        connection_pattern=None,
        strict=False,
        **kwargs,
    ):
        if lop_overrides is not None:
            warnings.warn("lop_overrides is deprecated: use pullback", FutureWarning, stacklevel=2)
            pullback = pullback if pullback is not None else lop_overrides
        if grad_overrides is not None:
            raise NotImplementedError("grad_overrides was removed from PyTensor: use pullback")
        self.inputs = [as_tensor_variable(v) for v in _list(inputs)]
        self.outputs = [as_tensor_variable(v) for v in _list(outputs)]
        self.inline = inline
        self.name = name
        self._single = not isinstance(outputs, (list, tuple))
        if rop_overrides is not None:
            warnings.warn("rop_overrides is deprecated: use pushforward", FutureWarning, stacklevel=2)
            pushforward = pushforward if pushforward is not None else rop_overrides
        from oxtensor import tensor as pt

        def like(v, suffix):
            return pt.tensor(f"{v.name or 'v'}_{suffix}", dtype=v.dtype, shape=tuple(v._static_shape))

        extra = {}
        if pullback is not None and not (isinstance(pullback, str) and pullback == "default"):
            output_grads = [like(o, "grad") for o in self.outputs]
            grads = _override(pullback, self.inputs, self.outputs, output_grads)
            if len(grads) != len(self.inputs):
                raise ValueError(f"pullback returned {len(grads)} gradients for {len(self.inputs)} inputs")
            extra["output_grads"] = output_grads
            extra["grads"] = [pt.zeros_like(x) if g is None else as_tensor_variable(g) for x, g in zip(self.inputs, grads)]
        if pushforward is not None and not (isinstance(pushforward, str) and pushforward == "default"):
            tangents = [like(x, "tangent") for x in self.inputs]
            outs = _forward(pushforward, self.inputs, self.outputs, tangents)
            if len(outs) != len(self.outputs):
                raise ValueError(f"pushforward returned {len(outs)} tangents for {len(self.outputs)} outputs")
            extra["tangents"] = tangents
            extra["output_tangents"] = [pt.zeros_like(o) if t is None else as_tensor_variable(t) for o, t in zip(self.outputs, outs)]
        self._op = _core._OpFromGraph(self.inputs, self.outputs, name, **extra)

    def __call__(self, *args):
        if len(args) != self._op.n_inputs:
            raise TypeError(f"{self} takes {self._op.n_inputs} inputs, got {len(args)}")
        outs = self._op.inline(list(args)) if self.inline else self._op.call(list(args))
        return outs[0] if len(outs) == 1 else outs

    def __eq__(self, other):
        return isinstance(other, OpFromGraph) and self.inline == other.inline and self._op == other._op

    def __hash__(self):
        return hash(self._op)

    def __repr__(self):
        return self.name or "OpFromGraph"
