"""Generator variables: ``shared_rng``, the ``RandomGeneratorSharedVariable`` class, and the
conversion between NumPy ``Generator``s and the graph's generator values (a ``uint64`` vector
of PCG64 state words: state high/low, increment high/low, ``has_uint32``, ``uinteger``)."""

from __future__ import annotations

import functools

import numpy as np

from oxtensor import _core

__all__ = ["RandomGeneratorSharedVariable", "rng", "shared_rng"]

RandomGeneratorSharedVariable = _core.RandomGeneratorSharedVariable

_MASK = (1 << 64) - 1


def _words_from_generator(generator):
    """The state words of a NumPy ``Generator`` backed by ``PCG64``."""
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"expected a numpy.random.Generator, got {type(generator).__name__}")
    state = generator.bit_generator.state
    if state.get("bit_generator") != "PCG64":
        raise TypeError(
            f"only PCG64 generators are supported, got {state.get('bit_generator')!r} "
            "(use np.random.default_rng)"
        )
    s, inc = int(state["state"]["state"]), int(state["state"]["inc"])
    return [s >> 64, s & _MASK, inc >> 64, inc & _MASK, int(state["has_uint32"]), int(state["uinteger"])]


def _generator_from_words(words):
    """A new NumPy ``Generator`` in the state the words hold."""
    w = [int(x) for x in words]
    bitgen = np.random.PCG64()
    bitgen.state = {
        "bit_generator": "PCG64",
        "state": {"state": (w[0] << 64) | w[1], "inc": (w[2] << 64) | w[3]},
        "has_uint32": w[4],
        "uinteger": w[5],
    }
    return np.random.Generator(bitgen)


def _shared_generator(value, name=None):
    """``pytensor.shared(generator)``: a shared generator variable holding a copy of its state."""
    return _core.shared_generator(value, name)


def shared_rng(value=None, *, seed=None, name=None, borrow=False):
    """A shared generator variable (PyTensor's ``pt.random.shared_rng``): from ``value`` (a
    NumPy ``Generator``) or, when it is ``None``, ``np.random.default_rng(seed)``."""
    if value is None:
        value = np.random.default_rng(seed)
    elif seed is not None:
        raise ValueError("give either a Generator value or a seed, not both")
    return _core.shared_generator(value, name)


def rng(name=None):
    """A symbolic generator input (PyTensor's ``pt.random.rng``): a function taking it is called
    with a NumPy ``Generator`` (PCG64), and returns ``Generator``s for the generator values it
    outputs (``next_rng``)."""
    from oxtensor.tensor import tensor

    return tensor(name=name, dtype="uint64", shape=(6,))


class _GeneratorFunction:
    """A compiled function with generator inputs or outputs: converts ``Generator`` arguments to
    state words and generator outputs back to new ``Generator``s around the compiled function
    (only such functions pay for this Python layer)."""

    def __init__(self, fn, in_gen, out_gen, single):
        self._fn, self._in_gen, self._out_gen, self._single = fn, in_gen, out_gen, single

    def __call__(self, *args, **kwargs):
        args = [
            np.asarray(_words_from_generator(a), dtype=np.uint64)
            if k < len(self._in_gen) and self._in_gen[k] and isinstance(a, np.random.Generator)
            else a
            for k, a in enumerate(args)
        ]
        out = self._fn(*args, **kwargs)
        if self._single:
            return _generator_from_words(out) if self._out_gen[0] else out
        return [_generator_from_words(o) if g else o for o, g in zip(out, self._out_gen)]

    def __getattr__(self, name):
        if name == "_fn":  # not set yet (while unpickling): no attribute to forward to
            raise AttributeError(name)
        return getattr(self._fn, name)

    def __reduce__(self):
        return (_GeneratorFunction, (self._fn, self._in_gen, self._out_gen, self._single))

    def copy(self, *args, **kwargs):
        """As ``Function.copy``, keeping the generator conversions."""
        return _GeneratorFunction(self._fn.copy(*args, **kwargs), self._in_gen, self._out_gen, self._single)


def _method(rng, name):
    """``rng.normal(...)``: the distribution ``name`` drawn from ``rng``, returning
    ``(next_rng, draw)`` (PyTensor's method API on generator variables)."""
    from oxtensor.tensor.random import basic

    if name.startswith("_") or name not in basic.__all__:
        raise AttributeError(f"{type(rng).__name__!r} object has no attribute {name!r}")
    fn = getattr(basic, name)

    @functools.wraps(fn)
    def method(*args, **kwargs):
        kwargs.setdefault("return_next_rng", True)
        return fn(*args, rng=rng, **kwargs)

    return method


def _is_generator_value(var):
    """True for a generator value: a ``uint64`` vector of the 6 PCG64 state words (a shared
    generator, or the ``next_rng`` a draw returns)."""
    return str(var.dtype) == "uint64" and tuple(var._static_shape) == (6,)


def _generator_method(name):
    def get(var):
        if not _is_generator_value(var):
            raise AttributeError(f"{type(var).__name__!r} object has no attribute {name!r}")
        return _method(var, name)

    get.__doc__ = f"``{name}`` drawn from this generator: returns ``(next_rng, draw)``."
    return property(get)


def _install_methods():
    """The method API on every generator value, as PyTensor's ``RandomGeneratorVariable``:
    ``next_rng.uniform(...)`` draws from the generator a previous draw returned. Non-generator
    variables answer ``AttributeError`` for these names."""
    from oxtensor.tensor.random import basic

    for name in basic.__all__:
        if not hasattr(_core.TensorVariable, name):
            setattr(_core.TensorVariable, name, _generator_method(name))


_install_methods()
