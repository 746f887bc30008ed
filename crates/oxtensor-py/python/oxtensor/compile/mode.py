"""Compilation modes (PyTensor's ``Mode``): which rewrites run on a function's graph (the
optimizer) and which backend runs it (the linker).

``Mode(linker=None, optimizer="fast_run")``, the predefined ``FAST_RUN`` (default) and
``FAST_COMPILE``, and ``mode.including(*tags)`` / ``excluding`` / ``requiring`` to adjust the
rewrites by tag (``get_mode("FAST_RUN").excluding("fusion")``). PyTensor's C linker names
(``"cvm"``, ``"c"``, ``"c|py"``) give the native backend, its Python ones (``"py"``, ``"vm"``)
the interpreter; ``"native:TARGET"`` compiles the native code for another CPU than this one
(a GCC ``-march`` name: ``Mode(linker="native:x86-64-v3")`` runs, on an AVX-512 machine, the
code AVX2-only machines get).
"""

from __future__ import annotations

from oxtensor import _core

__all__ = ["Mode", "get_mode", "FAST_RUN", "FAST_COMPILE", "JAX", "PYTORCH", "PYTORCH_COMPILED", "predefined_modes"]

#: Modes that translate the graph for another engine (``oxtensor.link``) rather than name a
#: rewrite database of the Rust side.
ENGINE_MODES = ("JAX", "PYTORCH", "PYTORCH_COMPILED")


class Mode:
    """A compilation mode: ``Mode(linker=None, optimizer="fast_run")``."""

    def __init__(self, linker=None, optimizer="default", db=None, *, name=None):
        if name is not None and name not in ENGINE_MODES and not _core.mode_exists(name):
            raise ValueError(
                f"unknown mode {name!r}; use 'FAST_RUN', 'FAST_COMPILE', 'JAX', 'PYTORCH' or 'PYTORCH_COMPILED'"
            )
        self.name = name
        self.linker = None if linker is None else str(linker)
        self.optimizer = None if optimizer is None else str(optimizer)
        self.included: tuple[str, ...] = ()
        self.excluded: tuple[str, ...] = ()
        self.required: tuple[str, ...] = ()

    def _spec(self):
        """What the Rust side needs to build this mode."""
        return (
            self.name,
            self.linker,
            self.optimizer,
            list(self.included),
            list(self.excluded),
            list(self.required),
        )

    def _copy(self, included=(), excluded=(), required=()):
        m = Mode.__new__(Mode)
        m.__dict__.update(self.__dict__)
        m.included = self.included + tuple(included)
        m.excluded = self.excluded + tuple(excluded)
        m.required = self.required + tuple(required)
        return m

    def including(self, *tags):
        """The same mode also running the rewrites with any of these tags."""
        return self._copy(included=tags)

    def excluding(self, *tags):
        """The same mode without the rewrites that have any of these tags."""
        return self._copy(excluded=tags)

    def requiring(self, *tags):
        """The same mode keeping only the rewrites that have all of these tags."""
        return self._copy(required=tags)

    def __eq__(self, other):
        return isinstance(other, Mode) and self._spec() == other._spec()

    def __hash__(self):
        return hash(repr(self._spec()))

    def __repr__(self):
        if self.name is not None:
            base = f"Mode({self.name!r})"
        else:
            base = f"Mode(linker={self.linker!r}, optimizer={self.optimizer!r})"
        for what, tags in (("including", self.included), ("excluding", self.excluded), ("requiring", self.required)):
            if tags:
                base += f".{what}{tags!r}"
        return base


FAST_RUN = Mode(name="FAST_RUN")
FAST_COMPILE = Mode(name="FAST_COMPILE")
#: The graph translated to one jitted JAX function (``oxtensor.link.jax``); rewritten with
#: FAST_RUN's passes but ``fusion`` and ``scan_last_only``.
JAX = Mode(name="JAX")
#: The graph translated to eager torch calls (``oxtensor.link.pytorch``), rewritten as for JAX;
#: ``PYTORCH_COMPILED`` runs the same function through ``torch.compile``.
PYTORCH = Mode(name="PYTORCH")
PYTORCH_COMPILED = Mode(name="PYTORCH_COMPILED")
predefined_modes = {
    "FAST_RUN": FAST_RUN, "FAST_COMPILE": FAST_COMPILE, "JAX": JAX,
    "PYTORCH": PYTORCH, "PYTORCH_COMPILED": PYTORCH_COMPILED,
}


def get_mode(mode) -> Mode:
    """A ``Mode`` from ``None`` (``config.mode``), a name, or a ``Mode``."""
    if mode is None:
        from oxtensor.configdefaults import config

        mode = config.mode
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, str):
        if mode in predefined_modes:
            return predefined_modes[mode]
        return Mode(name=mode)
    raise TypeError(f"mode must be None, a string or a Mode, got {mode!r}")
