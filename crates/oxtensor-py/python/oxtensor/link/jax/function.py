"""``mode="JAX"`` functions (``JAXFunction``) and ``jax_funcify``."""

from __future__ import annotations

import json

import jax
import numpy as np

from oxtensor import _core
from oxtensor.link.jax.graph import Document

#: Rewrite passes a JAX graph leaves out: fusion builds Composites and fused reductions (XLA
#: fuses by itself), scan_last_only trims loop outputs to rows JAX would not keep anyway.
EXCLUDED = ["fusion", "scan_last_only"]


def rewrite_spec(mode_spec):
    """The interpreter mode whose rewrites give the graph JAX translates."""
    _, _, optimizer, included, excluded, required = mode_spec
    optimizer = "fast_run" if optimizer in (None, "default") else optimizer
    return (None, "py", optimizer, list(included), list(excluded) + EXCLUDED, list(required))


class Translation:
    """A document translated: ``run(*inputs, *shared_values)`` returns the outputs, then the
    new values of the updated shared variables."""

    def __init__(self, text, shared):
        doc = json.loads(text)
        self.document = Document(doc)
        nodes = doc["nodes"]
        self.input_nodes = [r[0] for r in doc["inputs"]]
        shared_nodes = [i for i, n in enumerate(nodes) if n["kind"] == "shared"]
        if len(shared_nodes) != len(shared):
            raise RuntimeError("internal error: the shared variables do not match the document")
        self.shared = list(shared)
        bound = {n: k for k, n in enumerate(self.input_nodes)}
        position = {n: len(self.input_nodes) + k for k, n in enumerate(shared_nodes)}
        bound.update(position)
        self.n_outputs = len(doc["outputs"])
        self.update_targets = [self.shared[position[t[0]] - len(self.input_nodes)] for t, _ in doc["updates"]]
        refs = doc["outputs"] + [v for _, v in doc["updates"]]
        self.run = self.document.program(refs, bound)
        self.input_types = [nodes[n]["type"] for n in self.input_nodes]

    def shared_values(self):
        return [np.asarray(s.get_value(borrow=True)) for s in self.shared]


def _recompile(recipe):
    spec = rewrite_spec(recipe["mode"])
    return _core.compile(
        recipe["inputs"], recipe["outputs"], recipe["single"], recipe["updates"], recipe["givens"],
        spec, recipe["name"], recipe["on_unused_input"], True, recipe["allow_input_downcast"],
        [None] * len(recipe["inputs"]), recipe["input_names"], False,
    )


class JAXFunction:
    """A function compiled with ``mode="JAX"``: called like any ``Function`` (arrays in, NumPy
    arrays out, shared variables read and updated), it runs one jitted JAX function."""

    def __init__(self, recipe, trust_input=False):
        self._recipe = recipe
        self.trust_input = bool(trust_input)
        self.name = recipe["name"]
        rewritten = _recompile(recipe)
        text, shared = rewritten._serialized_graph()
        self._translation = Translation(text, shared)
        self._jitted = jax.jit(self._translation.run)
        self._defaults = recipe["defaults"]
        self._names = recipe["input_names"]
        self._allow_downcast = recipe["allow_input_downcast"]

    @property
    def inputs(self):
        """The input variables."""
        return list(self._recipe["inputs"])

    def _arg(self, i, value):
        ty = self._translation.input_types[i]
        dtype = np.dtype(ty["dtype"])
        arr = np.asarray(value)
        if arr.dtype != dtype:
            if self._allow_downcast or np.can_cast(arr.dtype, dtype, "safe") or (
                arr.ndim == 0 and not isinstance(value, np.ndarray) and np.asarray(value, dtype).item() == arr.item()
            ):
                arr = arr.astype(dtype)
            else:
                raise TypeError(
                    f"argument {i} of {self!r}: expected dtype {dtype}, got {arr.dtype} (a lossy conversion; "
                    "pass allow_input_downcast=True to allow it)"
                )
        if not self.trust_input:
            shape = ty["shape"]
            if arr.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, arr.shape)):
                raise ValueError(f"argument {i} of {self!r}: expected shape {shape}, got {arr.shape}")
        return arr

    def __call__(self, *args, **kwargs):
        n = len(self._translation.input_nodes)
        values = list(args) + [None] * (n - len(args))
        if len(args) > n:
            raise TypeError(f"{self!r} takes {n} arguments, got {len(args)}")
        for key, v in kwargs.items():
            if key not in self._names:
                raise TypeError(f"{self!r} has no input named {key!r}")
            values[self._names.index(key)] = v
        for i, v in enumerate(values):
            if v is None:
                if self._defaults[i] is None:
                    raise TypeError(f"{self!r}: missing argument {i}")
                values[i] = self._defaults[i]
        arrays = [self._arg(i, v) for i, v in enumerate(values)]
        results = self._jitted(*arrays, *self._translation.shared_values())
        k = self._translation.n_outputs
        outputs = [np.array(r) for r in results[:k]]
        for target, value in zip(self._translation.update_targets, results[k:]):
            target.set_value(np.array(value), borrow=True)
        return outputs[0] if self._recipe["single"] else outputs

    def __reduce__(self):
        from oxtensor.compile import pickling

        return pickling._reduce_function(self)

    def copy(self, share_memory=False, swap=None, delete_updates=False, name=None, profile=None):
        """As ``Function.copy``."""
        from oxtensor.compile.pickling import copy_function

        return copy_function(self, share_memory, swap, delete_updates, name, profile)

    def __copy__(self):
        return self.copy(share_memory=True)

    def __deepcopy__(self, memo):
        return self.copy(share_memory=False)

    def __repr__(self):
        name = f" {self.name!r}" if self.name else ""
        return f"<oxtensor JAXFunction{name} ({len(self._translation.input_nodes)} inputs)>"


def jax_funcify(obj, inputs=None):
    """A plain JAX function of a graph (PyTensor's ``jax_funcify``): ``fn(*inputs)`` returning
    the tuple of outputs, built from jax.numpy/jax.lax calls, not jitted (``jax.jit``,
    ``jax.vmap``, ``jax.grad`` apply). ``obj`` is a compiled function (any mode: its rewritten
    graph is translated), or an output variable or list of them with their ``inputs`` (then
    rewritten with the JAX pass set). Shared variables are read as constants (their values
    now); updates are not applied. An op without a translation raises ``NotImplementedError``
    naming it."""
    from oxtensor.compile.function import function
    from oxtensor.compile.mode import Mode

    if isinstance(obj, JAXFunction):
        fn = _recompile(obj._recipe)
    elif isinstance(obj, _core.Function):
        fn = obj
    else:
        outputs = list(obj) if isinstance(obj, (list, tuple)) else [obj]
        if inputs is None:
            raise TypeError("jax_funcify of variables needs their inputs: jax_funcify(outputs, inputs=[...])")
        mode = Mode(linker="py", optimizer="fast_run").excluding(*EXCLUDED)
        fn = function(list(inputs), outputs, mode=mode, on_unused_input="ignore")
    text, shared = fn._serialized_graph()
    t = Translation(text, shared)
    constants = t.shared_values()
    n = t.n_outputs

    def jax_fn(*args):
        return t.run(*args, *constants)[:n]

    return jax_fn
