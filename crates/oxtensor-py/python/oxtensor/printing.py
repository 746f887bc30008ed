"""Printing graphs: ``debugprint`` (``dprint``) in PyTensor's format."""

from __future__ import annotations

import sys

from oxtensor import _core

__all__ = ["debugprint", "dprint", "pp"]


def _text(obj, print_type, depth):
    if isinstance(obj, _core.Function):
        return obj._dprint(print_type, depth)
    if isinstance(obj, _core.TensorVariable):
        return _core.debugprint([obj], print_type, depth)
    if isinstance(obj, (list, tuple)):
        parts, run = [], []
        for item in obj:
            if isinstance(item, _core.TensorVariable):
                run.append(item)
                continue
            if run:
                parts.append(_core.debugprint(run, print_type, depth))
                run = []
            parts.append(_text(item, print_type, depth))
        if run:
            parts.append(_core.debugprint(run, print_type, depth))
        return "".join(parts)
    raise TypeError(f"debugprint cannot print {obj!r}")


def debugprint(
    graph_like,
    depth=-1,
    print_type=False,
    file=None,
    id_type="CHAR",
    stop_on_name=False,
    done=None,
    print_storage=False,
    used_ids=None,
    print_op_info=False,
    print_destroy_map=False,
    print_view_map=False,
    print_fgraph_inputs=False,
):
    """Prints a variable, a list of them, or a compiled function as a tree, one line per
    node labelled ``[id A]``; a node used twice is expanded once.

    ``file=None`` prints to ``sys.stdout`` and returns it; ``file="str"`` returns the text;
    any other ``file`` is written to and returned. ``print_type=True`` adds each variable's
    type; ``depth`` limits the levels shown (``-1``: all).
    """
    text = _text(graph_like, bool(print_type), None if depth is None or depth < 0 else depth)
    if file == "str":
        return text
    out = sys.stdout if file is None else file
    out.write(text)
    if hasattr(out, "flush"):
        out.flush()
    return out


dprint = debugprint


def pp(var) -> str:
    """A one-line rendering of a variable (its name or ``Op.index``)."""
    return str(var)
