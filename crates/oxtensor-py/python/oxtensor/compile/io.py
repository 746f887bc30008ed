"""Input and output specifications of ``function`` (PyTensor's ``In`` and ``Out``)."""

from __future__ import annotations

__all__ = ["In", "Out"]


class In:
    """An input with options: ``In(y, value=1)`` gives ``y`` a default value, and
    ``In(w, value=2, name="w_by_name")`` also a keyword name.

    ``update``, ``mutable`` and ``borrow`` are accepted for compatibility; an ``update`` on an
    input is not supported (use a shared variable and ``updates=``).
    """

    def __init__(
        self,
        variable,
        name=None,
        value=None,
        update=None,
        mutable=None,
        strict=False,
        allow_downcast=None,
        autoname=True,
        implicit=None,
        borrow=None,
        shared=False,
    ):
        if update is not None:
            raise NotImplementedError(
                "In(update=...) is not supported; use a shared variable with updates="
            )
        self.variable = variable
        self.name = name if name is not None else (variable.name if autoname else None)
        self.value = value
        self.mutable = bool(mutable)
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.borrow = borrow

    def __repr__(self):
        return f"In({self.variable!r}, name={self.name!r}, value={self.value!r})"


class Out:
    """An output with options (``borrow`` is accepted; outputs are always fresh arrays)."""

    def __init__(self, variable, borrow=False):
        self.variable = variable
        self.borrow = borrow

    def __repr__(self):
        return f"Out({self.variable!r})"
