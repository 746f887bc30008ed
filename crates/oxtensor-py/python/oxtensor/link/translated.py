"""What the engines that translate a graph document share (``oxtensor.link.jax``,
``oxtensor.link.pytorch``): the rewrites the graph gets before translation, and
``TranslatedFunction``, a compiled function called like any ``Function`` (arguments checked
and converted as the default mode does them, shared variables read and updated, pickled and
copied through its recipe) whose body is the engine's translation."""

from __future__ import annotations

import numpy as np

from oxtensor import _core

#: Rewrite passes a translated graph leaves out: fusion builds Composites and fused reductions
#: (which would only hide ops from the engine, which fuses, or not, by itself), scan_last_only
#: trims loop outputs to rows the engine's loop would not keep anyway.
EXCLUDED = ["fusion", "scan_last_only"]


def rewrite_spec(mode_spec):
    """The interpreter mode whose rewrites give the graph an engine translates."""
    _, _, optimizer, included, excluded, required = mode_spec
    optimizer = "fast_run" if optimizer in (None, "default") else optimizer
    return (None, "py", optimizer, list(included), list(excluded) + EXCLUDED, list(required))


def recompile(recipe):
    """The recorded function compiled with the interpreter and the translation rewrites: the
    graph whose document an engine translates."""
    spec = rewrite_spec(recipe["mode"])
    return _core.compile(
        recipe["inputs"], recipe["outputs"], recipe["single"], recipe["updates"], recipe["givens"],
        spec, recipe["name"], recipe["on_unused_input"], True, recipe["allow_input_downcast"],
        [None] * len(recipe["inputs"]), recipe["input_names"], False,
    )


def funcify_source(obj, inputs, cls):
    """The ``_core.Function`` whose rewritten graph a ``*_funcify`` call translates: that of a
    compiled function of the engine's class ``cls``, a compiled ``Function`` itself, or output
    variables compiled with their ``inputs`` and the translation rewrites."""
    from oxtensor.compile.function import function
    from oxtensor.compile.mode import Mode

    if isinstance(obj, cls):
        return recompile(obj._recipe)
    if isinstance(obj, _core.Function):
        return obj
    outputs = list(obj) if isinstance(obj, (list, tuple)) else [obj]
    if inputs is None:
        raise TypeError("funcify of variables needs their inputs: funcify(outputs, inputs=[...])")
    mode = Mode(linker="py", optimizer="fast_run").excluding(*EXCLUDED)
    return function(list(inputs), outputs, mode=mode, on_unused_input="ignore")


class TranslatedFunction:
    """A function compiled by translating its rewritten graph for an engine: called like any
    ``Function`` (arrays in, NumPy arrays out, shared variables read and updated).

    Subclasses set ``engine`` (its name in ``repr``) and define ``_translation_of(text,
    shared)`` (the engine's ``Translation``), ``_prepare(run)`` (what is called, e.g. jitted)
    and ``_execute(fn, arrays, shared_values)`` (NumPy arrays of the outputs, then of the
    update values)."""

    engine = "?"

    def __init__(self, recipe, trust_input=False):
        self._recipe = recipe
        self.trust_input = bool(trust_input)
        self.name = recipe["name"]
        rewritten = recompile(recipe)
        text, shared = rewritten._serialized_graph()
        self._translation = self._translation_of(text, shared)
        self._compiled = self._prepare(self._translation.run)
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
        results = self._execute(self._compiled, arrays, self._translation.shared_values())
        k = self._translation.n_outputs
        self._translation.store_updates(results[k:])
        outputs = list(results[:k])
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
        return f"<oxtensor {type(self).__name__}{name} ({len(self._translation.input_nodes)} inputs)>"
